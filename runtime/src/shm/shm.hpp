// shm/shm.hpp - shared memory segments (mmap'd files) that hold channels.
//
//   cg::SharedSegment graph = cg::SharedSegment::create_anonymous(bytes);
//   spawn(actor, {"fd:" + std::to_string(graph.fd())}, ..., /*inherit=*/{graph.fd()});
//   // in the actor: cg::SharedSegment::adopt(fd) maps it
//   graph.unlink();  // once every actor has mapped it: closes our descriptor
//
// The driver creates one segment per graph instance. Anonymous segments
// (memfd) are what the runtime uses: they have no name in /dev/shm, so nothing
// can leak whoever is killed when; the kernel frees the memory with the last
// descriptor or mapping. Named POSIX segments (shm_open) remain for tools and
// tests: after every process has mapped one, the creator unlinks the name.
// Either way the mapping stays valid until every SharedSegment on it is destroyed.
#pragma once

#include "os/memory_room.hpp"

#include <cstddef>
#include <string>

namespace cg {

// What a new anonymous segment or overflow buffer may reserve now: a memfd's
// pages are reserved up front (fallocate), and more than the system has would
// wake the OOM killer rather than fail (os/memory_room.hpp). The least of
// memory_room() and RLIMIT_FSIZE (a file grown past it raises SIGXFSZ).
using SharedMemoryRoom = detail::MemoryRoom;
SharedMemoryRoom shared_memory_room() noexcept;

// An owned mapping of a named shared memory segment. Movable, not copyable.
// Mappings are page aligned (so 64-byte aligned, as Channel::create requires).
class SharedSegment {
public:
  SharedSegment() = default;
  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment(); // munmaps and closes its descriptor; does NOT unlink a name

  // Creates a new segment of `bytes` bytes (zero-filled) with mode 0600 and maps
  // it read-write. `name` is a POSIX shm name ("/something"). Fails if the name
  // already exists (O_EXCL) or bytes == 0. Throws std::system_error whose
  // message contains the name; nothing is left behind on failure.
  static SharedSegment create(const std::string& name, std::size_t bytes);

  // Maps the whole of an existing segment read-write (its size from fstat).
  // Throws std::system_error whose message contains the name.
  static SharedSegment open(const std::string& name);

  // Creates an anonymous segment (memfd_create, close-on-exec) of `bytes` bytes
  // (zero-filled, space reserved up front) and maps it read-write. Others map
  // it through fd(): inherited by a child (see ChildProcess::spawn) or opened
  // as /proc/<pid>/fd/<fd>. name() is "memfd:" + `debug_name`. Throws
  // std::system_error naming it, ENOMEM (nothing reserved) when `bytes` exceed
  // shared_memory_room().
  static SharedSegment create_anonymous(const std::string& debug_name, std::size_t bytes);

  // Maps the whole of the segment behind an open descriptor read-write (e.g.
  // one inherited across exec) and closes the descriptor, even on failure.
  // Throws std::system_error naming the descriptor.
  static SharedSegment adopt(int fd);

  // The descriptor of an anonymous segment until unlink(); -1 for the others.
  int fd() const noexcept { return fd_; }

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& name() const noexcept { return name_; }

  // Makes the segment unreachable for anyone not attached yet: removes the
  // name (named), or closes the descriptor (anonymous). Idempotent, errors
  // ignored (e.g. another process already unlinked it). The mapping stays valid.
  void unlink() noexcept;

private:
  void reset() noexcept;

  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::string name_;
  int fd_ = -1; // anonymous segments only
  bool unlinked_ = false;
};

// "/cg.<pid>.<counter>.<random hex>": unique across processes (pid + random)
// and across calls in one process (counter).
std::string unique_segment_name();

} // namespace cg
