// graph/runtime_processes.hpp - Where a launched graph's actors run: RuntimeProcesses.
//
// A part of GraphRuntime::Impl (graph/runtime_state.hpp), apart so that the
// files that start, watch and stop the actors (launch.cpp, driver_failures.cpp,
// teardown.cpp) find in one place the processes and threads they work on, and
// the CPUs those were placed on, with the os/ room alone behind them.
#pragma once

#include <cg/driver.hpp>

#include "os/process.hpp"
#include "os/tagged_output.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {

// launch() fills it before any execution; after that only the monitor
// changes the processes, replacing a restarted actor's entry with
// GraphRuntime::Impl::mutex held (graph/restarts.cpp): the monitor reads them
// without it, a get() that timed out (looking up a stopped one's pid) with
// it, and teardown once the monitor has stopped.
// thread_running and left_running change while actor threads run: they are
// guarded by GraphRuntime::Impl::mutex, and a change to thread_running is
// signalled by its `changed`.
struct RuntimeProcesses {
  Mode mode = Mode::processes;
  std::vector<ChildProcess> actors;                     // processes mode
  std::vector<std::string> child_names;                 // per entry of `actors`: whom it runs
  TaggedOutput actor_output;                            // their output, tagged (unless actor_logs)
  std::vector<std::optional<std::size_t>> child_output; // per entry of `actors`: its number there
  std::string actor_logs;                  // LaunchOptions::actor_logs or CG_ACTOR_LOGS
  std::vector<std::thread> actor_threads;  // threads mode
  std::vector<std::uint32_t> thread_actor; // per entry of `actor_threads`: whom it runs

  // CPU binding and waiting (cg/cpu_binding.hpp).
  std::vector<int> bound_cpus;         // the launching thread's, then each local actor's
  std::vector<int> actor_cpus;         // per actor: its CPU, or -1
  bool own_cpus = false;               // every thread of ours can count on a CPU: spin
  pid_t launching_thread = 0;          // placed by place_on_cpus(), if it placed anything
  std::vector<int> thread_cpus_before; // its CPU set before launch(), if bound

  // Threads mode (under the mutex): per actor, whether its thread is still
  // running; and the actors whose threads teardown(timeout) left running,
  // still in a method.
  std::vector<char> thread_running;
  std::vector<std::string> left_running;

  // Restarts (graph/restarts.cpp). max_restarts is set by launch() before
  // any actor starts; restarts counts, per actor, those made (changed by the
  // monitor with `mutex` held); the monitor restarts nobody until launch()
  // has seen every actor ready (restartable), nor without actor_host.
  std::vector<std::uint32_t> max_restarts; // per actor
  std::vector<std::uint32_t> restarts;     // per actor
  std::string actor_host;                  // the actor executable
  std::atomic<bool> restartable{false};
};

} // namespace cg::detail
