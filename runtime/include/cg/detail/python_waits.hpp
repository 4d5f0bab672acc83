// cg/detail/python_waits.hpp - How the Python driver (cg/python.hpp) waits:
// timeouts in seconds, the slices its waits are cut into so that Ctrl-C gets
// through, the TimeoutError of a sliced get(), and what refs tell their
// graph about the room in its channels.
//
// Apart from cg/python.hpp because waiting is a concern of its own there:
// every wait blocks with the GIL released, never spins, and ends within
// wait_slice of a signal or to the millisecond of its timeout.
#pragma once

#include <cg/errors.hpp>

#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cg::python::detail {

namespace py = pybind11;

/// `s` seconds (>= 0) as milliseconds, rounded; a century at most (a
/// deadline that far is never reached, and adding it to now() cannot overflow).
inline std::chrono::milliseconds seconds_to_milliseconds(double s) {
  constexpr double century = 100.0 * 365 * 24 * 3600;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(s, century) * 1000 + 0.5));
}

/// How long one wait of get() or execute() lasts at most before Python may
/// run its signal handlers (Ctrl-C: KeyboardInterrupt). Each wait truly
/// blocks with the GIL released, so slicing costs a wake-up per slice.
inline constexpr std::chrono::milliseconds wait_slice{50};

/// get()'s timeout in seconds as a wait: nullopt for no limit (math.inf);
/// ValueError for NaN or a negative one.
inline std::optional<std::chrono::milliseconds> get_wait(double seconds) {
  if (std::isnan(seconds) || seconds < 0)
    throw py::value_error("get() timeout must be seconds, at least 0 (or None, or math.inf), not " +
                          std::string(py::repr(py::float_(seconds))));
  if (std::isinf(seconds))
    return std::nullopt;
  return seconds_to_milliseconds(seconds);
}

/// What the driver's TimeoutErrors for one execution say, read back: get()
/// waits in slices, and its own TimeoutError names the actor that made no
/// progress over consecutive slices, as one C++ wait of the whole length
/// does. (Their wording is the runtime's, driver_failures.cpp.)
class SlicedTimeout {
public:
  /// A slice of `length` that began at `start` ended with `what`.
  void saw(const std::string& what, std::chrono::steady_clock::time_point start,
           std::chrono::milliseconds length = wait_slice) {
    const std::size_t actor = what.find(": actor '");
    const std::size_t still = what.rfind(" has made no progress for ");
    if (base_.empty())
      base_ = what.substr(0, std::min(what.find(" within "), actor));
    if (actor == std::string::npos || still == std::string::npos || still < actor) {
      // Nobody stood still, or the slice was too short for the driver to
      // watch anyone (the last one often is): only the first says so.
      if (length >= std::chrono::milliseconds(10))
        who_.clear();
      return;
    }
    std::string who = what.substr(actor + 2, still - actor - 2);
    if (who != who_) {
      who_ = std::move(who);
      since_ = start;
    }
  }

  /// True when `what` is the driver's answer for an actor it found stopped
  /// before this wait: it says so at once, without waiting again.
  static bool stalled_before(const std::string& what) {
    const std::size_t actor = what.find(": actor '");
    return actor != std::string::npos && what.find(" within ") > actor;
  }

  /// The TimeoutError of the whole wait, `total` long. The stall it names
  /// is as long as the wait watched it, at most `total`, as the C++ driver
  /// reports it: a thread woken late adds nothing to what it saw.
  cg::TimeoutError error(std::chrono::milliseconds total) const {
    std::string what = base_ + " within " + std::to_string(total.count()) + " ms";
    if (!who_.empty()) {
      const auto watched = std::min<std::chrono::steady_clock::duration>(
          std::chrono::steady_clock::now() - since_, total);
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f",
                    std::chrono::duration<double>(watched).count());
      what += ": " + who_ + " has made no progress for " + seconds + " s";
    }
    return cg::TimeoutError(what);
  }

private:
  std::string base_; // "no result of execution 3 of graph 'g'"
  std::string who_;  // "actor 'a' (pid 12)", named by every slice since since_
  std::chrono::steady_clock::time_point since_;
};

/// What a graph's refs tell it: the executions whose refs went without
/// their result, which still hold room in the channels until collected
/// (execute() waits for that room itself, interruptibly). Touched with the
/// GIL held only.
struct Flight {
  std::uint64_t submitted = 0;
  std::vector<std::uint64_t> abandoned;
};

} // namespace cg::python::detail
