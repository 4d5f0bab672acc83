// soak_test.cpp - many graphs in one driver under random kills, stops and dropped refs.
//
// Every call must end in the value or in the error its fault calls for,
// never a hang or another exception: a method's exception is a TaskError with
// its message; a killed actor is an ActorDiedError naming it, for every ref
// not answered before (and soon: the execution right after a kill must be
// told so within 2 s, though while another actor is stopped the runtime may
// first answer that it waits for that one); a stopped actor is a
// TimeoutError, only while it is stopped and only if nothing was killed.
// Each kind is counted apart, and each must be seen where it was provoked.
// After each graph nothing may be left: processes, shared memory
// (NoLeftovers), file descriptors or threads.
//
// In threads mode actors are killed as actor_kills.hpp says (the one the
// driver feeds, by a broken channel) and none is stopped (a thread cannot be).
// Under CG_TEST_KILL_SIGNAL=SIGSTOP every kill goes unnoticed and the test
// must fail, at the first kill. Bounded: a fixed seed, 24 graphs, about 10 s.
//
// With restarts on (LaunchOptions::max_restarts; processes mode, threads
// mode refuses them), 8 such rounds kill again and again: each kill is
// told to the next execution as an ActorDiedError with restarted() true (or
// that execution already ran on the new process, counted by restarts()),
// the refs in flight at it may end so, and the graph goes on. A restart
// can wait for a stopped neighbour (the new process drops the lost executions'
// inputs, which a stopped writer may not have written), so the stopped actors are
// continued before a kill there.
#include "actor_kills.hpp"
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Soak = cg_test::NoLeftovers;

constexpr std::uint32_t kInFlight = 4;
// How long a get() may wait where nothing holds the graph up, and how long a
// kill may take to be reported before it counts as unnoticed: far more than
// the milliseconds either takes (death_detection_test.cpp bounds a kill's),
// so that a loaded machine is no failure.
constexpr std::chrono::milliseconds kPatience = 2s;

// Entries of /proc/self/<dir> (fd, task): open descriptors, threads.
std::size_t entries(const char* dir) {
  std::size_t count = 0;
  DIR* listing = opendir((std::string("/proc/self/") + dir).c_str());
  while (dirent* entry = readdir(listing))
    count += entry->d_name[0] != '.';
  closedir(listing);
  return count;
}

// Waits (up to 5 s) until `now()` is `expected`: threads and descriptors of
// a torn-down graph go a moment after teardown() returns.
template <class F> bool becomes(std::size_t expected, F now) {
  for (auto until = std::chrono::steady_clock::now() + 5s; now() != expected;) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// What the soak saw, each kind apart.
struct Outcomes {
  int values = 0;      // the right value
  int task_errors = 0; // a negative input's TaskError
  int deaths = 0;      // ActorDiedError, after a kill
  int timeouts = 0;    // TimeoutError, while an actor was stopped
  int full = 0;        // CapacityExceeded, with max_in_flight refs kept
  int kills = 0;
  int stops = 0;
  int restarts = 0; // kills the graph came back from
  int quiet = 0;    // of those, restarted before the execution that asked began
  int lost = 0;     // ActorDiedError with restarted() true
};

// One graph's life under random faults.
class Round {
public:
  // `restarts`: each actor's LaunchOptions::max_restarts (0: none).
  Round(std::mt19937& random, Outcomes& seen, std::uint32_t restarts = 0)
      : random_(random), seen_(seen), restarts_(restarts) {
    options_.max_restarts = restarts;
    options_.max_in_flight = kInFlight;
    options_.get_timeout = 300ms; // what a stopped actor makes a get() wait
    options_.submit_timeout = 300ms;
  }

  // False once a kill went unreported: the rest would only repeat it.
  bool run() {
    auto graph = cg::launch<&adder>(options_);
    const bool reported = steps(graph);
    for (int pid : stopped_)
      ::kill(pid, SIGCONT);
    stopped_.clear();
    if (reported)
      for (auto& [input, ref] : kept_)
        check(input, ref);
    kept_.clear(); // before the graph goes
    return reported;
  }

private:
  using Graph = decltype(cg::launch<&adder>());

  bool steps(Graph& graph) {
    for (int step = 0; step < 16; ++step) {
      const int input = static_cast<int>(random_() % 12) - 2; // some negative: task errors
      const unsigned action = random_() % 10;
      if (action < 5) {
        execute(graph, input, true);
      } else if (action < 8) {
        execute(graph, input, false); // dropped at once
      } else if (action == 8 && !kept_.empty()) {
        check(kept_.back().first, kept_.back().second);
        kept_.pop_back();
      } else if (action == 9 && random_() % 2 == 0) {
        if (!kill(graph))
          return false;
      } else if (action == 9) {
        stop(graph);
      }
    }
    return true;
  }

  void execute(Graph& graph, int input, bool keep) {
    try {
      cg::Ref<int> ref = graph.execute(input);
      if (keep)
        kept_.emplace_back(input, std::move(ref));
    } catch (const cg::CapacityExceeded& e) {
      EXPECT_GE(kept_.size(), kInFlight) << e.what();
      ++seen_.full;
    } catch (const cg::ActorDiedError& e) {
      died(e);
    } catch (const cg::TimeoutError& e) {
      timed_out(e);
    }
  }

  // What a get() may end in: the value, a negative input's task error, or
  // the error the round's faults call for.
  void check(int input, cg::Ref<int>& ref) {
    try {
      const int value = stopped_.empty() ? ref.get(kPatience) : ref.get();
      EXPECT_EQ(value, input + 2) << "input " << input;
      ++seen_.values;
    } catch (const cg::TaskError& e) {
      EXPECT_EQ(e.actor(), "a");
      EXPECT_EQ(e.message(), "negative input " + std::to_string(input));
      ++seen_.task_errors;
    } catch (const cg::ActorDiedError& e) {
      died(e);
    } catch (const cg::TimeoutError& e) {
      timed_out(e);
    }
  }

  void died(const cg::ActorDiedError& e) {
    if (e.restarted()) { // an execution lost to a restart, told now or before
      EXPECT_GT(restarts_, 0u) << e.what();
      EXPECT_TRUE(restarted_.count(e.actor()) == 1 || killed_ == e.actor()) << e.what();
      ++seen_.lost;
      return;
    }
    EXPECT_NE(killed_, "") << "no actor was killed, yet: " << e.what();
    EXPECT_EQ(e.actor(), killed_) << e.what();
    ++seen_.deaths;
  }

  void timed_out(const cg::TimeoutError& e) {
    EXPECT_EQ(killed_, "") << "actor '" << killed_
                           << "' was killed: that is an ActorDiedError, not a wait: " << e.what();
    EXPECT_FALSE(stopped_.empty()) << "no actor is stopped, yet: " << e.what();
    ++seen_.timeouts;
  }

  // Kills an actor (once: the graph is dead after it, unless it restarts the
  // actor); the next execution must be told so within kPatience.
  bool kill(Graph& graph) {
    if (!killed_.empty())
      return true;
    if (restarts_ > 0) { // a restart can wait for a stopped neighbour
      for (int pid : stopped_)
        ::kill(pid, SIGCONT);
      stopped_.clear();
    }
    ++seen_.kills;
    std::string expected;
    // Counted before the kill: the driver may notice the death and restart
    // the actor before this thread looks again.
    std::uint32_t restarted_before = 0;
    if (cg_test::threads_mode()) {
      const cg::detail::GraphSpec& spec = cg_generated::e2e_graphs::adder_spec;
      killed_ = spec.actors[spec.channels[spec.input_channels[0]].reader_actors[0]].name;
      restarted_before = graph.restarts()[killed_];
      const std::string unreported = cg_test::break_input_reader(spec, options_, kPatience);
      if (!unreported.empty()) {
        ADD_FAILURE() << "actor '" << killed_ << "' was killed: " << unreported;
        return false;
      }
      expected = "actor '" + killed_ + "' of graph 'adder' (a thread) failed: " +
                 std::string("cg::detail::ActorFailure: channel ") +
                 std::to_string(spec.input_channels[0]) + ": read (corrupt)";
    } else {
      const std::vector<int> actors = cg_test::child_pids();
      const int pid = actors.at(random_() % actors.size());
      killed_ = cg_test::actor_of(pid);
      restarted_before = graph.restarts()[killed_];
      cg_test::kill_actor_process(pid);
      expected = "actor '" + killed_ + "' of graph 'adder' killed by signal 9 (Killed)";
      if (restarts_ > 0)
        expected += " before it finished this execution; restarted (" +
                    std::to_string(restarted_before + 1) + " of " + std::to_string(restarts_) + ")";
    }
    const auto until = std::chrono::steady_clock::now() + kPatience;
    for (;;) {
      try {
        const int value = graph.execute(0).get(kPatience);
        // Only from an actor restarted before this execution began.
        if (restarts_ == 0 || graph.restarts()[killed_] != restarted_before + 1) {
          ADD_FAILURE() << "actor '" << killed_ << "' was killed, yet the graph answered " << value;
          return false;
        }
        EXPECT_EQ(value, 2);
        ++seen_.quiet;
        came_back();
        return true;
      } catch (const cg::ActorDiedError& e) {
        EXPECT_EQ(e.what(), expected);
        died(e);
        if (restarts_ > 0) {
          EXPECT_TRUE(e.restarted()) << e.what();
          EXPECT_EQ(graph.restarts()[killed_], restarted_before + 1);
          came_back();
        }
        return true;
      } catch (const cg::CapacityExceeded& e) {
        // Restarting, the graph goes on: room comes from the kept refs (those
        // the dead process held end in the restart's error).
        if (restarts_ > 0 && !kept_.empty()) {
          check(kept_.front().first, kept_.front().second);
          kept_.erase(kept_.begin());
          continue;
        }
        // Room comes only with the death's report: try again until then.
        if (std::chrono::steady_clock::now() > until) {
          ADD_FAILURE() << "actor '" << killed_ << "' was killed and not reported within "
                        << kPatience.count() << " ms: " << e.what();
          return false;
        }
        std::this_thread::sleep_for(1ms);
      } catch (const cg::TimeoutError& e) {
        // An actor stopped before is a stall the runtime remembers: it may
        // say so at once, before it has seen the death. Ask again until then.
        if (!stopped_.empty() && std::chrono::steady_clock::now() < until) {
          std::this_thread::sleep_for(1ms);
          continue;
        }
        ADD_FAILURE() << "actor '" << killed_
                      << "' was killed, yet the graph only waited: " << e.what();
        return false;
      }
    }
  }

  // The killed actor runs again: another may be killed.
  void came_back() {
    restarted_.insert(std::exchange(killed_, ""));
    ++seen_.restarts;
  }

  // Stops an actor process (none in threads mode); the next execution must
  // time out, not finish and not die.
  void stop(Graph& graph) {
    if (cg_test::threads_mode() || !killed_.empty())
      return; // a thread cannot be stopped; a dead graph waits for nobody
    ++seen_.stops;
    const std::vector<int> actors = cg_test::child_pids();
    stopped_.push_back(actors.at(random_() % actors.size()));
    ::kill(stopped_.back(), SIGSTOP);
    const int before = seen_.timeouts;
    while (seen_.timeouts == before) {
      try {
        cg::Ref<int> ref = graph.execute(0);
        check(0, ref);
        break;
      } catch (const cg::CapacityExceeded& e) {
        // Room first, from the kept refs (those answered before the stop
        // give their values; one still in flight waits too).
        ++seen_.full;
        if (kept_.empty()) {
          ADD_FAILURE() << "no ref is kept, yet: " << e.what();
          break;
        }
        check(kept_.front().first, kept_.front().second);
        kept_.erase(kept_.begin());
      } catch (const cg::TimeoutError& e) {
        timed_out(e);
      }
    }
    EXPECT_EQ(seen_.timeouts, before + 1) << "a stopped actor held nothing up";
  }

  std::mt19937& random_;
  Outcomes& seen_;
  cg::LaunchOptions options_;
  std::vector<std::pair<int, cg::Ref<int>>> kept_; // input, ref
  std::vector<int> stopped_;                       // pids, until resumed
  std::string killed_;                             // the actor killed, if any
  std::uint32_t restarts_ = 0;                     // per actor, allowed
  std::set<std::string> restarted_;                // actors restarted this round
};

TEST_F(Soak, KilledActorsAreReportedDeadStoppedOnesTimeOutAndNothingIsLeft) {
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t fds = entries("fd");
  const std::size_t threads = entries("task");
  std::mt19937 random(20261124);
  Outcomes seen;
  for (int round = 0; round < 24; ++round) {
    if (!Round(random, seen).run())
      return; // torn down; the failure said which kill went unnoticed
    EXPECT_TRUE(becomes(fds, [] { return entries("fd"); })) << "round " << round;
    EXPECT_TRUE(becomes(threads, [] { return entries("task"); })) << "round " << round;
    EXPECT_EQ(cg_test::child_pids(), std::vector<int>{}) << "round " << round;
  }
  EXPECT_GT(seen.values, 0);
  EXPECT_GT(seen.task_errors, 0);
  EXPECT_GT(seen.full, 0);
  EXPECT_GT(seen.kills, 0);
  EXPECT_GE(seen.deaths, seen.kills) << "each kill is reported at least once";
  if (cg_test::threads_mode()) {
    EXPECT_EQ(seen.stops, 0);
    EXPECT_EQ(seen.timeouts, 0);
  } else {
    EXPECT_GT(seen.stops, 0);
    EXPECT_GE(seen.timeouts, seen.stops) << "each stop holds an execution up";
  }
}

// The rounds above with every actor's restarts on: more kills than the
// rounds without them (a round goes on after each), every one a restart.
TEST_F(Soak, KilledActorsComeBackWithRestartsOnAndNothingIsLeft) {
  constexpr std::uint32_t kRestarts = 16; // a round's steps: never used up
  // Fewer than above: a round goes on after each kill, and each stop waits
  // out a get_timeout, so each takes longer (about 1 s).
  constexpr int kRounds = 8;
  if (cg_test::threads_mode()) {
    std::mt19937 random(20261128);
    Outcomes seen;
    EXPECT_THROW(Round(random, seen, kRestarts).run(), cg::LaunchError);
    return;
  }
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t fds = entries("fd");
  const std::size_t threads = entries("task");
  std::mt19937 random(20261128);
  Outcomes seen;
  for (int round = 0; round < kRounds; ++round) {
    if (!Round(random, seen, kRestarts).run())
      return; // torn down; the failure said which kill went unnoticed
    EXPECT_TRUE(becomes(fds, [] { return entries("fd"); })) << "round " << round;
    EXPECT_TRUE(becomes(threads, [] { return entries("task"); })) << "round " << round;
    EXPECT_EQ(cg_test::child_pids(), std::vector<int>{}) << "round " << round;
  }
  EXPECT_GT(seen.values, 0);
  EXPECT_GT(seen.task_errors, 0);
  EXPECT_GT(seen.kills, 0);
  EXPECT_EQ(seen.restarts, seen.kills) << "each kill is a restart";
  EXPECT_GE(seen.lost, seen.restarts - seen.quiet) << "each kill told as a restart";
  EXPECT_GT(seen.stops, 0);
  std::printf("with restarts: %d kills (%d before the next execution), %d executions lost to "
              "them, %d values, %d stops\n",
              seen.kills, seen.quiet, seen.lost, seen.values, seen.stops);
}

} // namespace
