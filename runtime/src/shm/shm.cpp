// shm.cpp - shared memory segments: anonymous (memfd) or named (shm_open), map, unlink.
//
// A named segment's descriptor is closed right after mmap: the mapping keeps
// the memory alive on its own. An anonymous segment keeps its descriptor
// (close-on-exec, so children inherit it only when asked) until unlink(), as
// it is the only way for another process to reach the memory.
#include "shm/shm.hpp"

#include "os/memory_room.hpp"
#include "support/text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <system_error>
#include <utility>

namespace cg {
namespace {

[[noreturn]] void throw_errno(int error, const std::string& what, const std::string& name) {
  throw std::system_error(error, std::generic_category(), "cg: " + what + " '" + name + "'");
}

// Closes a descriptor on scope exit, preserving errno for the error path.
struct FdGuard {
  int fd;
  ~FdGuard() {
    const int saved = errno;
    ::close(fd);
    errno = saved;
  }
};

void* map_shared(int fd, std::size_t bytes) noexcept {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

} // namespace

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      name_(std::move(other.name_)), fd_(std::exchange(other.fd_, -1)),
      unlinked_(std::exchange(other.unlinked_, false)) {
  other.name_.clear();
}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    name_ = std::move(other.name_);
    other.name_.clear();
    fd_ = std::exchange(other.fd_, -1);
    unlinked_ = std::exchange(other.unlinked_, false);
  }
  return *this;
}

SharedSegment::~SharedSegment() { reset(); }

void SharedSegment::reset() noexcept {
  if (data_ != nullptr)
    ::munmap(data_, size_);
  if (fd_ >= 0)
    ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

SharedSegment SharedSegment::create(const std::string& name, std::size_t bytes) {
  if (bytes == 0)
    throw_errno(EINVAL, "cannot create an empty shared memory segment", name);
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    throw_errno(errno, "shm_open(O_CREAT|O_EXCL) failed for", name);
  FdGuard guard{fd};

  int error = 0;
  void* data = nullptr;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    error = errno;
  } else if ((data = map_shared(fd, bytes)) == nullptr) {
    error = errno;
  }
  if (error != 0) {
    ::shm_unlink(name.c_str()); // we created the name: do not leave it behind
    throw_errno(error, "cannot size or map shared memory segment", name);
  }

  SharedSegment segment;
  segment.data_ = data;
  segment.size_ = bytes;
  segment.name_ = name;
  return segment;
}

SharedSegment SharedSegment::open(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    throw_errno(errno, "shm_open failed for", name);
  SharedSegment segment = adopt(fd); // maps the whole segment, closes the fd
  segment.name_ = name;
  segment.unlinked_ = false;
  return segment;
}

SharedMemoryRoom shared_memory_room() noexcept {
  SharedMemoryRoom room = detail::memory_room();
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < room.bytes)
    room = {limit.rlim_cur, "RLIMIT_FSIZE"};
  return room;
}

SharedSegment SharedSegment::create_anonymous(const std::string& debug_name, std::size_t bytes) {
  const std::string name = "memfd:" + debug_name;
  if (bytes == 0)
    throw_errno(EINVAL, "cannot create an empty shared memory segment", name);
  if (const SharedMemoryRoom room = shared_memory_room(); bytes > room.bytes) {
    throw std::system_error(
        ENOMEM, std::generic_category(),
        "cg: cannot reserve " + detail::size_text(bytes) + " of shared memory for '" + name +
            "': " + detail::size_text(room.bytes) + " is what " + room.bound + " leaves");
  }
  const int fd = ::memfd_create(debug_name.c_str(), MFD_CLOEXEC);
  if (fd < 0)
    throw_errno(errno, "memfd_create failed for", name);

  int error = 0;
  void* data = nullptr;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    error = errno;
  } else if (::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0 && errno != EOPNOTSUPP) {
    error = errno; // no memory for it: say so now, not with a SIGBUS later
  } else if ((data = map_shared(fd, bytes)) == nullptr) {
    error = errno;
  }
  if (error != 0) {
    ::close(fd);
    throw_errno(error, "cannot size or map shared memory segment", name);
  }

  SharedSegment segment;
  segment.data_ = data;
  segment.size_ = bytes;
  segment.name_ = name;
  segment.fd_ = fd;
  return segment;
}

SharedSegment SharedSegment::adopt(int fd) {
  const std::string name = "fd " + std::to_string(fd);
  if (fd < 0)
    throw_errno(EBADF, "cannot map shared memory segment", name);
  FdGuard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw_errno(errno, "fstat failed for shared memory segment", name);
  if (st.st_size <= 0)
    throw_errno(EINVAL, "empty shared memory segment", name);
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* data = map_shared(fd, bytes);
  if (data == nullptr)
    throw_errno(errno, "mmap failed for shared memory segment", name);

  SharedSegment segment;
  segment.data_ = data;
  segment.size_ = bytes;
  segment.name_ = name;
  segment.unlinked_ = true; // nothing to unlink: it was never ours to name
  return segment;
}

void SharedSegment::unlink() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    unlinked_ = true;
    return;
  }
  if (unlinked_ || name_.empty())
    return;
  unlinked_ = true;
  ::shm_unlink(name_.c_str());
}

std::string unique_segment_name() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t random = 0;
  if (::getrandom(&random, sizeof random, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof random)) {
    // No entropy available yet: pid + counter already make the name unique; the
    // clock only guards against a recycled pid racing a stale name.
    random =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "/cg.%ld.%llu.%016llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1, std::memory_order_relaxed)),
                static_cast<unsigned long long>(random));
  return buffer;
}

} // namespace cg
