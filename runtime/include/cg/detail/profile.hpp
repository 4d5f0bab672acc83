// cg/detail/profile.hpp - What a profiled graph records of each operation, and where.
//
// Launched with a profile (cg::LaunchOptions::profile, CG_PROFILE), every
// actor and the driver record each operation of each execution as one
// ProfileEvent: a READ (the wait and the copy), a COMPUTE, a WRITE; on the
// driver an execute() and a get(). Each keeps a ring of its own in the
// graph's segment (graph/segment.hpp), made at launch: recording is two
// clock reads, a few stores and one atomic add; no allocation, lock or
// system call. A full ring overwrites its oldest events and never blocks;
// what it wrote in all says how many were dropped. The clock is
// CLOCK_MONOTONIC, one clock for every process of a host.
//
// The driver turns the rings into a Chrome trace (graph/profile_trace.hpp)
// at teardown or when asked (write_profile()).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace cg::detail {

/// Which kind of operation an event times.
enum class ProfiledOp : std::uint16_t {
  read,    // an actor's or the driver's read of one channel: index = channel
  compute, // an actor's method or collective: index = its position among the
           // actor's COMPUTE operations (GraphSpec::names.computes)
  write,   // a write of one channel: index = channel
  execute, // the driver's execute(): from the start to the last input handed over
  get,     // the driver's get(): from the call to the decoded result
};

struct ProfileEvent {
  std::uint64_t execution; // 0-based, as the driver numbers them
  std::int64_t start_ns;   // CLOCK_MONOTONIC
  std::int64_t end_ns;
  std::uint64_t bytes; // read or written (READ, WRITE); 0 otherwise
  ProfiledOp op;
  std::uint16_t reserved;
  std::uint32_t index;
};
static_assert(sizeof(ProfileEvent) == 40);

/// The start of one ring in the segment; `capacity` events follow it.
struct alignas(64) ProfileRing {
  std::atomic<std::uint64_t> written; // events recorded so far, kept or not
  std::uint64_t capacity;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call: no system call).
inline std::int64_t profile_clock() noexcept {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

/// One participant's recording end of its ring; a default one records nothing.
class ProfileRecorder {
public:
  ProfileRecorder() = default;
  explicit ProfileRecorder(ProfileRing* ring) noexcept : ring_(ring) {}

  bool on() const noexcept { return ring_ != nullptr; }

  /// Records one event (the driver's ring has two writers: the caller of
  /// get() and the collector thread, hence the atomic add).
  void record(ProfiledOp op, std::uint32_t index, std::uint64_t execution, std::int64_t start_ns,
              std::int64_t end_ns, std::uint64_t bytes = 0) noexcept {
    const std::uint64_t n = ring_->written.fetch_add(1, std::memory_order_relaxed);
    ProfileEvent* events = reinterpret_cast<ProfileEvent*>(ring_ + 1);
    events[n % ring_->capacity] = {execution, start_ns, end_ns, bytes, op, 0, index};
  }

private:
  ProfileRing* ring_ = nullptr;
};

/// What an actor's ports record with: its ring, and where its program is.
struct ActorProfile {
  ProfileRecorder recorder;
  std::uint64_t execution = 0; // the one the program is running
  std::uint32_t computes = 0;  // COMPUTE operations done in it so far

  void record(ProfiledOp op, std::uint32_t index, std::int64_t start_ns,
              std::uint64_t bytes = 0) noexcept {
    recorder.record(op, index, execution, start_ns, profile_clock(), bytes);
  }
};

} // namespace cg::detail
