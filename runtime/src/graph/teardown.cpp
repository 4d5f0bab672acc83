// graph/teardown.cpp - Tearing a launched graph down: its channels closed,
// its relays, monitor and collector joined, its actors gone (a thread still
// in a method is waited for until the deadline, then left running with all it
// may touch), its profile read and written, its shared memory released.
//
// The memory goes at teardown, not with the last reference to the graph: a
// Ref or a future may keep the runtime alive long after, and the segment and
// overflow buffers are the graph's largest holdings. Every call of the
// driver's API that touches that memory outside the mutex does so between
// enter_memory() and leave_memory() (MemoryUse, GraphRuntime::MemoryHold),
// so teardown can wait for the calls already in it (the closed channels send
// them out at once) and turn away the ones that come later.
#include <cg/driver.hpp>

#include <cg/cpu_binding.hpp>

#include "graph/runtime_state.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cg::detail {

GraphRuntime::~GraphRuntime() {
  teardown();
  if (impl_->results.results_fd >= 0)
    ::close(impl_->results.results_fd);
  // An actor thread teardown(timeout) left running still uses the runtime
  // (its segment, its records): it is kept for good, where a leak checker
  // sees it is still in use.
  if (!impl_->processes.left_running.empty()) {
    static std::mutex kept_mutex;
    static auto* kept = new std::vector<std::unique_ptr<Impl>>;
    std::lock_guard lock(kept_mutex);
    kept->push_back(std::move(impl_));
  }
}

void GraphRuntime::teardown() noexcept { finish(Deadline::max()); }

void GraphRuntime::teardown(std::chrono::milliseconds timeout) {
  if (!finish(deadline_or_look_once(timeout)))
    return;
  std::vector<std::string> quoted;
  for (const std::string& name : impl_->processes.left_running)
    quoted.push_back("'" + name + "'");
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(timeout).count());
  throw TimeoutError("teardown of " + describe(spec_) + ": actor " + join(quoted, ", actor ") +
                     " (a thread of this process) is still in a method after " + seconds +
                     " s. A thread cannot be stopped: it is left running, and the graph's memory "
                     "is kept for it");
}

// Actor threads leave their loop when their channels close; one still in a
// method is waited for until `deadline` (a thread cannot be stopped), then
// left running, detached, with everything it may touch: see ~GraphRuntime.
void GraphRuntime::Impl::join_actor_threads(Deadline deadline) {
  std::unique_lock lock(mutex);
  auto none_running = [&] {
    return std::none_of(processes.thread_running.begin(), processes.thread_running.end(),
                        [](char r) { return r; });
  };
  if (deadline == Deadline::max())
    changed.wait(lock, none_running);
  else
    changed.wait_until(lock, deadline, none_running);
  for (std::size_t i = 0; i < processes.actor_threads.size(); ++i) {
    if (processes.thread_running[processes.thread_actor[i]]) {
      processes.left_running.push_back(spec.actors[processes.thread_actor[i]].name);
      processes.actor_threads[i].detach();
    }
  }
  lock.unlock();
  for (std::thread& thread : processes.actor_threads)
    if (thread.joinable())
      thread.join();
  processes.actor_threads.clear();
}

// Unmaps and closes what this process holds of the graph's shared memory
// (and lets go of the results nobody took), once no call of the driver's
// API uses it: the result readers' mappings of the actors' overflow
// buffers, the relays' channel ends (other hosts), the input writers'
// overflow buffers and the segment. Every actor is gone by
// now (an actor thread's channel ends went with it). An input that has a
// tensor from input_tensor() no execute() took keeps its writer and the
// segment: the caller may still write that tensor, in a slot or an overflow
// buffer; they go with the graph's last reference.
void GraphRuntime::Impl::release_memory() noexcept {
  // Results collected and never taken go too: after teardown no get() can
  // take them (it throws), and a large one is as large as any buffer.
  std::map<std::uint64_t, std::vector<Collected>> untaken;
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return memory_users.load() == 0; });
    untaken.swap(results.untaken);
  }
  untaken.clear();
  std::vector<Collected>().swap(results.partial);
  for (ChannelReader& reader : results.result_readers)
    reader = ChannelReader(); // before the relays: a reader may take from one
  for (ChannelWriter& writer : inputs)
    writer.forward_with(nullptr);
  scale_out.relays.reset();
  if (std::find(input_in_place.begin(), input_in_place.end(), true) != input_in_place.end())
    return;
  for (ChannelWriter& writer : inputs)
    writer = ChannelWriter();
  channels.assign(channels.size(), Channel());
  groups.assign(groups.size(), HostGroup());
  records.assign(records.size(), nullptr);
  header = nullptr;
  segment = SharedSegment();
}

// Stops the graph, waiting for actor threads until `deadline`; true when
// this call tore the graph down and left an actor thread running.
bool GraphRuntime::finish(Deadline deadline) noexcept {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (s.torn_down)
      return false;
    s.torn_down = true;
    s.results.stop_collector = true;
  }
  s.memory_closed.store(true);
  const Clock::time_point began = Clock::now();
  // Actors in processes of their own send their profiles while they still
  // run (once the channels close, they stop).
  if (s.profiling.profile.on() && s.scale_out.remote_count > 0)
    s.profiling.remote_profiles =
        s.scale_out.server.collect_profiles(Clock::now() + std::chrono::seconds(3));
  s.changed.notify_all();
  s.failures.stopping.store(true);
  s.close_all();
  // The relays end with their streams; closing the rendezvous connections
  // tells every remote actor process to exit.
  s.scale_out.relays->join();
  s.scale_out.server.stop();
  if (s.failures.monitor.joinable()) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(s.failures.stop_fd, &one, sizeof one);
    s.failures.monitor.join();
  }
  if (s.failures.stop_fd >= 0)
    ::close(s.failures.stop_fd);
  if (s.results.collector.joinable())
    s.results.collector.join();
  s.fail_callbacks();
  s.join_actor_threads(deadline);
  // Actor processes do too; give them a moment to exit cleanly, then make sure.
  const auto grace = Clock::now() + std::chrono::seconds(2);
  for (ChildProcess& child : s.processes.actors) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(grace - Clock::now());
    if (!child.wait_for(std::max(left, std::chrono::milliseconds(0)))) {
      child.kill(SIGKILL);
      child.wait_for(std::chrono::seconds(1));
    }
  }
  // What they said last reaches the terminal (a grandchild holding a pipe
  // open is not waited for long).
  s.processes.actor_output.finish(Clock::now() + std::chrono::seconds(1));
  s.segment.unlink();
  // The profile is read while its rings are still mapped: from now on,
  // stats() and write_profile() answer with what was read here.
  if (s.profiling.profile.on()) {
    std::vector<ProfileTrack> tracks;
    std::string error;
    try {
      tracks = s.read_profile_tracks();
    } catch (const std::exception& e) {
      error = e.what();
    }
    {
      std::lock_guard lock(s.mutex);
      s.profiling.final_profile = std::move(tracks);
      s.profiling.final_profile_error = std::move(error);
      s.profiling.profile_final = true;
    }
    s.changed.notify_all();
  }
  if (!s.profiling.profile_path.empty()) {
    try {
      s.write_profile(s.profiling.profile_path);
    } catch (const std::exception& e) {
      // teardown() cannot throw: say it where the user looks.
      std::fprintf(stderr, "cg: %s\n", e.what());
    }
  }
  // An actor thread left running still uses all of it (see ~GraphRuntime).
  if (s.processes.left_running.empty())
    s.release_memory();
  if (s.log.info()) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f",
                  std::chrono::duration<double, std::milli>(Clock::now() - began).count());
    s.log.say(LogLevel::info, std::string("torn down in ") + took + " ms");
  }
  // The launching thread's CPUs and waiting back, if this is that thread
  // (another thread's id may be anyone's by now).
  if (s.processes.launching_thread != 0 && s.processes.launching_thread == ::gettid()) {
    if (!s.processes.thread_cpus_before.empty())
      set_cpus(0, s.processes.thread_cpus_before);
    set_has_own_cpu(false);
  }
  return !s.processes.left_running.empty();
}

} // namespace cg::detail
