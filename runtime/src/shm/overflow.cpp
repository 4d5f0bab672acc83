// shm/overflow.cpp - Making, mapping and letting go of overflow buffers
// (shm/overflow.hpp).
#include "shm/overflow.hpp"

#include <cg/serialize.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

#include "shm/channel_layout.hpp"
#include "shm/shm.hpp"

namespace cg::detail {

// A writer's mapping and descriptor, held by the writer and by each reader of
// its process that reads from it; the last to let go unmaps and closes them.
struct OverflowShare {
  std::byte* data = nullptr;
  std::size_t mapped = 0;
  int fd = -1;
  std::uint64_t generation = 0;
  std::uint32_t holders = 1; // under shares_mutex
};

namespace {

// The buffers this process's writers hold, by descriptor and generation: a
// descriptor stays open while its share is held, so the pair names one buffer.
std::mutex shares_mutex;
std::vector<OverflowShare*> shares; // the writers' own, until they retire them

// Drops one holder of `share` (the writer retiring it: no reader finds it
// from then on); the last one unmaps and closes the buffer.
void let_go(OverflowShare* share, bool writer) noexcept {
  bool last = false;
  {
    std::lock_guard lock(shares_mutex);
    if (writer)
      shares.erase(std::remove(shares.begin(), shares.end(), share), shares.end());
    last = --share->holders == 0;
  }
  if (!last)
    return;
  ::munmap(share->data, share->mapped);
  ::close(share->fd);
  delete share;
}

std::size_t page_bytes() noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

std::atomic<std::uint32_t>& releasable_flag(const std::byte* mapping) noexcept {
  return const_cast<OverflowHeader*>(reinterpret_cast<const OverflowHeader*>(mapping))->releasable;
}

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
  // A copy inherited over fork() is this process's own mapping: the share
  // (and its lock) are the parent's.
  if (b.share != nullptr && b.owner == ::getpid()) {
    let_go(b.share, true);
  } else {
    if (b.data != nullptr)
      ::munmap(b.data, b.mapped);
    if (b.fd >= 0)
      ::close(b.fd);
  }
  b = OverflowBuffer{};
}

void unmap_overflow(OverflowMapping& m) noexcept {
  if (m.share != nullptr)
    let_go(m.share, false);
  else if (m.data != nullptr)
    ::munmap(const_cast<std::byte*>(m.data), m.mapped);
  if (m.pages_fd >= 0)
    ::close(m.pages_fd);
  m = OverflowMapping{};
}

void keep_overflow_pages(OverflowBuffer& buffer, bool keep) noexcept {
  if (buffer.data != nullptr && buffer.owner == ::getpid())
    releasable_flag(buffer.data).store(keep ? 0 : 1, std::memory_order_release);
}

bool reserve_overflow_again(OverflowBuffer& buffer) noexcept {
  if (buffer.capacity < overflow_released_from)
    return true; // its readers never give its pages back
  const auto size = static_cast<off_t>(buffer.mapped);
  const off_t hole = ::lseek(buffer.fd, 0, SEEK_HOLE);
  if (hole < 0 || hole >= size)
    return true; // whole (or a kernel that cannot say: fallocate made it whole)
  if (buffer.mapped > shared_memory_room().bytes)
    return false;
  return ::fallocate(buffer.fd, 0, 0, size) == 0 || errno == EOPNOTSUPP;
}

void release_overflow_pages(const OverflowMapping& mapping, std::uint64_t bytes) noexcept {
  if (bytes < overflow_released_from || mapping.data == nullptr ||
      releasable_flag(mapping.data).load(std::memory_order_acquire) == 0) {
    return;
  }
  const int fd = mapping.share != nullptr ? mapping.share->fd : mapping.pages_fd;
  if (fd < 0)
    return;
  // The header's page stays: it names the buffer to the next reader.
  const std::size_t first = page_bytes();
  if (mapping.mapped <= first)
    return;
  (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first),
                    static_cast<off_t>(mapping.mapped - first));
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
  new (data) OverflowHeader{overflow_magic, generation, capacity, 1};
  out.fd = fd;
  out.data = static_cast<std::byte*>(data);
  out.mapped = static_cast<std::size_t>(total);
  out.capacity = capacity;
  out.generation = generation;
  out.owner = ::getpid();
  // Without memory for the share, readers of this process map it themselves.
  out.share = new (std::nothrow) OverflowShare{out.data, out.mapped, fd, generation};
  if (out.share != nullptr) {
    std::lock_guard lock(shares_mutex);
    try {
      shares.push_back(out.share);
    } catch (const std::bad_alloc&) {
      delete out.share;
      out.share = nullptr;
    }
  }
  return true;
}

namespace {

// The buffer a slot refers to as a writer of this process holds it, shared.
bool share_own_buffer(OverflowMapping& out, std::int32_t fd, std::uint64_t generation) noexcept {
  std::lock_guard lock(shares_mutex);
  for (OverflowShare* share : shares) {
    if (share->fd != fd || share->generation != generation)
      continue;
    ++share->holders;
    out.data = share->data;
    out.mapped = share->mapped;
    out.share = share;
    return true;
  }
  return false;
}

} // namespace

// Maps the buffer a slot refers to, read-only, after checking that it is one of
// ours with the generation the slot names.
ChannelStatus map_overflow_buffer(OverflowMapping& out, std::int32_t pid, std::int32_t fd,
                                  std::uint64_t generation) noexcept {
  if (pid <= 0 || fd < 0 || generation == 0)
    return ChannelStatus::corrupt;
  if (pid == ::getpid() && share_own_buffer(out, fd, generation)) {
    out.pid = pid;
    out.fd = fd;
    out.generation = generation;
    return ChannelStatus::ok;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), static_cast<int>(fd));
  // O_NONBLOCK: a corrupted reference naming a pipe must not block the open.
  // For writing where it may be (it is mapped read-only all the same): the
  // descriptor that punches a large buffer's pages out once read.
  int file = ::open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file < 0)
    file = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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
  const bool keep_file = data != MAP_FAILED && mapped >= overflow_released_from &&
                         (::fcntl(file, F_GETFL) & O_ACCMODE) == O_RDWR;
  if (!keep_file)
    ::close(file);
  if (data == MAP_FAILED)
    return ChannelStatus::unmappable;
  const auto* header = static_cast<const OverflowHeader*>(data);
  if (header->magic != overflow_magic || header->generation != generation ||
      header->capacity > mapped - overflow_payload_offset) {
    ::munmap(data, mapped);
    if (keep_file)
      ::close(file);
    return ChannelStatus::corrupt;
  }
  out.pages_fd = keep_file ? file : -1;
  out.data = static_cast<const std::byte*>(data);
  out.mapped = mapped;
  out.pid = pid;
  out.fd = fd;
  out.generation = generation;
  return ChannelStatus::ok;
}

} // namespace cg::detail
