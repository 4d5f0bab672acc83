// restart_stream.hpp - killing an actor of a running graph and checking what every execution
// gave, for the restart tests (restart_*_test.cpp).
//
// One home for how the restart tests kill: an actor's process found by its
// command line, a stream of executions with one actor killed in its middle
// (killed_in_stream), a kill that waits for the first value after it
// (kill_until_value), and the check of every value of a stream of Counters
// (restart_graphs.cg.cpp), each of which appends how many calls it has
// served since it was constructed. Header-only: each test file is a target's
// source of its own, and the restart benchmark kills the same way.
#pragma once

#include "leftovers.hpp"

#include <cg/driver.hpp>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cg_test::restarts {

using Clock = std::chrono::steady_clock;
using Values = std::vector<std::int64_t>;

inline constexpr std::int64_t kExecutions = 1000;
inline constexpr std::uint32_t kInFlight = 8;
inline constexpr std::int64_t kKillAt = 500; // the first execution queued behind the killed actor

// The live process running actor `actor` of graph `graph` (its command line
// is "<actor host> <graph> <actor> fd:<n>"), or 0.
inline int actor_pid(const std::string& graph, const std::string& actor) {
  for (int pid : cg_test::child_pids()) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string line((std::istreambuf_iterator<char>(file)), {});
    std::vector<std::string> args;
    for (std::size_t at = 0; at < line.size(); at = line.find('\0', at) + 1)
      args.push_back(line.substr(at, line.find('\0', at) - at));
    if (args.size() >= 3 && args[1] == graph && args[2] == actor)
      return pid;
  }
  return 0;
}

// What one execution's get() gave.
struct Outcome {
  std::int64_t input = 0;
  std::optional<Values> value;
  std::string error; // ActorDiedError's what(), or what else was thrown
  bool died = false; // an ActorDiedError
  bool restarted = false;
  std::string actor;
};

// Runs kExecutions executions with kInFlight in flight; before execution
// kKillAt, with every earlier one collected, stops actor `victim` (so that
// it takes none of the next ones), submits kInFlight more and kills it.
// `recovered` is how long from the kill to the first value after it.
template <class Graph>
std::vector<Outcome> killed_in_stream(Graph& graph, const std::string& name,
                                      const std::string& victim, Clock::duration& recovered) {
  std::vector<Outcome> outcomes;
  std::deque<std::pair<std::int64_t, cg::Ref<Values>>> refs;
  Clock::time_point killed_at{};
  bool recovered_yet = false;
  auto take = [&] {
    auto [input, ref] = std::move(refs.front());
    refs.pop_front();
    Outcome outcome;
    outcome.input = input;
    try {
      outcome.value = ref.get();
      if (input >= kKillAt && !recovered_yet) {
        recovered = Clock::now() - killed_at;
        recovered_yet = true;
      }
    } catch (const cg::ActorDiedError& e) {
      outcome = {input, std::nullopt, e.what(), true, e.restarted(), e.actor()};
    } catch (const std::exception& e) {
      outcome.error = e.what();
    }
    outcomes.push_back(std::move(outcome));
  };
  for (std::int64_t x = 0; x < kExecutions; ++x) {
    if (x == kKillAt) {
      while (!refs.empty())
        take();
      const int pid = actor_pid(name, victim);
      EXPECT_NE(pid, 0) << "no process runs actor '" << victim << "'";
      ::kill(pid, SIGSTOP);
      for (std::uint32_t k = 0; k < kInFlight; ++k, ++x)
        refs.emplace_back(x, graph.execute(Values{x}));
      killed_at = Clock::now();
      ::kill(pid, SIGKILL);
    }
    if (refs.size() == kInFlight)
      take();
    refs.emplace_back(x, graph.execute(Values{x}));
  }
  while (!refs.empty())
    take();
  return outcomes;
}

// The executions of a stream that gave no value: [from, until), or -1s when
// every one did.
struct Lost {
  std::int64_t from = -1, until = -1;
};
inline Lost lost_executions(const std::vector<Outcome>& outcomes) {
  Lost lost;
  for (const Outcome& o : outcomes)
    if (!o.value) {
      if (lost.from < 0)
        lost.from = o.input;
      lost.until = o.input + 1;
    }
  return lost;
}

// How a Counter of the graph counted across the restart: every execution
// (one before the victim, or beside it reading what the victim read), afresh
// from the first execution after the loss (the victim), or every execution
// but the lost ones (one after the victim, passed their errors on).
enum class Count { every, afresh, all_but_lost };
struct Counted {
  std::string actor;
  Count count;
};

// Checks every outcome of killed_in_stream() on a graph whose values are
// the input and then each Counter's count, in `counters`' order, and whose
// actor `victim` was killed: the executions lost are one run, from kKillAt
// on, each an ActorDiedError of the restart (1 of 1); every other one holds
// its input and each Counter's count.
inline void check_stream(const std::vector<Outcome>& outcomes, const std::string& name,
                         const std::vector<Counted>& counters, const std::string& victim) {
  ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(kExecutions));
  const Lost lost_run = lost_executions(outcomes);
  EXPECT_EQ(lost_run.from, kKillAt) << "the first execution lost";
  EXPECT_GE(lost_run.until, kKillAt + kInFlight) << "the executions queued behind the killed actor";
  EXPECT_LT(lost_run.until, kExecutions) << "no execution after the restart returned a value";
  const std::string expected_error = "actor '" + victim + "' of graph '" + name +
                                     "' killed by signal 9 (Killed) before it finished this "
                                     "execution; restarted (1 of 1)";
  const std::int64_t lost = lost_run.until - lost_run.from;
  for (const Outcome& o : outcomes) {
    const std::int64_t x = o.input;
    if (x >= lost_run.from && x < lost_run.until) {
      EXPECT_TRUE(o.died && o.restarted) << "execution " << x << ": " << o.error;
      EXPECT_EQ(o.actor, victim) << "execution " << x;
      EXPECT_EQ(o.error, expected_error) << "execution " << x;
      continue;
    }
    const bool after_loss = x >= lost_run.until;
    Values expected{x};
    for (const Counted& counter : counters)
      if (counter.count == Count::every || !after_loss)
        expected.push_back(x + 1);
      else if (counter.count == Count::afresh)
        expected.push_back(x - lost_run.until + 1); // constructed again
      else
        expected.push_back(x + 1 - lost); // skipped the lost ones, kept its count
    ASSERT_TRUE(o.value.has_value()) << "execution " << x << ": " << o.error;
    EXPECT_EQ(*o.value, expected) << "execution " << x;
  }
}

// Kills actor `victim` of `graph` (launched as `name`) and runs executions
// one at a time, inputs from `x` on, until one returns a value, each one
// before it lost to the restart; `x` is then the input after that one.
// Returns how long from the kill to that value, or nullopt (and fails the
// test) when no value came within 10 s.
template <class Graph>
std::optional<Clock::duration> kill_until_value(Graph& graph, const std::string& name,
                                                const std::string& victim, std::int64_t& x) {
  const int pid = actor_pid(name, victim);
  EXPECT_NE(pid, 0) << "no process runs actor '" << victim << "'";
  if (pid == 0)
    return std::nullopt;
  const Clock::time_point killed_at = Clock::now();
  ::kill(pid, SIGKILL);
  while (Clock::now() - killed_at < std::chrono::seconds(10))
    try {
      graph.execute(Values{x++}).get();
      return Clock::now() - killed_at;
    } catch (const cg::ActorDiedError& e) {
      EXPECT_TRUE(e.restarted()) << e.what();
      if (!e.restarted())
        return std::nullopt;
    }
  ADD_FAILURE() << "no value within 10 s of killing actor '" << victim << "'";
  return std::nullopt;
}

inline void report_recovery(const char* test, Clock::duration recovered) {
  const double ms = std::chrono::duration<double, std::milli>(recovered).count();
  std::printf("%s: %.1f ms from SIGKILL to the first value after it\n", test, ms);
  ::testing::Test::RecordProperty("ms_from_sigkill_to_first_value", std::to_string(ms));
}

// The launch options of every restart test: kInFlight executions, and the
// actor executable CG_TEST_ACTOR_HOST names, if set (break_restarts.sh gives
// one with a broken resume), else the one the build made.
inline cg::LaunchOptions restart_options() {
  cg::LaunchOptions options;
  options.max_in_flight = kInFlight;
  if (const char* host = std::getenv("CG_TEST_ACTOR_HOST"))
    options.actor_host = host;
  return options;
}

// Threads mode: asking for restarts is refused at launch.
template <auto GraphFunction> void expect_refused_in_threads(const cg::LaunchOptions& options) {
  try {
    cg::launch<GraphFunction>(options);
    ADD_FAILURE() << "threads mode launched a graph with restarts";
  } catch (const cg::LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "restarts are not supported yet for actor threads (threads mode), and actor '"),
              std::string::npos)
        << e.what();
  }
}

} // namespace cg_test::restarts
