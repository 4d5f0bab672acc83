// graph/runtime_failures.hpp - Why a launched graph stopped, and its watcher: RuntimeFailures.
//
// A part of GraphRuntime::Impl (graph/runtime_state.hpp), apart so that
// driver_failures.cpp, which watches the actors and says why the graph
// stopped, finds the first cause, the stall a get() found and the monitor
// that watches in one place.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <thread>

namespace cg::detail {

struct RuntimeFailures {
  // The monitor thread, woken through stop_fd, and whether teardown has
  // begun stopping the graph (a death the monitor sees from then on is no
  // failure). Started by launch(), joined by teardown.
  std::thread monitor;
  int stop_fd = -1;
  std::atomic<bool> stopping{false};

  // Guarded by GraphRuntime::Impl::mutex; its `changed` says when failure
  // changed.
  //
  // A stopped actor process (SIGSTOP, a debugger) found by a get() that
  // timed out, with its executions then: while it stays stopped and they
  // stay so, later get()s fail at once with the same cause. (An actor that
  // runs but finishes nothing may be slow, not stuck: each get() waits.)
  struct Stall {
    std::uint32_t actor = 0;
    std::uint64_t executions = 0;
    pid_t pid = 0;
    std::string cause; // "actor 'b' (pid N) has made no progress for 3.0 s"
  };
  std::optional<Stall> stall;
  std::exception_ptr failure; // why the graph cannot execute any more; the first cause wins
};

} // namespace cg::detail
