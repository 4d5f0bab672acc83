// memory_cgroup.hpp - runs a check in a child process inside a memory cgroup of its own.
//
// For what must hold where memory is limited (shm/shm.hpp, os/memory_room.hpp)
// without limiting the test process: the child is forked, joins a fresh
// cgroup (v1 memory controller, else v2) whose limit is `bytes`, runs
// `check` and exits with its result; the cgroup is removed after.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace cg_test {

/// In a forked child: `check()`'s int, or 100 + the signal that killed the
/// child. nullopt, with why in `unavailable`, when no memory cgroup can be
/// made or limited here (not root, or no memory controller).
template <class Check>
std::optional<int> in_memory_cgroup(std::size_t bytes, Check check, std::string& unavailable) {
  auto write_file = [](const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    if (fd >= 0)
      ::close(fd);
    return ok;
  };
  const std::string name = "cg-test-" + std::to_string(::getpid());
  std::string group = "/sys/fs/cgroup/memory/" + name, limit_file = "memory.limit_in_bytes";
  if (::mkdir(group.c_str(), 0700) != 0) {
    group = "/sys/fs/cgroup/" + name, limit_file = "memory.max";
    if (::access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0 ||
        ::mkdir(group.c_str(), 0700) != 0) {
      unavailable = std::string("no memory cgroup can be made here: ") + std::strerror(errno);
      return std::nullopt;
    }
  }
  std::optional<int> result;
  if (!write_file(group + "/" + limit_file, std::to_string(bytes))) {
    unavailable = "cannot limit " + group;
  } else if (const pid_t pid = ::fork(); pid == 0) {
    if (!write_file(group + "/cgroup.procs", std::to_string(::getpid())))
      ::_exit(99);
    ::_exit(check());
  } else {
    int status = 0;
    ::waitpid(pid, &status, 0);
    result = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  }
  ::rmdir(group.c_str());
  return result;
}

} // namespace cg_test
