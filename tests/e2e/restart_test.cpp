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
// for them is a LaunchError there. The killing and the checks of a stream
// are restart_stream.hpp's.
#include "e2e_restart_graphs.cg.hpp"
#include "leftovers.hpp"
#include "restart_stream.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace cg_test::restarts;
using Restarts = cg_test::NoLeftovers;

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
  check_stream(outcomes, "counted_pair", {{"a", Count::afresh}, {"b", Count::all_but_lost}}, "a");
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
  check_stream(outcomes, "counted_chain",
               {{"a", Count::every}, {"b", Count::afresh}, {"c", Count::all_but_lost}}, "b");
  report_recovery("chain", recovered);
}

// One value read by two actors: the reader killed loses the executions
// queued behind it, its sibling reads every value as if nothing happened, and
// the actor joining both passes the loss on.
TEST_F(Restarts, KilledReaderOfAFannedOutValueCostsOnlyTheExecutionsQueuedBehindIt) {
  cg::LaunchOptions options = restart_options();
  options.actor_max_restarts = {{"b", 1}};
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&fanned_out>(options);
  Clock::duration recovered{};
  std::vector<Outcome> outcomes;
  {
    auto graph = cg::launch<&fanned_out>(options);
    outcomes = killed_in_stream(graph, "fanned_out", "b", recovered);
    EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"b", 1}}));
  }
  check_stream(
      outcomes, "fanned_out",
      {{"a", Count::every}, {"b", Count::afresh}, {"c", Count::every}, {"d", Count::all_but_lost}},
      "b");
  report_recovery("fanned out", recovered);
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
