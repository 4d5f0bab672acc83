// shm/overflow.cpp - Making, mapping and letting go of overflow buffers
// (shm/overflow.hpp).
#include "shm/overflow.hpp"

#include <cg/serialize.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <new>

#include "shm/channel_layout.hpp"
#include "shm/shm.hpp"

namespace cg::detail {

namespace {

// A reader's mapping of an overflow buffer, paged as a decoder copies a large
// value out of it: MADV_DONTNEED drops this process's page-table entries, not
// the memfd's pages, which a later read maps again with the same contents.
// That costs the next read page faults (a 64 MiB copy here: 7 ms warm, 12 ms
// paged; MADV_POPULATE_READ first does no better), which is why only readers
// that decode into fresh memory (the driver, for its caller) ask for it.
void let_go_of_overflow(const std::byte* first, std::size_t bytes) noexcept {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(first) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(first) + bytes) & ~(page - 1);
  if (end > begin)
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

} // namespace

const InputPaging overflow_paging{let_go_of_overflow};

void unmap_overflow(OverflowBuffer& b) noexcept {
  if (b.data != nullptr)
    ::munmap(b.data, b.mapped);
  if (b.fd >= 0)
    ::close(b.fd);
  b = OverflowBuffer{};
}

void unmap_overflow(OverflowMapping& m) noexcept {
  if (m.data != nullptr)
    ::munmap(const_cast<std::byte*>(m.data), m.mapped);
  m = OverflowMapping{};
}

// A new sealed, fully reserved buffer of `capacity` payload bytes; false (and
// nothing left behind) when the system refuses one.
bool make_overflow_buffer(OverflowBuffer& out, std::uint64_t capacity,
                          std::uint64_t generation) noexcept {
  std::uint64_t total = 0;
  if (__builtin_add_overflow(capacity, std::uint64_t{overflow_payload_offset}, &total) ||
      total > static_cast<std::uint64_t>(PTRDIFF_MAX)) {
    return false;
  }
  // Ask first: more than the system can give would raise SIGXFSZ or wake
  // the OOM killer, not fail (shm/shm.hpp).
  if (total > shared_memory_room().bytes)
    return false;
  const int fd = ::memfd_create("cg.overflow", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return false;
  const auto size = static_cast<off_t>(total);
  bool ready = ::ftruncate(fd, size) == 0;
  // fallocate reserves the pages now; EOPNOTSUPP: they come on first touch.
  ready = ready && (::fallocate(fd, 0, 0, size) == 0 || errno == EOPNOTSUPP);
  ready = ready && ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
  void* data = MAP_FAILED;
  if (ready) {
    data = ::mmap(nullptr, static_cast<std::size_t>(total), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  if (data == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  new (data) OverflowHeader{overflow_magic, generation, capacity};
  out.fd = fd;
  out.data = static_cast<std::byte*>(data);
  out.mapped = static_cast<std::size_t>(total);
  out.capacity = capacity;
  out.generation = generation;
  out.owner = ::getpid();
  return true;
}

// Maps the buffer a slot refers to, read-only, after checking that it is one of
// ours with the generation the slot names.
ChannelStatus map_overflow_buffer(OverflowMapping& out, std::int32_t pid, std::int32_t fd,
                                  std::uint64_t generation) noexcept {
  if (pid <= 0 || fd < 0 || generation == 0)
    return ChannelStatus::corrupt;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), static_cast<int>(fd));
  // O_NONBLOCK: a corrupted reference naming a pipe must not block the open.
  const int file = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file < 0)
    return ChannelStatus::unmappable;
  struct stat st {};
  const int seals = ::fcntl(file, F_GET_SEALS);
  if (::fstat(file, &st) != 0 || !S_ISREG(st.st_mode) || seals < 0 ||
      (seals & F_SEAL_SHRINK) == 0 ||
      static_cast<std::uint64_t>(st.st_size) < overflow_payload_offset) {
    ::close(file); // not a buffer of ours (or one that could shrink under us)
    return ChannelStatus::corrupt;
  }
  const auto mapped = static_cast<std::size_t>(st.st_size);
  void* data = ::mmap(nullptr, mapped, PROT_READ, MAP_SHARED | MAP_POPULATE, file, 0);
  ::close(file);
  if (data == MAP_FAILED)
    return ChannelStatus::unmappable;
  const auto* header = static_cast<const OverflowHeader*>(data);
  if (header->magic != overflow_magic || header->generation != generation ||
      header->capacity > mapped - overflow_payload_offset) {
    ::munmap(data, mapped);
    return ChannelStatus::corrupt;
  }
  out.data = static_cast<const std::byte*>(data);
  out.mapped = mapped;
  out.pid = pid;
  out.fd = fd;
  out.generation = generation;
  return ChannelStatus::ok;
}

} // namespace cg::detail
