// restart_test.cpp - an actor process that dies is started again in place and costs only what it
// touched.
//
// What is promised (docs/failures.md, "Restarts"; cg::LaunchOptions::
// max_restarts): a killed actor with restarts left runs on in a new process,
// constructed anew; the executions it had taken or that were queued behind it
// end in ActorDiedError with restarted() true, every other one returns its
// own value, none twice, and the other actors keep their state. The graphs'
// Counters append how many calls each has served since it was constructed,
// so every value is checked whole: its execution's input, and which life of
// each actor made it. Used up, restarts end the graph as a death without them
// does, saying how many were made. Threads mode has no restarts yet: asking
// for them is a LaunchError there.
#include "e2e_restart_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Restarts = cg_test::NoLeftovers;
using Values = std::vector<std::int64_t>;

constexpr std::int64_t kExecutions = 1000;
constexpr std::uint32_t kInFlight = 8;
constexpr std::int64_t kKillAt = 500; // the first execution queued behind the killed actor

// The live process running actor `actor` of graph `graph` (its command line
// is "<actor host> <graph> <actor> fd:<n>"), or 0.
int actor_pid(const std::string& graph, const std::string& actor) {
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

// Checks every outcome of killed_in_stream() on a chain of `actors` Counters
// whose actor `victim` was killed: the executions lost are one run, from
// kKillAt on, each an ActorDiedError of the restart; every other one holds
// its input and each actor's count of calls: one a call for the actors
// before the victim, afresh after the restart for the victim, and none for
// the lost executions for those after it.
void check_stream(const std::vector<Outcome>& outcomes, const std::string& name,
                  const std::vector<std::string>& actors, std::size_t victim) {
  ASSERT_EQ(outcomes.size(), static_cast<std::size_t>(kExecutions));
  std::int64_t lost_from = -1, lost_until = -1;
  for (const Outcome& o : outcomes)
    if (!o.value) {
      if (lost_from < 0)
        lost_from = o.input;
      lost_until = o.input + 1;
    }
  EXPECT_EQ(lost_from, kKillAt) << "the first execution lost";
  EXPECT_GE(lost_until, kKillAt + kInFlight) << "the executions queued behind the killed actor";
  EXPECT_LT(lost_until, kExecutions) << "no execution after the restart returned a value";
  const std::string expected_error = "actor '" + actors[victim] + "' of graph '" + name +
                                     "' killed by signal 9 (Killed) before it finished this "
                                     "execution; restarted (1 of 1)";
  const std::int64_t lost = lost_until - lost_from;
  for (const Outcome& o : outcomes) {
    const std::int64_t x = o.input;
    if (x >= lost_from && x < lost_until) {
      EXPECT_TRUE(o.died && o.restarted) << "execution " << x << ": " << o.error;
      EXPECT_EQ(o.actor, actors[victim]) << "execution " << x;
      EXPECT_EQ(o.error, expected_error) << "execution " << x;
      continue;
    }
    Values expected{x};
    for (std::size_t a = 0; a < actors.size(); ++a) {
      const bool after_loss = x >= lost_until;
      if (a < victim || !after_loss)
        expected.push_back(x + 1);
      else if (a == victim)
        expected.push_back(x - lost_until + 1); // constructed again
      else
        expected.push_back(x + 1 - lost); // skipped the lost ones, kept its count
    }
    ASSERT_TRUE(o.value.has_value()) << "execution " << x << ": " << o.error;
    EXPECT_EQ(*o.value, expected) << "execution " << x;
  }
}

void report_recovery(const char* test, Clock::duration recovered) {
  const double ms = std::chrono::duration<double, std::milli>(recovered).count();
  std::printf("%s: %.1f ms from SIGKILL to the first value after it\n", test, ms);
  ::testing::Test::RecordProperty("ms_from_sigkill_to_first_value", std::to_string(ms));
}

// The launch options of every test here: kInFlight executions, and the actor
// executable CG_TEST_ACTOR_HOST names, if set (break_restarts.sh gives one
// with a broken resume), else the one the build made.
cg::LaunchOptions restart_options() {
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

TEST_F(Restarts, KilledFirstActorOfAPairCostsOnlyTheExecutionsQueuedBehindIt) {
  cg::LaunchOptions options = restart_options();
  options.max_restarts = 1;
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&counted_pair>(options);
  Clock::duration recovered{};
  std::vector<Outcome> outcomes;
  {
    auto graph = cg::launch<&counted_pair>(options);
    outcomes = killed_in_stream(graph, "counted_pair", "a", recovered);
    EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"a", 1}}));
  }
  check_stream(outcomes, "counted_pair", {"a", "b"}, 0);
  report_recovery("pair", recovered);
}

TEST_F(Restarts, KilledMiddleActorOfAChainCostsOnlyTheExecutionsQueuedBehindIt) {
  cg::LaunchOptions options = restart_options();
  options.actor_max_restarts = {{"b", 1}};
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&counted_chain>(options);
  Clock::duration recovered{};
  std::vector<Outcome> outcomes;
  {
    auto graph = cg::launch<&counted_chain>(options);
    outcomes = killed_in_stream(graph, "counted_chain", "b", recovered);
    EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"b", 1}}));
  }
  check_stream(outcomes, "counted_chain", {"a", "b", "c"}, 1);
  report_recovery("chain", recovered);
}

// An environment variable for scripts, every actor its restarts.
TEST_F(Restarts, MaxRestartsFromTheEnvironmentRestartsAKilledActor) {
  ::setenv("CG_MAX_RESTARTS", "1", 1);
  cg::LaunchOptions options = restart_options();
  if (cg_test::threads_mode()) {
    expect_refused_in_threads<&counted_pair>(options);
    ::unsetenv("CG_MAX_RESTARTS");
    return;
  }
  auto graph = cg::launch<&counted_pair>(options);
  ::unsetenv("CG_MAX_RESTARTS");
  EXPECT_EQ(graph.execute(Values{0}).get(), (Values{0, 1, 1}));
  const Clock::time_point killed_at = Clock::now();
  ::kill(actor_pid("counted_pair", "b"), SIGKILL);
  // Until the restart, an execution may be lost to it; then b counts anew.
  std::optional<Values> first;
  std::int64_t x = 1;
  for (; !first && Clock::now() - killed_at < 10s; ++x)
    try {
      first = graph.execute(Values{x}).get();
    } catch (const cg::ActorDiedError& e) {
      ASSERT_TRUE(e.restarted()) << e.what();
    }
  ASSERT_TRUE(first.has_value()) << "no value within 10 s of the kill";
  report_recovery("one at a time", Clock::now() - killed_at);
  EXPECT_EQ(*first, (Values{x - 1, x, 1}));
  EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"b", 1}}));
}

TEST_F(Restarts, AnActorThatCannotStartAgainUsesUpItsRestartsAndTheErrorSaysHowMany) {
  const std::string refuse = "/tmp/cg-restart-refuse-" + std::to_string(::getpid());
  ::unlink(refuse.c_str());
  ::setenv("CG_TEST_REFUSE_FILE", refuse.c_str(), 1);
  cg::LaunchOptions options = restart_options();
  options.max_restarts = 2;
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&refusing>(options);
  auto graph = cg::launch<&refusing>(options);
  EXPECT_EQ(graph.execute(7).get(), 7);
  std::ofstream(refuse) << "no\n"; // every restart's constructor throws from now on
  ::kill(actor_pid("refusing", "a"), SIGKILL);
  std::string final_error;
  for (int tries = 0; tries < 100 && final_error.empty(); ++tries)
    try {
      graph.execute(8).get();
      ADD_FAILURE() << "an actor that cannot be constructed returned a value";
    } catch (const cg::ActorDiedError& e) {
      if (!e.restarted())
        final_error = e.what();
    }
  ::unlink(refuse.c_str());
  ::unsetenv("CG_TEST_REFUSE_FILE");
  EXPECT_EQ(final_error, "actor 'a' of graph 'refusing' exited with code 2 (std::runtime_error: "
                         "refusing to start while " +
                             refuse + " exists); its restarts are used up (2 of 2)");
  EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"a", 2}}));
  // Unusable from then on, as after a death without restarts.
  try {
    graph.execute(9);
    ADD_FAILURE() << "a graph whose restarts are used up took an execution";
  } catch (const cg::ActorDiedError& e) {
    EXPECT_EQ(e.what(), final_error);
    EXPECT_FALSE(e.restarted());
  }
}

TEST_F(Restarts, ABadMaxRestartsInTheEnvironmentIsALaunchErrorNamingIt) {
  ::setenv("CG_MAX_RESTARTS", "three", 1);
  try {
    cg::launch<&counted_pair>();
    ADD_FAILURE() << "launched with CG_MAX_RESTARTS=three";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "the environment variable CG_MAX_RESTARTS is 'three': it must be a "
                           "count of restarts per actor, 0 to 1000000");
  }
  ::unsetenv("CG_MAX_RESTARTS");
}

TEST_F(Restarts, RestartsOfAnActorTheGraphDoesNotHaveAreALaunchError) {
  cg::LaunchOptions options;
  options.actor_max_restarts = {{"z", 1}};
  try {
    cg::launch<&counted_pair>(options);
    ADD_FAILURE() << "launched with restarts for actor 'z'";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "cg::LaunchOptions::actor_max_restarts names actor 'z', which graph "
                           "'counted_pair' does not have");
  }
}

} // namespace
