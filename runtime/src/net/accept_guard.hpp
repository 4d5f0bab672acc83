// net/accept_guard.hpp - what keeps a listener of a launch serving under a flood of strangers.
//
// The channel listener (net/tcp_setup.hpp) and the rendezvous
// (net/rendezvous.hpp) accept connections from anyone and authenticate them
// afterwards, so anyone can open connections to them. Three policies, one
// home for both, keep strangers from crowding out the peers they wait for:
//
//   - connection_to_shed(): how many connections may be authenticating at once,
//     in all and from one address. At a bound the OLDEST of them is shed (one
//     that had time to speak and has not), never the newcomer, which may be the
//     very peer awaited. A connection younger than the grace period is not
//     shed (a burst of honest peers connecting at once), unless the hard bound
//     is reached.
//   - AcceptBackoff: accept() failing for want of descriptors (EMFILE, ENFILE)
//     or kernel memory pauses the listener for a moment instead of polling it
//     again at once (which would spin: the connection stays in the backlog, so
//     the listener stays readable). Once a descriptor frees, the waiting
//     connection is taken and challenged.
//   - RejectionLog: connections turned away are counted, not kept. The first
//     few of an interval are said one by one; the rest once per interval, as a
//     count by reason and address. Memory and log stay bounded however many
//     strangers come.
//
//   detail::AcceptBackoff backoff;
//   detail::RejectionLog log;
//   // poll the listener unless backoff.paused(now); then:
//   for (int fd; (fd = backoff.accept(listener)) >= 0;) {
//     if (auto shed = detail::connection_to_shed(pending, address_of(fd), limits, now))
//       drop(*shed);  // the oldest silent one
//     ...
//   }
//   if (log.add(address, reason, "connection from " + peer + ": " + reason, now)) say(it);
//   if (auto summary = log.summary(now)) say(*summary);  // at most once per interval
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cg::detail {

using GuardClock = std::chrono::steady_clock;

// Bounds on the connections authenticating at once.
struct PendingLimits {
  std::size_t total = 0;                 // in all, before the oldest is shed
  std::size_t per_address = 0;           // from one address, before its oldest is shed
  std::size_t hard_total = 0;            // in all, shedding even connections within their grace
  std::chrono::milliseconds grace{1000}; // a connection this young has not had time to speak
};

// One connection being authenticated: where from, and since when.
struct PendingConnection {
  std::string_view address; // the peer's host, without the port
  GuardClock::time_point since;
};

// Which of `pending` (oldest first) to shed before a newcomer from `address`
// joins them: the oldest from that address once it has per_address, else the
// oldest of all once there are `total`; nullopt when the newcomer fits, or
// when the one to shed is within its grace and hard_total is not reached (the
// newcomer then joins over the bound).
std::optional<std::size_t> connection_to_shed(std::span<const PendingConnection> pending,
                                              std::string_view address, const PendingLimits& limits,
                                              GuardClock::time_point now);

// accept() that pauses the listener when the process is out of descriptors.
class AcceptBackoff {
public:
  explicit AcceptBackoff(std::chrono::milliseconds pause = std::chrono::milliseconds(50))
      : pause_(pause) {}
  // A connection accepted from `listener` (non-blocking, close-on-exec), or -1:
  // none waits, the listener is paused, or accept() failed for want of
  // descriptors or memory (the listener is then paused for the pause).
  int accept(int listener) noexcept;
  bool paused(GuardClock::time_point now) const noexcept { return now < resume_at_; }
  // When a paused listener may be polled again (time_point::min() if it is not paused).
  GuardClock::time_point resume_at() const noexcept { return resume_at_; }
  // How often accept() found no descriptor or memory, and the last errno that said so.
  std::uint64_t exhaustions() const noexcept { return exhaustions_; }
  int last_error() const noexcept { return last_error_; }

private:
  std::chrono::milliseconds pause_;
  GuardClock::time_point resume_at_ = GuardClock::time_point::min();
  std::uint64_t exhaustions_ = 0;
  int last_error_ = 0;
};

// Connections turned away, said a few at a time and counted beyond.
class RejectionLog {
public:
  struct Limits {
    std::size_t said_per_interval = 5; // said one by one, each interval
    std::chrono::milliseconds interval{1000};
    std::size_t kept = 64;       // said ones kept word for word (rejections())
    std::size_t reasons = 8;     // distinct reasons counted; the rest are "other"
    std::size_t addresses = 256; // distinct addresses counted
  };
  RejectionLog() : RejectionLog(Limits{}) {}
  explicit RejectionLog(Limits limits) : limits_(limits) {}

  // Records a connection from `address` (host, no port) turned away for
  // `reason`; `what` says it whole ("connection from 10.0.0.9:51234:
  // authentication failed"). True when `what` is to be said now (it is kept
  // in said()); false when it is only counted for the next summary.
  bool add(std::string_view address, std::string_view reason, std::string what,
           GuardClock::time_point now);

  // Once the interval of the first one counted has passed (at any `now` when
  // `final`): "12345 more connections from 2 addresses in the last 1.0 s
  // (12000 closed before it authenticated, 345 authentication failed)", and
  // the count starts again. nullopt when nothing was counted, or not yet.
  std::optional<std::string> summary(GuardClock::time_point now, bool final = false);
  // When summary() has something to say (time_point::max() if nothing is counted).
  GuardClock::time_point next_summary() const noexcept;

  const std::vector<std::string>& said() const noexcept { return said_; }
  std::uint64_t total() const noexcept { return total_; }

private:
  Limits limits_;
  std::vector<std::string> said_;
  std::uint64_t total_ = 0;
  GuardClock::time_point window_{}; // when this interval began
  std::size_t said_in_window_ = 0;
  bool started_ = false;
  std::uint64_t counted_ = 0; // not said since the last summary
  GuardClock::time_point counted_since_{};
  std::map<std::string, std::uint64_t> reasons_;
  std::set<std::string> addresses_;
  bool addresses_overflowed_ = false;
};

} // namespace cg::detail
