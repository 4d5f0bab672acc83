// cg/shm.hpp — POSIX shared memory segments (shm_open + mmap) that hold channels.
//
// The driver creates one segment per graph instance and actor processes open it
// by name; after every process has mapped it the creator unlinks the name, so a
// crash cannot leak /dev/shm entries for longer than the start-up window. The
// mapping itself stays valid until every SharedSegment on it is destroyed.
#pragma once

#include <cstddef>
#include <string>

namespace cg {

// An owned mapping of a named shared memory segment. Movable, not copyable.
// Mappings are page aligned (so 64-byte aligned, as Channel::create requires).
class SharedSegment {
 public:
  SharedSegment() = default;
  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();  // munmaps; does NOT unlink the name

  // Creates a new segment of `bytes` bytes (zero-filled) with mode 0600 and maps
  // it read-write. `name` is a POSIX shm name ("/something"). Fails if the name
  // already exists (O_EXCL) or bytes == 0. Throws std::system_error whose
  // message contains the name; nothing is left behind on failure.
  static SharedSegment create(const std::string& name, std::size_t bytes);

  // Maps the whole of an existing segment read-write (its size from fstat).
  // Throws std::system_error whose message contains the name.
  static SharedSegment open(const std::string& name);

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& name() const noexcept { return name_; }

  // Removes the name so no one else can open it; idempotent, errors ignored
  // (e.g. another process already unlinked it). The mapping stays valid.
  void unlink() noexcept;

 private:
  void reset() noexcept;

  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::string name_;
  bool unlinked_ = false;
};

// "/cg.<pid>.<counter>.<random hex>": unique across processes (pid + random)
// and across calls in one process (counter).
std::string unique_segment_name();

}  // namespace cg
