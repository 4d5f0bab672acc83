// os/memory_room.cpp - MemAvailable and the memory cgroup's room, read from /proc and /sys.
#include "os/memory_room.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cg::detail {
namespace {

// The start of the small file at `path` (a /proc or /sys one), as a string
// in `text`; false if it cannot be read.
template <std::size_t N> bool read_text(const char* path, char (&text)[N]) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  const ssize_t n = ::read(fd, text, N - 1);
  ::close(fd);
  text[n > 0 ? n : 0] = '\0';
  return n > 0;
}

// The first number in the file at `path` after `key` (all of it when `key`
// is empty), times `unit`; false if there is none ("max" in a cgroup file).
bool number_in_file(const char* path, const char* key, std::uint64_t unit,
                    std::uint64_t& out) noexcept {
  char text[4096];
  if (!read_text(path, text))
    return false;
  const char* at = *key ? std::strstr(text, key) : text;
  if (!at)
    return false;
  at += std::strlen(key);
  while (*at == ' ' || *at == '\t')
    ++at;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(at, &end, 10);
  if (end == at || errno != 0 || value > std::numeric_limits<std::uint64_t>::max() / unit)
    return false;
  out = value * unit;
  return true;
}

// The room left by this process's memory cgroup (from /proc/self/cgroup:
// v1 "N:memory:<path>", limit_in_bytes less usage_in_bytes; else v2
// "0::<path>", memory.max less memory.current), or false when none limits it
// or it cannot be read. The usage counts the page cache; its inactive part
// (memory.stat) is given back when needed, so it is not counted, as
// MemAvailable does not count it and kubelet's working set does not.
bool cgroup_room(std::uint64_t& out) noexcept {
  char text[2048];
  if (!read_text("/proc/self/cgroup", text))
    return false;
  const char* v1 = std::strstr(text, ":memory:");
  const char* v2 = std::strncmp(text, "0::", 3) == 0 ? text : std::strstr(text, "\n0::");
  if (!v1 && !v2)
    return false;
  const char* at = v1 ? v1 + 8 : v2 + (*v2 == '\n' ? 4 : 3);
  const int length = static_cast<int>(std::strcspn(at, "\n"));
  char directory[1100], path[1200];
  std::snprintf(directory, sizeof directory, "/sys/fs/cgroup%s%.*s", v1 ? "/memory" : "", length,
                at);
  auto in_directory = [&](const char* file) {
    std::snprintf(path, sizeof path, "%s/%s", directory, file);
    return path;
  };
  std::uint64_t limit = 0, usage = 0, inactive_file = 0;
  if (!number_in_file(in_directory(v1 ? "memory.limit_in_bytes" : "memory.max"), "", 1, limit) ||
      !number_in_file(in_directory(v1 ? "memory.usage_in_bytes" : "memory.current"), "", 1, usage))
    return false; // v2's "max": no limit
  if (number_in_file(in_directory("memory.stat"), v1 ? "total_inactive_file " : "\ninactive_file ",
                     1, inactive_file))
    usage -= std::min(usage, inactive_file);
  out = limit > usage ? limit - usage : 0;
  return true;
}

} // namespace

MemoryRoom memory_room() noexcept {
  MemoryRoom room;
  std::uint64_t bytes = 0;
  if (number_in_file("/proc/meminfo", "MemAvailable:", 1024, bytes))
    room = {bytes, "the memory available (MemAvailable in /proc/meminfo)"};
  if (cgroup_room(bytes) && bytes < room.bytes)
    room = {bytes, "the limit of the process's memory cgroup"};
  return room;
}

} // namespace cg::detail
