// graphs_test.cpp - errors as values, capacity, faults and graph shapes
// beyond the quickstart, end to end.
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

namespace {

using Graphs = cg_test::NoLeftovers;

TEST_F(Graphs, DiamondJoinsTwoPaths) {
  auto graph = cg::launch<&diamond>();
  EXPECT_EQ(graph.execute(10).get(), 22);
  EXPECT_EQ(graph.execute(0).get(), 2);
}

TEST_F(Graphs, TaskWithTwoFailedInputsForwardsTheFirstArgumentsError) {
  auto graph = cg::launch<&diamond>();
  try {
    graph.execute(-1).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
  }
  EXPECT_EQ(graph.execute(1).get(), 4);
}

TEST_F(Graphs, SameActorEdgeStaysInProcess) {
  auto graph = cg::launch<&same_actor>();
  EXPECT_EQ(cg_test::child_pids().size(), cg_test::actor_processes(1));
  EXPECT_EQ(graph.execute(40).get(), 42);
}

TEST_F(Graphs, VectorsAndRepeatedArgumentsRoundTrip) {
  auto graph = cg::launch<&vectors>();
  auto [scaled, doubled] = graph.execute(3, std::vector<double>{1.0, -2.5, 4.0}).get();
  EXPECT_EQ(scaled, (std::vector<double>{9.0, -22.5, 36.0}));
  EXPECT_EQ(doubled, 6);
}

TEST_F(Graphs, MethodExceptionReachesGetAsTaskErrorAndTheGraphStaysUsable) {
  auto graph = cg::launch<&adder>();
  try {
    graph.execute(-5).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.method(), "add_one");
    EXPECT_EQ(e.exception_type(), "std::invalid_argument");
    EXPECT_EQ(e.message(), "negative input -5");
    EXPECT_STREQ(e.what(), "task a.add_one failed: std::invalid_argument: negative input -5");
  }
  EXPECT_EQ(graph.execute(1).get(), 3);
}

TEST_F(Graphs, ResultLargerThanASlotIsDeliveredWhole) {
  cg::LaunchOptions options;
  options.slot_bytes = 1024;
  auto graph = cg::launch<&repeater>(options);
  EXPECT_EQ(graph.execute(100).get(), std::string(100, 'x'));
  EXPECT_EQ(graph.execute(5000).get(), std::string(5000, 'x'));
  std::string large = graph.execute(64 << 20).get();
  EXPECT_EQ(large.size(), std::size_t{64} << 20);
  EXPECT_EQ(large.find_first_not_of('x'), std::string::npos);
  EXPECT_EQ(graph.execute(3).get(), "xxx");
}

TEST_F(Graphs, InputLargerThanASlotIsDeliveredWhole) {
  cg::LaunchOptions options;
  options.slot_bytes = 256;
  auto graph = cg::launch<&vectors>(options);
  auto [scaled, doubled] = graph.execute(2, std::vector<double>(100, 1.0)).get();
  EXPECT_EQ(scaled, std::vector<double>(100, 4.0));
  EXPECT_EQ(doubled, 4);
  std::vector<double> large(8 << 20, 0.5);  // 64 MiB, through two actors and back
  large.back() = -1.0;
  auto [large_scaled, large_doubled] = graph.execute(2, large).get();
  ASSERT_EQ(large_scaled.size(), large.size());
  EXPECT_EQ(large_scaled.front(), 2.0);
  EXPECT_EQ(large_scaled.back(), -4.0);
  EXPECT_EQ(large_doubled, 4);
  EXPECT_EQ(std::count(large_scaled.begin(), large_scaled.end(), 2.0),
            static_cast<std::ptrdiff_t>(large.size() - 1));
  auto [small_scaled, small_doubled] = graph.execute(2, std::vector<double>{1.0}).get();
  EXPECT_EQ(small_scaled, std::vector<double>{4.0});
  EXPECT_EQ(small_doubled, 4);
}

TEST_F(Graphs, HugeExceptionMessageIsShortenedToFitASlot) {
  cg::LaunchOptions options;
  options.slot_bytes = 1024;
  auto graph = cg::launch<&shouter>(options);
  try {
    graph.execute(5000).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.exception_type(), "std::runtime_error");
    EXPECT_LT(e.message().size(), 1024u);
    EXPECT_EQ(e.message().substr(e.message().size() - 15), "!!! [truncated]");
  }
  EXPECT_THROW(graph.execute(3).get(), cg::TaskError);
}

TEST_F(Graphs, MoreExecutionsThanMaxInFlightIsRefused) {
  cg::LaunchOptions options;
  options.max_in_flight = 2;
  auto graph = cg::launch<&adder>(options);
  auto first = graph.execute(1);
  auto second = graph.execute(2);
  EXPECT_THROW(graph.execute(3), cg::CapacityExceeded);
  EXPECT_EQ(first.get(), 3);
  auto third = graph.execute(3);
  EXPECT_EQ(second.get(), 4);
  EXPECT_EQ(third.get(), 5);
}

TEST_F(Graphs, KilledActorIsReportedByGetWithinASecond) {
  CG_SKIP_IN_THREADS_MODE();
  auto graph = cg::launch<&adder>();
  EXPECT_EQ(graph.execute(1).get(), 3);
  std::vector<int> actors = cg_test::child_pids();
  ASSERT_EQ(actors.size(), 2u);
  ::kill(actors[0], SIGKILL);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(graph.execute(1).get(), cg::ActorDiedError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_THROW(graph.execute(1), cg::ActorDiedError);
}

TEST_F(Graphs, GetTimesOutWhenAnActorIsStopped) {
  CG_SKIP_IN_THREADS_MODE();
  cg::LaunchOptions options;
  options.get_timeout = std::chrono::milliseconds(200);
  auto graph = cg::launch<&adder>(options);
  std::vector<int> actors = cg_test::child_pids();
  ASSERT_EQ(actors.size(), 2u);
  ::kill(actors[0], SIGSTOP);
  EXPECT_THROW(graph.execute(1).get(), cg::TimeoutError);
  ::kill(actors[0], SIGCONT);
}

TEST_F(Graphs, MissingActorExecutableIsALaunchError) {
  CG_SKIP_IN_THREADS_MODE();
  cg::LaunchOptions options;
  options.actor_host = "/nonexistent/actors";
  try {
    cg::launch<&adder>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "actor executable '/nonexistent/actors' of graph 'adder' is missing "
                           "or not executable; build it, or set cg::LaunchOptions::actor_host");
  }
}

TEST_F(Graphs, GetTwiceOnOneRefIsAnError) {
  auto graph = cg::launch<&adder>();
  auto ref = graph.execute(1);
  EXPECT_EQ(ref.get(), 3);
  EXPECT_THROW(ref.get(), cg::Error);
}

TEST_F(Graphs, ExecuteAsyncGivesAFutureAndResultsFdSaysWhenItIsReady) {
  auto graph = cg::launch<&adder>();
  std::future<int> sum = graph.execute_async(40);
  std::future<int> failed = graph.execute_async(-1);
  pollfd ready{graph.results_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&ready, 1, 5'000), 1);
  std::uint64_t count = 0;
  ASSERT_EQ(::read(ready.fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_GE(count, 1u);
  EXPECT_EQ(sum.get(), 42);
  EXPECT_THROW(failed.get(), cg::TaskError);
}

TEST_F(Graphs, ThreadsModeRunsEveryActorInTheDriverProcessWithoutTheExecutable) {
  auto tasks = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                         std::filesystem::directory_iterator{});
  };
  auto before = tasks();
  cg::LaunchOptions options;
  options.mode = cg::Mode::threads;
  options.actor_host = "/nonexistent/actors";
  auto graph = cg::launch<&diamond>(options);
  EXPECT_EQ(cg_test::child_pids(), std::vector<int>{});
  EXPECT_EQ(tasks(), before + 3);
  EXPECT_EQ(graph.execute(1).get(), 4);
  EXPECT_THROW(graph.execute(-1).get(), cg::TaskError);
  EXPECT_EQ(graph.execute(2).get(), 6);
}

TEST_F(Graphs, SpanAndStringViewParametersReadValuesInPlace) {
  cg::LaunchOptions options;
  options.slot_bytes = 1024;
  auto graph = cg::launch<&in_place>(options);
  // Small values sit in the slot, large ones in its overflow buffer: both in place.
  for (std::size_t size : {std::size_t{4}, std::size_t{100'000}}) {
    std::vector<double> values(size, 2.0);
    auto [sum, length, ramp] = graph.execute(values, std::string(size, 'x'),
                                             static_cast<int>(size)).get();
    EXPECT_EQ(sum, std::to_string(2 * size) + " in place");
    EXPECT_EQ(length, std::to_string(size) + " in place");
    EXPECT_EQ(ramp, std::to_string(size * (size - 1) / 2) + " in place");
  }
}

} // namespace
