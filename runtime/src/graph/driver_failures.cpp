// graph/driver_failures.cpp - How a launched graph learns that it stopped working, and says why.
//
// A monitor thread watches the actor processes (pidfds); when one dies it
// restarts it where restarts are left (restarts.cpp), else records why and
// closes every channel, which wakes every waiter in every
// process: get() then reports ActorDiedError instead of hanging. In threads
// mode a thread whose program fails does the same itself. Each remote actor
// process keeps its rendezvous connection open; when it ends, the actors of
// that process are reported dead, and a relay that stops reports its stream.
// A get() that times out names the actor that holds the others up.
#include <cg/driver.hpp>

#include "graph/runtime_state.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <poll.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace cg::detail {

// Records the first reason the graph stopped working; wakes every waiter.
void GraphRuntime::Impl::fail(std::exception_ptr why) {
  {
    std::lock_guard lock(mutex);
    if (!failures.failure)
      failures.failure = std::move(why);
  }
  changed.notify_all();
}

// Polls the actors' pidfds (and, where pidfds are unavailable, wakes every
// 100 ms to check) until one exits or teardown starts.
void GraphRuntime::Impl::watch_actors() {
  std::vector<pollfd> fds;
  fds.push_back({failures.stop_fd, POLLIN, 0});
  for (ChildProcess& child : processes.actors)
    fds.push_back({child.pidfd(), POLLIN, 0});
  while (!failures.stopping.load()) {
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < processes.actors.size(); ++i) {
      if (failures.stopping.load() || processes.actors[i].running())
        continue;
      std::string name = processes.child_names[i];
      bool runs_here = false; // in our segment: not an actor host's process
      for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
        runs_here = runs_here || (scale_out.local[a] && name == spec.actors[a].name);
      // A process running actors of another host (TCP forced, a host
      // command) says why it fails over its rendezvous connection just
      // before it exits (FAILED: which actor, what exception). That report
      // names the actor and its error better than the exit status: give it
      // a moment to arrive, as relay_fault() does.
      if (!runs_here && reported_within(std::chrono::milliseconds(300)))
        return; // remote_lost() reported it and stopped the graph
      std::string why = describe_exit(processes.actors[i].exit_status().value_or(0));
      // What it said before exiting: in our segment, if it runs there; else
      // its last line on stderr (a host command's, e.g. ssh's), if we read it.
      std::string words;
      for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
        if (scale_out.local[a] && name == spec.actors[a].name && records[a] != nullptr)
          words = last_words(*records[a]);
      if (words.empty() && processes.child_output[i])
        words = processes.actor_output.last_words(*processes.child_output[i],
                                                  Clock::now() + std::chrono::milliseconds(300));
      if (!words.empty())
        why += " (" + words + ")";
      // An actor with restarts left runs on in a new process (restarts.cpp);
      // one that used them up stops the graph, saying so.
      bool restarted = false;
      for (std::uint32_t a = 0; a < spec.actors.size() && !restarted; ++a) {
        if (!scale_out.local[a] || name != spec.actors[a].name)
          continue;
        restarted = restart(i, a, why);
        if (!restarted && processes.restarts[a] > 0)
          why += "; its restarts are used up (" + std::to_string(processes.restarts[a]) + " of " +
                 std::to_string(processes.max_restarts[a]) + ")";
      }
      if (restarted) {
        fds[i + 1].fd = processes.actors[i].pidfd(); // the new process's
        continue;
      }
      fail(std::make_exception_ptr(
          ActorDiedError(name, "actor '" + name + "' of " + describe(spec) + " " + why)));
      close_all();
      return;
    }
  }
}

// Whether someone else reported a failure (or teardown began) within `wait`:
// a fault seen from afar waits this long for the report that names it.
bool GraphRuntime::Impl::reported_within(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex);
  return changed.wait_for(lock, wait,
                          [&] { return failures.failure != nullptr || failures.stopping.load(); });
}

// A remote actor process's rendezvous connection ended (serving thread).
void GraphRuntime::Impl::remote_lost(const std::vector<std::string>& lost,
                                     const RemoteFailure& why) {
  if (failures.stopping.load())
    return;
  using Cause = RemoteFailure::Cause;
  // The actor that failed, if the process said which (the rendezvous server
  // checked that it runs there), else the first it runs.
  const std::string name = why.cause == Cause::actor ? why.actor : lost.front();
  std::string who = "actor '" + name + "' of " + describe(spec);
  if (lost.size() > 1) {
    who += " (a process running";
    for (const std::string& other : lost)
      who += " " + other;
    who += ")";
  }
  if (why.cause == Cause::channel)
    fail(std::make_exception_ptr(ChannelError(why.reason + " (reported by " + who + ")")));
  else if (why.cause == Cause::actor || why.cause == Cause::host)
    fail(std::make_exception_ptr(ActorDiedError(name, who + " failed: " + why.reason)));
  else if (why.cause == Cause::unreachable)
    fail(std::make_exception_ptr(ActorDiedError(name, who + " is unreachable: " + why.reason)));
  else
    fail(std::make_exception_ptr(ActorDiedError(
        name, who + " lost its connection to the driver: its process died or its host is "
                    "unreachable")));
  close_all();
}

// A relay of ours stopped: a bad frame stops the graph at once; a peer that
// went away is usually reported by its rendezvous connection a moment later,
// which names the actor, so that is waited for first.
void GraphRuntime::Impl::relay_fault(const std::string& why, bool corrupt) {
  if (failures.stopping.load())
    return;
  if (!corrupt && reported_within(std::chrono::seconds(1)))
    return;
  fail(std::make_exception_ptr(
      ChannelError(why + (corrupt ? "; the graph cannot execute any more" : ""))));
  close_all();
}

namespace {
// True when process `pid` is stopped (SIGSTOP, a debugger): state T or t.
bool is_stopped(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* file = std::fopen(path, "r");
  if (!file)
    return false;
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  const char* end = read ? std::strrchr(line, ')') : nullptr;
  return end && end[1] == ' ' && (end[2] == 'T' || end[2] == 't');
}
} // namespace

std::string GraphRuntime::Impl::still_stalled() {
  if (failures.stall &&
      records[failures.stall->actor]->executions.load(std::memory_order_relaxed) ==
          failures.stall->executions &&
      is_stopped(failures.stall->pid))
    return failures.stall->cause;
  failures.stall.reset(); // it moved again, or was resumed
  return "";
}

TimeoutError GraphRuntime::Impl::stalled(std::uint64_t seq, std::chrono::milliseconds timeout,
                                         const std::vector<std::uint64_t>& before,
                                         std::chrono::steady_clock::duration watched) {
  const std::string base = "no result of execution " + std::to_string(seq) + " of " +
                           describe(spec) + " within " + std::to_string(timeout.count()) + " ms";
  if (before.empty())
    return TimeoutError(base); // nobody was watched: a look, or a short wait
  // The actor furthest behind among those that have not finished execution
  // `seq` and did not move while we waited (a stopped process first, then
  // the first in the graph): the others wait for it.
  const std::vector<std::uint64_t> now = executions_now();
  std::optional<std::uint32_t> culprit;
  pid_t culprit_pid = 0;
  bool culprit_stopped = false;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
    if (!scale_out.local[a] || !records[a] || now[a] != before[a] || now[a] > seq)
      continue;
    pid_t pid = 0;
    for (std::size_t i = 0; i < processes.actors.size(); ++i)
      if (processes.child_names[i] == spec.actors[a].name)
        pid = processes.actors[i].pid();
    const bool stopped = pid != 0 && is_stopped(pid);
    if (!culprit || now[a] < now[*culprit] ||
        (now[a] == now[*culprit] && stopped && !culprit_stopped)) {
      culprit = a;
      culprit_pid = pid;
      culprit_stopped = stopped;
    }
  }
  if (!culprit)
    return TimeoutError(base);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(watched).count());
  const std::string who =
      "actor '" + std::string(spec.actors[*culprit].name) + "' " +
      (culprit_pid != 0 ? "(pid " + std::to_string(culprit_pid) + ")" : std::string("(a thread)"));
  const std::string cause = who + " has made no progress for " + seconds + " s";
  if (culprit_stopped)
    failures.stall = RuntimeFailures::Stall{*culprit, now[*culprit], culprit_pid, cause};
  return TimeoutError(base + ": " + cause);
}

} // namespace cg::detail
