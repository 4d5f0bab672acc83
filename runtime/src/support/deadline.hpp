// support/deadline.hpp - Deadlines from timeouts, for every room of the runtime.
//
// Timeouts come from users (LaunchOptions, communicator options, rendezvous
// messages) and may be huge; adding them to now() must not overflow into the
// past, so a deadline saturates at time_point::max() (wait forever).
#pragma once

#include <chrono>

namespace cg::detail {

using Clock = std::chrono::steady_clock;

/// now() + timeout, saturating at Clock::time_point::max(); a negative
/// timeout is now().
inline Clock::time_point deadline_after(std::chrono::milliseconds timeout) noexcept {
  const auto now = Clock::now();
  if (timeout.count() < 0)
    return now;
  if (timeout >=
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now))
    return Clock::time_point::max();
  return now + timeout;
}

/// deadline_after(timeout), but a timeout of zero or less is
/// time_point::min(): look once, never wait (cg/detail/channel.hpp's
/// Deadline::min()).
inline Clock::time_point deadline_or_look_once(std::chrono::milliseconds timeout) noexcept {
  return timeout <= std::chrono::milliseconds::zero() ? Clock::time_point::min()
                                                      : deadline_after(timeout);
}

} // namespace cg::detail
