// graphs_test.cpp - errors as values, capacity, faults and graph shapes
// beyond the quickstart, end to end.
#include "../support/durations.hpp"
#include "../support/proc_status.hpp"
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
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>
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
  std::vector<double> large(8 << 20, 0.5); // 64 MiB, through two actors and back
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

// Fire-and-forget: 300 executions whose refs are dropped at once, each with a
// 1 MiB result, through a window of 4. None may use up the window for good,
// nor leave its result in the driver.
void drop_refs_of_large_results(bool collector_thread) {
  cg::LaunchOptions options;
  options.max_in_flight = 4;
  auto graph = cg::launch<&vectors>(options);
  if (collector_thread)
    (void)graph.results_fd(); // results are then collected as they arrive
  const std::vector<double> large(128 * 1024, 1.0);
  (void)graph.execute(2, large).get(); // buffers of that size exist from here on
  const long before = cg_test::resident_kib();
  for (int i = 0; i < 300; ++i)
    (void)graph.execute(2, large);
  auto [scaled, sum] = graph.execute(3, std::vector<double>{1.0}).get();
  EXPECT_EQ(scaled, std::vector<double>{9.0});
  EXPECT_EQ(sum, 6);
#if !defined(__SANITIZE_ADDRESS__) // ASan keeps freed memory in quarantine (256 MiB)
  EXPECT_LT(cg_test::resident_kib() - before, 64 * 1024) << "results of dropped refs were kept";
#else
  (void)before;
#endif
}

TEST_F(Graphs, DroppedRefsNeitherUseUpTheWindowNorKeepTheirResults) {
  drop_refs_of_large_results(false);
}

TEST_F(Graphs, DroppedRefsAreDiscardedByTheCollectorThreadToo) { drop_refs_of_large_results(true); }

TEST_F(Graphs, ARefDroppedBetweenHeldOnesLeavesThemTheirResults) {
  cg::LaunchOptions options;
  options.max_in_flight = 2;
  auto graph = cg::launch<&adder>(options);
  auto first = graph.execute(1);
  { auto dropped = graph.execute(2); }
  auto third = graph.execute(3); // two in flight, but one nobody can take
  EXPECT_EQ(third.get(), 5);
  EXPECT_EQ(first.get(), 3);
  // Copies stand for one result: dropping one abandons nothing.
  auto kept = graph.execute(7);
  { auto copy = kept; }
  EXPECT_EQ(kept.get(), 9);
  auto copied = graph.execute(8);
  auto copy = copied;
  EXPECT_EQ(copy.get(), 10);
  EXPECT_THROW(copied.get(), cg::Error) << "a copy's result is taken too";
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

TEST_F(Graphs, AStoppedActorIsNamedAndTheExecutionsBehindItFailAtOnce) {
  CG_SKIP_IN_THREADS_MODE();
  cg::LaunchOptions options;
  options.max_in_flight = 8;
  options.get_timeout = std::chrono::milliseconds(500);
  auto graph = cg::launch<&adder>(options);
  EXPECT_EQ(graph.execute(1).get(), 3);
  for (int stopped : cg_test::child_pids()) { // the first actor, then the second
    const std::string cause = "actor '" + cg_test::actor_of(stopped) + "' (pid " +
                              std::to_string(stopped) + ") has made no progress for X s";
    ::kill(stopped, SIGSTOP);
    std::vector<cg::Ref<int>> refs;
    for (int i = 0; i < 8; ++i)
      refs.push_back(graph.execute(i));
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const std::string execution =
          "no result of execution " + std::to_string(refs[i].sequence()) + " of graph 'adder'";
      try {
        refs[i].get();
        ADD_FAILURE() << "expected cg::TimeoutError";
      } catch (const cg::TimeoutError& e) {
        // The first waits its timeout; those behind it fail at once.
        EXPECT_EQ(cg_test::seconds_as_x(e.what(), 0.5),
                  i == 0 ? execution + " within 500 ms: " + cause : execution + ": " + cause);
      }
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
    ::kill(stopped, SIGCONT); // the graph goes on, and the refs are still valid
    for (std::size_t i = 0; i < refs.size(); ++i)
      EXPECT_EQ(refs[i].get(), static_cast<int>(i) + 2);
  }
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
    auto [sum, length, ramp] =
        graph.execute(values, std::string(size, 'x'), static_cast<int>(size)).get();
    EXPECT_EQ(sum, std::to_string(2 * size) + " in place");
    EXPECT_EQ(length, std::to_string(size) + " in place");
    EXPECT_EQ(ramp, std::to_string(size * (size - 1) / 2) + " in place");
  }
}

// ---- CPU binding (cg/cpu_binding.hpp) -------------------------------------------

// The CPUs of each thread of this process, by thread id.
std::vector<std::vector<int>> thread_cpus() {
  std::vector<std::vector<int>> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    out.push_back(cg::detail::cpus_of(std::stoi(task.path().filename().string())));
  return out;
}

TEST_F(Graphs, BoundToCoresTheDriverThreadAndTheActorEachGetACpu) {
  const std::vector<int> allowed = cg::detail::cpus_of(0);
  if (allowed.size() < 2)
    GTEST_SKIP() << "needs 2 CPUs to bind a driver and an actor; this process may use "
                 << allowed.size();
  std::vector<int> in_graph, actor_cpus;
  std::thread driver([&] {
    cg::LaunchOptions options;
    options.cpu_binding = cg::CpuBinding::cores;
    auto graph = cg::launch<&repeater>(options);
    in_graph = cg::detail::cpus_of(0);
    EXPECT_TRUE(cg::detail::has_own_cpu());
    EXPECT_EQ(graph.bound_cpus(), (std::vector<int>{allowed[0], allowed[1]}));
    if (cg_test::threads_mode()) {
      const auto all = thread_cpus();
      EXPECT_EQ(std::count(all.begin(), all.end(), std::vector<int>{allowed[1]}), 1)
          << "one thread, the actor's, runs on the second CPU";
    } else {
      const std::vector<int> children = cg_test::child_pids();
      ASSERT_EQ(children.size(), 1u);
      actor_cpus = cg::detail::cpus_of(children[0]);
    }
    EXPECT_EQ(graph.execute(3).get(), "xxx");
    graph.teardown();
    EXPECT_EQ(cg::detail::cpus_of(0), allowed)
        << "teardown gives the launching thread its CPUs back";
    EXPECT_FALSE(cg::detail::has_own_cpu());
  });
  driver.join();
  EXPECT_EQ(in_graph, std::vector<int>{allowed[0]});
  if (!cg_test::threads_mode()) {
    EXPECT_EQ(actor_cpus, std::vector<int>{allowed[1]});
  }
}

TEST_F(Graphs, BindingToCoresWithMoreParticipantsThanCpusBindsNobody) {
  const std::vector<int> allowed = cg::detail::cpus_of(0);
  ASSERT_FALSE(allowed.empty());
  std::vector<int> bound, in_graph;
  std::thread driver([&] {
    ASSERT_TRUE(cg::detail::set_cpus(0, {allowed[0]})); // one CPU for a driver and an actor
    cg::LaunchOptions options;
    options.cpu_binding = cg::CpuBinding::cores;
    auto graph = cg::launch<&repeater>(options);
    bound = graph.bound_cpus();
    in_graph = cg::detail::cpus_of(0);
    EXPECT_FALSE(cg::detail::has_own_cpu()) << "nothing bound: waits stay short";
    EXPECT_EQ(graph.execute(2).get(), "xx");
  });
  driver.join();
  EXPECT_EQ(bound, std::vector<int>{});
  EXPECT_EQ(in_graph, std::vector<int>{allowed[0]})
      << "the thread's own restriction is left as it was";
}

// The environment of actor process `pid` (NUL-separated entries).
std::string environment_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(Graphs, WithACpuForEachOfItsThreadsTheGraphSpinsUnlessToldNotTo) {
  const std::vector<int> allowed = cg::detail::cpus_of(0);
  if (allowed.size() < 2)
    GTEST_SKIP() << "needs 2 CPUs for a driver and an actor; this process may use "
                 << allowed.size();
  for (bool spin : {true, false}) {
    SCOPED_TRACE(spin ? "spin_when_cpus_suffice" : "told not to spin");
    bool own = !spin;
    std::string actor_env;
    std::thread driver([&] {
      cg::LaunchOptions options;
      options.spin_when_cpus_suffice = spin;
      auto graph = cg::launch<&repeater>(options);
      own = cg::detail::has_own_cpu();
      EXPECT_EQ(graph.bound_cpus(), std::vector<int>{}) << "spinning binds nothing";
      EXPECT_EQ(cg::detail::cpus_of(0), allowed);
      if (!cg_test::threads_mode()) {
        const std::vector<int> children = cg_test::child_pids();
        ASSERT_EQ(children.size(), 1u);
        actor_env = environment_of(children[0]);
      }
      EXPECT_EQ(graph.execute(1).get(), "x");
      graph.teardown();
      EXPECT_FALSE(cg::detail::has_own_cpu())
          << "teardown gives the launching thread its waits back";
    });
    driver.join();
    EXPECT_EQ(own, spin);
    if (!cg_test::threads_mode()) {
      EXPECT_NE(actor_env.find(std::string("CG_ACTOR_SPIN=") + (spin ? "1" : "0") + '\0'),
                std::string::npos);
      EXPECT_EQ(actor_env.find("CG_ACTOR_CPU="), std::string::npos);
    }
  }
}

TEST_F(Graphs, AnUnknownCpuBindingInTheEnvironmentIsALaunchError) {
  ::setenv("CG_CPU_BINDING", "numa", 1);
  try {
    auto graph = cg::launch<&repeater>();
    ADD_FAILURE() << "no LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "the environment variable CG_CPU_BINDING is 'numa'; it must be 'none' "
                           "or 'cores' (or unset)");
  }
  ::unsetenv("CG_CPU_BINDING");
}

} // namespace
