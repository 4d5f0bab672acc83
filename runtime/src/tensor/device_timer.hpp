// tensor/device_timer.hpp - the device work of an actor's reads and writes,
// timed by CUDA events for its profile (internal).
//
// A port whose transport runs on a CUDA stream (a CUDA IPC copy, an NCCL
// receive or send) records an event on that stream before its work and one
// after. Once both have completed, the time between them goes into the
// actor's profile ring as a DEVICE_READ or DEVICE_WRITE (cg/detail/profile.hpp),
// which the trace shows on a GPU track beside the actor's. The host's READ
// and WRITE say when the actor asked; these say when the GPU did it. With
// overlap a CUDA IPC reader's copy runs after its READ has returned: only
// these events say when.
//
// GPU time on the host's clock: an anchor event is recorded on a stream of
// the timer's own (idle, so it completes at once) and waited for, and
// CLOCK_MONOTONIC read then; an event's time is the anchor's plus
// cudaEventElapsedTime from it (whose resolution CUDA gives as about half a
// microsecond). The anchor is renewed
// when it is a second old and nothing is pending, so that the float
// milliseconds stay precise. Device events therefore hold CLOCK_MONOTONIC
// nanoseconds, not time-stamp-counter ticks.
//
// Nothing here waits for the GPU but the anchor's own event: finished work is
// collected as the next work begins, and when the timer goes (for at most
// 100 ms more: an NCCL stream whose peer died never finishes). A CUDA call
// that fails stops the timing, said once on stderr; the graph goes on.
//
// Only the actor's thread uses a timer (as it does its ring).
#pragma once

#include <cg/detail/profile.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace cg::detail {

class DeviceTimer {
public:
  /// Times work on streams of cuda:`device` (this process's ordinal) into
  /// `profile`'s ring, for actor `actor` (named in a failure's message).
  DeviceTimer(ActorProfile& profile, std::string actor, int device) noexcept;
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  /// What a port's device work was: a read (ProfiledOp::device_read) or
  /// write (device_write) of `channel`, moving `bytes`.
  struct Work {
    ProfiledOp op;
    std::uint32_t channel;
    std::uint64_t bytes;
  };

  /// Where a piece of work is timed from: where its stream reaches it, or,
  /// for work its stream orders after the legacy default stream (an NCCL
  /// communicator's: cg/nccl_communicator.hpp), once the stream has waited
  /// for that, so that the producing kernels are not counted in.
  enum class Start { as_queued, after_legacy_stream };
  /// Before the port queues its work on `stream` (a cudaStream_t).
  void begin(void* stream, Start start = Start::as_queued) noexcept;
  /// After: the work queued since begin() on `stream` was `work`.
  void end(void* stream, const Work& work) noexcept;
  /// Instead of end(): nothing was queued after all (it threw).
  void cancel() noexcept;
  /// Records the work that has finished, oldest first, into the ring.
  void collect() noexcept;

private:
  struct Pending {
    void* start; // cudaEvent_t
    void* end;
    Work work;
    std::uint64_t execution;
  };
  bool anchored() noexcept;
  void* event() noexcept; // from the free list, or a new one; null on failure
  void give_back(void* event) noexcept;
  void stop(const char* call, int error) noexcept;

  ActorProfile& profile_;
  std::string actor_;
  int device_;
  bool stopped_ = false;
  void* anchor_stream_ = nullptr; // cudaStream_t of our own
  void* anchor_ = nullptr;        // cudaEvent_t
  std::int64_t anchor_ns_ = 0;    // CLOCK_MONOTONIC when it completed
  void* open_ = nullptr;          // begin()'s event, until end()
  std::deque<Pending> pending_;
  std::vector<void*> free_;
};

/// A port's device work to time, and whose timer times it (null: nobody's,
/// the launch is not profiled).
struct TimedWork {
  DeviceTimer* timer = nullptr;
  DeviceTimer::Work work{};
};

/// One piece of device work on `stream`, timed from construction to
/// queued(); forgotten when queued() never comes (queueing it threw).
class TimedSpan {
public:
  /// A null `stream` (a communicator that runs on none) times nothing.
  TimedSpan(const TimedWork& timed, void* stream,
            DeviceTimer::Start start = DeviceTimer::Start::as_queued) noexcept
      : timer_(stream != nullptr ? timed.timer : nullptr), work_(timed.work), stream_(stream) {
    if (timer_ != nullptr)
      timer_->begin(stream_, start);
  }
  ~TimedSpan() {
    if (timer_ != nullptr)
      timer_->cancel();
  }
  TimedSpan(const TimedSpan&) = delete;
  TimedSpan& operator=(const TimedSpan&) = delete;

  /// The work is queued on the stream.
  void queued() noexcept {
    if (timer_ != nullptr)
      timer_->end(stream_, work_);
    timer_ = nullptr;
  }

private:
  DeviceTimer* timer_;
  DeviceTimer::Work work_;
  void* stream_;
};

} // namespace cg::detail
