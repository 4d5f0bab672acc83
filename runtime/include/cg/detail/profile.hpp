// cg/detail/profile.hpp - What a profiled graph records of each operation, and where.
//
// Launched with a profile (cg::LaunchOptions::profile, CG_PROFILE), every
// actor and the driver record each operation of each execution as one
// ProfileEvent: a READ (the wait and the copy), a COMPUTE, a WRITE; on the
// driver an execute() and a get(). Each keeps a ring of its own in the
// graph's segment (actor/segment.hpp), made at launch: recording is at most
// one clock read and a few plain stores; no allocation, lock, atomic
// read-modify-write or system call. Each ring has one writer: the driver
// keeps two, one for the thread that calls execute() and get() and one for
// its collector thread (which takes results for futures), and shows them as
// one track. An actor's operations follow one another, so
// each starts where the one before it ended (a READ's wait starts when the previous operation
// ended) and one clock read per operation times them all. A READ that found
// its message in its slot at the first look did not wait: it ends where it
// began, and takes no clock read at all (its copy, of at most a slot, counts
// toward what follows). A full ring overwrites its oldest events and never
// blocks; what it wrote in all says how many were dropped.
//
// Sampled (cg::LaunchOptions::profile_every, CG_PROFILE_EVERY = N), every
// participant records the operations of execution n only when n % N == 0
// (profile_records()): whole executions, the same ones everywhere, so a
// timeline of them is as coherent as a full one. An actor's first READ of a
// recorded execution waits from when the execution before it ended.
//
// The clock (profile_clock()) is the CPU's time-stamp counter on x86-64:
// invariant, common to every core and process of a machine, and ~10 ns to
// read where CLOCK_MONOTONIC takes ~30 (a pipelined chain records ten
// operations a microsecond). The driver turns ticks into CLOCK_MONOTONIC
// nanoseconds when it reads the rings, from a reading of both clocks at
// launch and another then (ProfileClocks). Elsewhere it is CLOCK_MONOTONIC.
//
// The driver turns the rings into a Chrome trace (actor/profile_trace.hpp)
// at teardown or when asked (write_profile()).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace cg::detail {

/// Which kind of operation an event times.
enum class ProfiledOp : std::uint16_t {
  read,    // an actor's or the driver's read of one channel: index = channel
  compute, // an actor's method or collective: index = its position among the
           // actor's COMPUTE operations (GraphSpec::names.computes)
  write,   // a write of one channel: index = channel
  execute, // the driver's execute(): from the start to the last input handed over
  get,     // the driver's get(): from the call to the decoded result
  // The device work of an actor's read or write of channel `index` on a
  // CUDA stream (a CUDA IPC copy, an NCCL receive or send), timed by CUDA
  // events (tensor/device_timer.hpp). Its start and end are CLOCK_MONOTONIC
  // nanoseconds from the first, not ticks: ticks_to_ns() leaves them.
  device_read,
  device_write,
};

/// Whether an event's times are already nanoseconds (see above).
constexpr bool timed_on_device(ProfiledOp op) noexcept {
  return op == ProfiledOp::device_read || op == ProfiledOp::device_write;
}

class DeviceTimer; // tensor/device_timer.hpp

struct ProfileEvent {
  std::uint64_t execution; // 0-based, as the driver numbers them
  std::int64_t start;      // profile_clock() ticks in a ring; CLOCK_MONOTONIC
  std::int64_t end;        // nanoseconds once read (ticks_to_ns())
  std::uint64_t bytes;     // read or written (READ, WRITE); 0 otherwise
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
inline std::int64_t monotonic_ns() noexcept {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

/// What profiles are timed with (see the top of this file).
inline std::int64_t profile_clock() noexcept {
#if defined(__x86_64__)
  return static_cast<std::int64_t>(__rdtsc());
#else
  return monotonic_ns();
#endif
}

/// Both clocks read together: two of them turn profile_clock() ticks
/// between them into CLOCK_MONOTONIC nanoseconds.
struct ProfileClocks {
  std::int64_t ticks = 0;
  std::int64_t ns = 0;
  static ProfileClocks now() noexcept { return {profile_clock(), monotonic_ns()}; }
};

/// One thread's recording end of its ring; a default one records nothing.
class ProfileRecorder {
public:
  ProfileRecorder() = default;
  explicit ProfileRecorder(ProfileRing* ring) noexcept
      : ring_(ring), events_(ring ? reinterpret_cast<ProfileEvent*>(ring + 1) : nullptr),
        capacity_(ring ? ring->capacity : 0),
        written_(ring ? ring->written.load(std::memory_order_relaxed) : 0),
        slot_(capacity_ ? written_ % capacity_ : 0) {}

  bool on() const noexcept { return ring_ != nullptr; }

  /// Records one event. The ring has this one writer, which keeps its place
  /// here (no division, no read of the shared count) and publishes the
  /// count with a plain store for whoever reads the ring.
  void record(ProfiledOp op, std::uint32_t index, std::uint64_t execution, std::int64_t start,
              std::int64_t end, std::uint64_t bytes = 0) noexcept {
    events_[slot_] = {execution, start, end, bytes, op, 0, index};
    if (++slot_ == capacity_)
      slot_ = 0;
    ring_->written.store(++written_, std::memory_order_release);
  }

private:
  ProfileRing* ring_ = nullptr;
  ProfileEvent* events_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t written_ = 0; // the count it published last
  std::uint64_t slot_ = 0;    // where its next event goes
};

/// Whether a profile that records one execution in `every` records
/// execution `execution` (0-based, as the driver numbers them).
constexpr bool profile_records(std::uint64_t execution, std::uint32_t every) noexcept {
  return every <= 1 || execution % every == 0;
}

/// What an actor's ports record with: its ring, and where its program is.
struct ActorProfile {
  ProfileRecorder recorder;
  DeviceTimer* device = nullptr; // times the ports' work on CUDA streams; null: none
  std::uint64_t execution = 0;   // the one the program is running
  std::uint32_t computes = 0;    // COMPUTE operations done in it so far
  std::int64_t last = 0;         // when its last operation ended (or it became ready)
  std::uint32_t every = 1;       // it records one execution in `every` (profile_records())
  bool recording = true;         // whether it records `execution`

  /// A COMPUTE (a method or a collective) that ends now.
  void computed() noexcept { record(ProfiledOp::compute, computes++); }

  /// An operation that ends now and began when the one before it ended.
  void record(ProfiledOp op, std::uint32_t index, std::uint64_t bytes = 0) noexcept {
    if (!recording)
      return;
    const std::int64_t now = profile_clock();
    recorder.record(op, index, execution, last, now, bytes);
    last = now;
  }

  /// A READ whose message was there at the first look: it ends where it
  /// began, when the operation before it ended, so no clock is read.
  void read_without_wait(std::uint32_t channel, std::uint64_t bytes) noexcept {
    if (recording)
      recorder.record(ProfiledOp::read, channel, execution, last, last, bytes);
  }

  /// The execution ended; the next one begins. Sampled, a recorded one
  /// after one that was not starts its first READ's wait now.
  void next_execution() noexcept {
    ++execution;
    computes = 0;
    if (every <= 1)
      return;
    const bool was = recording;
    recording = profile_records(execution, every);
    if (recording && !was)
      last = profile_clock();
  }
};

} // namespace cg::detail
