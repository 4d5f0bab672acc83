// driver_test.cpp - tests of the driver side (cg/driver.hpp) on a hand-written graph.
//
// The graph below is written the way cgc generates one (a GraphSpec, and an
// actor entry running READ/COMPUTE/WRITE in a loop), and this very executable
// is its actor host: started as `runtime_tests <graph> <actor> <segment>`, it
// runs the actor instead of the tests (see kRunsAsActor). So the driver's
// contract — per-call timeouts, futures, the results descriptor, values larger
// than a slot, corrupted shared memory — is tested without cgc, and under the
// thread sanitizer with the collector and monitor threads running.
//
// One file, about 770 lines: this executable is the hand-written graph's
// actor host, and every test drives that one graph.
#include "../../../support/durations.hpp"
#include "../../../support/runtime_memfds.hpp"
#include "actor/segment.hpp"
#include <cg/driver.hpp>

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "shm/channel_layout.hpp"
#include <cg/actor.hpp>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---- the graph: driver -> a.perform -> driver ------------------------------

// "sleep:<ms>" sleeps, then echoes; "throw:<message>" throws; "big:<n>"
// returns n 'x's; anything else is echoed.
std::string perform(std::string request) {
  if (request.rfind("sleep:", 0) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(request.substr(6))));
  } else if (request.rfind("throw:", 0) == 0) {
    throw std::runtime_error(request.substr(6));
  } else if (request.rfind("big:", 0) == 0) {
    return std::string(std::stoul(request.substr(4)), 'x');
  }
  return request;
}

int run_a(cg::ActorProcess& process);

constexpr std::array<cg::detail::ActorSpec, 1> kActorSpecs{{{"a", &run_a}}};
constexpr std::array<int, 1> kReadByA{0};
constexpr std::array<int, 1> kReadByDriver{-1};
constexpr std::array<cg::detail::ChannelSpec, 2> kChannels{{
    {-1, kReadByA},     // c0: input #0
    {0, kReadByDriver}, // c1: a.perform
}};
constexpr std::array<std::uint32_t, 1> kInputs{0};
constexpr std::array<std::uint32_t, 1> kOutputs{1};
constexpr cg::detail::GraphSpec kSpec{"cg_test_echo", kActorSpecs, kChannels,
                                      kInputs,        kOutputs,    {}};

int run_a(cg::ActorProcess& process) {
  auto c0 = process.input<std::string>(0, 0);
  auto c1 = process.output<std::string>(1, "perform");
  process.ready();
  for (;;) {
    cg::Result<std::string> v0;
    if (!c0.read(v0))
      return 0;
    cg::Result<std::string> v1 = process.call(
        "perform", [&] { return perform(v0.take()); }, v0);
    if (!c1.write(v1))
      return 0;
  }
}

constexpr const cg::detail::GraphSpec* kGraphs[] = {&kSpec};

std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');)
    args.push_back(arg);
  return args;
}

// Started by the driver as our graph's actor host: be the actor, then exit.
const bool kRunsAsActor = [] {
  std::vector<std::string> args = command_line();
  if (args.size() != 4 || args[1] != kSpec.name)
    return false;
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::exit(cg::detail::actor_host_main(4, argv.data(), kGraphs));
}();

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe"); }

// Processes mode unless a test asks for threads, whatever CG_MODE says.
std::shared_ptr<cg::detail::GraphRuntime> launch(cg::LaunchOptions options = {}) {
  if (!options.mode)
    options.mode = cg::Mode::processes;
  return std::make_shared<cg::detail::GraphRuntime>(kSpec, self_path(), options);
}

cg::Ref<std::string> execute(const std::shared_ptr<cg::detail::GraphRuntime>& graph,
                             const std::string& input) {
  std::uint64_t seq = graph->begin_execution();
  graph->write_input(0, input);
  return cg::Ref<std::string>(graph, seq);
}

// Children of this process that are alive (or zombies): the actors.
std::vector<pid_t> child_pids() {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line))
      continue;
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid())
      pids.push_back(std::stoi(name));
  }
  return pids;
}

// ---- reaching into the live segment, as a stray write would ---------------

// The driver's mapping of a graph's segment, found by the name the runtime
// gives its memfd.
std::span<std::byte> graph_segment(const char* graph) {
  const std::span<std::byte> segment = cg_test::graph_segment_mapping(graph);
  if (segment.empty())
    ADD_FAILURE() << "no mapping of graph '" << graph << "' in this process";
  return segment;
}

struct LiveChannel {
  cg::detail::ChannelHeader* header;
  cg::detail::SlotHeader* slot(std::uint32_t index) const {
    return cg::detail::slot_header(header, header->readers, header->slot_stride, index);
  }
  std::byte* payload(std::uint32_t index) const { return cg::detail::message_payload(slot(index)); }
  // Waits until message `sequence` is published in its slot.
  bool wait_published(std::uint64_t sequence) const {
    const auto deadline = Clock::now() + 10s;
    while (slot(static_cast<std::uint32_t>(sequence % header->max_in_flight))->sequence.load() !=
           sequence + 1) {
      if (Clock::now() > deadline)
        return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
};

LiveChannel live_channel(const cg::LaunchOptions& options, std::uint32_t channel) {
  std::span<std::byte> segment = graph_segment(kSpec.name);
  // Laid out as the segment's header says it was launched.
  const auto* launched = reinterpret_cast<const cg::detail::SegmentHeader*>(segment.data());
  EXPECT_EQ(launched->geometry.max_in_flight, options.max_in_flight);
  const cg::detail::SegmentLayout layout = cg::detail::segment_layout(kSpec, launched->geometry);
  return {reinterpret_cast<cg::detail::ChannelHeader*>(segment.data() +
                                                       layout.channel_offsets.at(channel))};
}

// ---- timeouts ---------------------------------------------------------------

TEST(Driver, GetWithATimeoutWaitsThatLongInsteadOfTheGraphsGetTimeout) {
  cg::LaunchOptions options;
  options.get_timeout = 20s;
  auto graph = launch(options);
  const auto executed = Clock::now();
  cg::Ref<std::string> ref = execute(graph, "sleep:1500");
  const auto start = Clock::now();
  try {
    ref.get(100ms);
    FAIL() << "expected cg::TimeoutError";
  } catch (const cg::TimeoutError& e) {
    // The busy actor is named; being busy, not stopped, it is waited for again.
    const std::string pid = std::to_string(child_pids().at(0));
    // Its method began after execute(): the figure is at most the time since
    // then, however loaded the machine (it was 0.2 s for a 0.1 s timeout once).
    const double since_execute = std::chrono::duration<double>(Clock::now() - executed).count();
    EXPECT_EQ(cg_test::seconds_as_x(e.what(), since_execute + 0.05),
              "no result of execution 0 of graph 'cg_test_echo' within 100 ms: actor 'a' (pid " +
                  pid + ") has made no progress for X s");
  }
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_EQ(ref.get(10s), "sleep:1500") << "a timed-out ref stays valid";
  EXPECT_THROW(ref.get(), cg::Error) << "taken";
}

TEST(Driver, GetWithAZeroTimeoutOnlyTakesAResultThatIsAlreadyIn) {
  auto graph = launch();
  cg::Ref<std::string> ref = execute(graph, "sleep:300");
  EXPECT_FALSE(ref.ready());
  EXPECT_THROW(ref.get(0ms), cg::TimeoutError);
  const auto deadline = Clock::now() + 10s;
  while (!ref.ready() && Clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(ref.ready()) << "ready() collects what has arrived";
  EXPECT_EQ(ref.get(0ms), "sleep:300");
  EXPECT_FALSE(ref.ready()) << "taken";
}

TEST(Driver, SubmitTimeoutBoundsAnInputThatCannotBeHandedOver) {
  cg::LaunchOptions options;
  options.max_in_flight = 2;
  options.get_timeout = 20s;
  options.submit_timeout = 200ms;
  auto graph = launch(options);
  EXPECT_EQ(execute(graph, "one").get(), "one");
  EXPECT_EQ(execute(graph, "two").get(), "two");
  // The actor's reader now claims to have released nothing: the input ring
  // looks full although no execution is in flight.
  LiveChannel input = live_channel(options, 0);
  cg::detail::reader_state(input.header, 0)->consumed.store(0);
  const auto start = Clock::now();
  try {
    execute(graph, "three");
    FAIL() << "expected cg::TimeoutError";
  } catch (const cg::TimeoutError& e) {
    EXPECT_STREQ(e.what(), "input #0 of graph 'cg_test_echo' could not be submitted within 200 ms");
  }
  EXPECT_LT(Clock::now() - start, 5s) << "the submit timeout, not the get timeout";
}

// ---- futures and the results descriptor -------------------------------------

TEST(Driver, FutureIsSetWhenItsExecutionCompletes) {
  auto graph = launch();
  std::future<std::string> first = execute(graph, "sleep:200").get_future();
  std::future<std::string> second = execute(graph, "second").get_future();
  EXPECT_EQ(first.wait_for(0s), std::future_status::timeout);
  ASSERT_EQ(second.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(first.wait_for(0s), std::future_status::ready) << "results arrive in execution order";
  EXPECT_EQ(first.get(), "sleep:200");
  EXPECT_EQ(second.get(), "second");
}

TEST(Driver, FutureCarriesTheTaskErrorAndTheGraphStaysUsable) {
  auto graph = launch();
  std::future<std::string> failed = execute(graph, "throw:boom").get_future();
  try {
    failed.get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_STREQ(e.what(), "task a.perform failed: std::runtime_error: boom");
  }
  EXPECT_EQ(execute(graph, "after").get(), "after") << "get() waits for the collector's result";
}

TEST(Driver, RefCanBeTurnedIntoAFutureOnlyOnce) {
  auto graph = launch();
  cg::Ref<std::string> ref = execute(graph, "x");
  std::future<std::string> future = ref.get_future();
  EXPECT_THROW(ref.get_future(), cg::Error);
  EXPECT_THROW(ref.get(), cg::Error);
  EXPECT_EQ(future.get(), "x");
}

TEST(Driver, ResultsFdBecomesReadableWhenAResultIsInAndGetThenDoesNotBlock) {
  auto graph = launch();
  const int fd = graph->results_fd();
  EXPECT_EQ(graph->results_fd(), fd) << "one descriptor per graph";
  cg::Ref<std::string> slow = execute(graph, "sleep:300");
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 50), 0) << "nothing is in yet";
  EXPECT_FALSE(slow.ready());

  ASSERT_EQ(poll(&p, 1, 10'000), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  std::uint64_t count = 0;
  ASSERT_EQ(read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 1u);
  EXPECT_TRUE(slow.ready());
  EXPECT_EQ(slow.get(0ms), "sleep:300");
  EXPECT_EQ(poll(&p, 1, 0), 0) << "read resets it";
}

TEST(Driver, ResultsFdCountsResultsCollectedBeforeItWasAskedFor) {
  auto graph = launch();
  cg::Ref<std::string> first = execute(graph, "first");
  while (!first.ready())
    std::this_thread::sleep_for(1ms); // collected in this thread
  const int fd = graph->results_fd();
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1) << "a result is waiting to be taken";
  EXPECT_EQ(first.get(0ms), "first");
}

TEST(Driver, FuturesFreeCapacityAsTheirResultsArrive) {
  cg::LaunchOptions options;
  options.max_in_flight = 2;
  auto graph = launch(options);
  std::vector<std::future<std::string>> futures;
  for (int i = 0; i < 50; ++i) {
    // The collector takes results off the channels, so capacity comes back
    // without anyone calling get(); wait for it rather than spin on execute().
    const auto deadline = Clock::now() + 10s;
    for (;;) {
      try {
        futures.push_back(execute(graph, "n" + std::to_string(i)).get_future());
        break;
      } catch (const cg::CapacityExceeded&) {
        ASSERT_LT(Clock::now(), deadline);
        std::this_thread::sleep_for(1ms);
      }
    }
  }
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(futures[static_cast<std::size_t>(i)].get(), "n" + std::to_string(i));
}

TEST(Driver, FuturesOfAGraphWhoseActorDiedFailWithActorDiedError) {
  auto graph = launch();
  std::future<std::string> pending = execute(graph, "sleep:10000").get_future();
  const int fd = graph->results_fd();
  std::vector<pid_t> actors = child_pids();
  ASSERT_EQ(actors.size(), 1u);
  kill(actors[0], SIGKILL);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  try {
    pending.get();
    FAIL() << "expected cg::ActorDiedError";
  } catch (const cg::ActorDiedError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_STREQ(e.what(), "actor 'a' of graph 'cg_test_echo' killed by signal 9 (Killed)");
  }
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 5000), 1) << "pollers learn of the failure too";
  EXPECT_THROW(execute(graph, "more"), cg::ActorDiedError);
}

TEST(Driver, TeardownFailsPendingFuturesWithChannelClosedError) {
  auto graph = launch();
  std::future<std::string> pending = execute(graph, "sleep:10000").get_future();
  graph->teardown();
  ASSERT_EQ(pending.wait_for(0s), std::future_status::ready);
  try {
    pending.get();
    FAIL() << "expected cg::ChannelClosedError";
  } catch (const cg::ChannelClosedError& e) {
    EXPECT_STREQ(e.what(), "graph 'cg_test_echo' was torn down");
  }
  EXPECT_EQ(child_pids(), std::vector<pid_t>{});
}

// ---- values larger than a slot ----------------------------------------------

TEST(Driver, SixtyFourMebibyteValuesTravelBothWaysThroughOneKibibyteSlots) {
  cg::LaunchOptions options;
  options.slot_bytes = 1024;
  auto graph = launch(options);
  std::string large(64 << 20, 'L');
  large.front() = '<';
  large.back() = '>';
  EXPECT_EQ(execute(graph, large).get(), large);
  EXPECT_EQ(execute(graph, "small").get(), "small");
  EXPECT_EQ(execute(graph, "big:" + std::to_string(64 << 20)).get(), std::string(64 << 20, 'x'));
  std::future<std::string> async_large = execute(graph, large).get_future();
  EXPECT_EQ(async_large.get(), large);
}

// ---- corrupted shared memory: a clear error, never a crash or garbage --------

TEST(Driver, ImpossibleResultSlotSizeIsAClearErrorAndStopsTheGraph) {
  cg::LaunchOptions options;
  options.slot_bytes = 256;
  auto graph = launch(options);
  cg::Ref<std::string> ref = execute(graph, "hello");
  LiveChannel result = live_channel(options, 1);
  ASSERT_TRUE(result.wait_published(0));
  result.slot(0)->size.store(0x7FFF'FFFF);
  const std::string expected = "result channel 1 of graph 'cg_test_echo' is corrupt: its shared "
                               "memory holds impossible values; "
                               "the graph cannot execute any more";
  try {
    ref.get();
    FAIL() << "expected cg::Error";
  } catch (const cg::Error& e) {
    EXPECT_EQ(e.what(), expected);
  }
  try {
    execute(graph, "again");
    FAIL() << "expected cg::Error";
  } catch (const cg::Error& e) {
    EXPECT_EQ(e.what(), expected) << "the graph stays stopped, for the same reason";
  }
}

TEST(Driver, ResultSequenceAheadOfTheExpectedOneIsAClearError) {
  auto graph = launch();
  cg::Ref<std::string> ref = execute(graph, "hello");
  LiveChannel result = live_channel({}, 1);
  ASSERT_TRUE(result.wait_published(0));
  result.slot(0)->sequence.store(7);
  EXPECT_THROW(
      {
        try {
          ref.get();
        } catch (const cg::Error& e) {
          EXPECT_NE(
              std::string(e.what()).find("result channel 1 of graph 'cg_test_echo' is corrupt"),
              std::string::npos)
              << e.what();
          throw;
        }
      },
      cg::Error);
}

TEST(Driver, CorruptLengthPrefixOfAResultIsAClearErrorAndTheGraphStaysUsable) {
  auto graph = launch();
  cg::Ref<std::string> ref = execute(graph, "hello");
  LiveChannel result = live_channel({}, 1);
  ASSERT_TRUE(result.wait_published(0));
  const std::uint64_t length = 1'000'000;
  std::memcpy(result.payload(0), &length, sizeof length);
  try {
    ref.get();
    FAIL() << "expected cg::Error";
  } catch (const cg::TaskError&) {
    FAIL() << "not a task's error";
  } catch (const cg::Error& e) {
    EXPECT_STREQ(
        e.what(),
        "the result of execution 0 of graph 'cg_test_echo' cannot be decoded (corrupted in "
        "shared memory?): cg: length prefix 1000000 exceeds the 5 remaining bytes");
  }
  EXPECT_EQ(execute(graph, "next").get(), "next");
}

TEST(Driver, CorruptLengthPrefixOfAnInputReachesGetAsATaskErrorOfTheReadingActor) {
  auto graph = launch();
  cg::Ref<std::string> busy = execute(graph, "sleep:500"); // the actor does not read for a while
  cg::Ref<std::string> victim = execute(graph, "hello");
  LiveChannel input = live_channel({}, 0);
  ASSERT_TRUE(input.wait_published(1));
  const std::uint64_t length = UINT64_MAX;
  std::memcpy(input.payload(1), &length, sizeof length);
  EXPECT_EQ(busy.get(), "sleep:500");
  try {
    victim.get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.exception_type(), "cg::DecodeError");
    EXPECT_EQ(
        e.message(),
        "channel 0 holds a value that cannot be decoded: cg: length prefix 18446744073709551615 "
        "exceeds the 5 remaining bytes");
  }
  EXPECT_EQ(execute(graph, "next").get(), "next");
}

// Breaks the input slot of the second of two executions and returns what
// get() on it throws. The actor answers the first, then meets the broken slot;
// whether the driver still collects the first is a race, so ask only for the second.
std::string actor_death_on_a_broken_input_slot(const cg::LaunchOptions& options) {
  auto graph = launch(options);
  cg::Ref<std::string> busy = execute(graph, "sleep:500");
  cg::Ref<std::string> victim = execute(graph, "hello");
  LiveChannel input = live_channel({}, 0);
  if (!input.wait_published(1))
    return "the second input was never published";
  input.slot(1)->kind.store(99);
  try {
    victim.get();
  } catch (const cg::ActorDiedError& e) {
    return e.actor() + ": " + e.what();
  }
  return "no cg::ActorDiedError";
}

TEST(Driver, ImpossibleInputSlotEndsTheActorAndGetSaysSo) {
  EXPECT_EQ(actor_death_on_a_broken_input_slot({}),
            "a: actor 'a' of graph 'cg_test_echo' exited with code 2 (cg::detail::ActorFailure: "
            "channel 0: read (corrupt))");
}

// ---- threads mode ------------------------------------------------------------

std::size_t thread_count() {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                    std::filesystem::directory_iterator{}));
}

// A joined thread can stay listed in /proc/self/task for a moment while the
// kernel finishes reaping it, so a count after a join is awaited, not read once.
bool thread_count_becomes(std::size_t expected) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (thread_count() != expected) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

cg::LaunchOptions threads_mode() {
  cg::LaunchOptions options;
  options.mode = cg::Mode::threads;
  options.actor_host = "/nonexistent/actor-host"; // threads mode starts no executable
  return options;
}

TEST(Driver, ThreadsModeRunsTheActorAsAThreadOfTheDriverProcess) {
  // A first thread, so that a sanitizer's own background thread (ThreadSanitizer
  // starts one with the first thread of the process) is counted before.
  std::thread([] {}).join();
  std::size_t threads_before = thread_count();
  auto graph = launch(threads_mode());
  EXPECT_EQ(child_pids(), std::vector<pid_t>{});
  EXPECT_EQ(thread_count(), threads_before + 1);
  EXPECT_EQ(execute(graph, "hello").get(), "hello");
  EXPECT_EQ(execute(graph, "big:100000").get(), std::string(100000, 'x'));
  graph->teardown();
  EXPECT_TRUE(thread_count_becomes(threads_before)) << thread_count() << " threads remain";
}

TEST(Driver, ThreadsModeTurnsAMethodExceptionIntoATaskError) {
  auto graph = launch(threads_mode());
  try {
    execute(graph, "throw:boom").get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.message(), "boom");
  }
  EXPECT_EQ(execute(graph, "next").get(), "next");
}

TEST(Driver, ThreadsModeImpossibleInputSlotEndsTheActorThreadAndGetSaysSo) {
  EXPECT_EQ(actor_death_on_a_broken_input_slot(threads_mode()),
            "a: actor 'a' of graph 'cg_test_echo' (a thread) failed: "
            "cg::detail::ActorFailure: channel 0: read (corrupt)");
}

TEST(Driver, ThreadsModeTeardownWithATimeoutNamesAnActorStuckInAMethodAndLeavesItRunning) {
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t threads_before = thread_count();
  auto graph = launch(threads_mode());
  cg::Ref<std::string> ref = execute(graph, "sleep:1500");
  std::this_thread::sleep_for(100ms); // the actor is in the method
  const auto start = Clock::now();
  try {
    graph->teardown(200ms);
    FAIL() << "expected cg::TimeoutError";
  } catch (const cg::TimeoutError& e) {
    EXPECT_STREQ(e.what(), "teardown of graph 'cg_test_echo': actor 'a' (a thread of this "
                           "process) is still in a method after 0.2 s. A thread cannot be "
                           "stopped: it is left running, and the graph's memory is kept for it");
  }
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_THROW(ref.get(), cg::Error) << "torn down";
  graph->teardown(200ms); // done already: returns
  graph.reset();          // the thread still runs: what it uses stays
  EXPECT_TRUE(thread_count_becomes(threads_before)) << "the method returned; the thread ended";
}

// Leaving in time, the actor's thread is joined, not left running with the
// graph's memory kept for it: with the graph gone, so is its memory.
TEST(Driver, ThreadsModeTeardownWithATimeoutJoinsAnActorThatLeavesInTimeAndKeepsNothing) {
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t threads_before = thread_count();
  const std::vector<std::string> mapped_before = cg_test::memfd_mappings();
  const std::vector<std::string> open_before = cg_test::memfd_descriptors();
  auto graph = launch(threads_mode());
  {
    cg::Ref<std::string> ref = execute(graph, "sleep:100");
    std::this_thread::sleep_for(20ms);
    const auto start = Clock::now();
    EXPECT_NO_THROW(graph->teardown(5s));
    EXPECT_GE(Clock::now() - start, 50ms) << "the actor was still in its 100 ms method";
    EXPECT_TRUE(thread_count_becomes(threads_before)) << thread_count() << " threads remain";
    EXPECT_EQ(cg_test::memfd_descriptors(), open_before);
    EXPECT_THROW(ref.get(), cg::ChannelClosedError) << "torn down before its result was read";
  }
  graph.reset();
  EXPECT_EQ(cg_test::memfd_mappings(), mapped_before) << "nothing kept for a thread left running";
}

// ---- what teardown releases --------------------------------------------------

// Earlier tests of this process may have kept shared memory of their own (a
// thread left running keeps its graph's): what a graph left is what was not
// there before it.
std::vector<std::string> added(const std::vector<std::string>& now,
                               const std::vector<std::string>& before) {
  std::vector<std::string> left;
  for (const std::string& line : now)
    if (std::find(before.begin(), before.end(), line) == before.end())
      left.push_back(line);
  return left;
}

bool any_names(const std::vector<std::string>& lines, const std::string& memfd) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.find(memfd) != std::string::npos;
  });
}

// The exception `call` throws once the graph is torn down, as its text.
template <class Call> std::string torn_down_error(Call call) {
  try {
    call();
  } catch (const cg::ChannelClosedError& e) {
    return std::string("ChannelClosedError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("another exception: ") + e.what();
  }
  return "nothing thrown";
}

// Teardown, with values larger than a slot carried both ways (so that the
// driver has overflow buffers of its own and mappings of the actor's) and a
// Ref keeping the runtime alive: the actor gone, and nothing of the graph's
// shared memory mapped or open in the driver any more.
void expect_teardown_releases_all_shared_memory(cg::LaunchOptions options) {
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t threads_before = thread_count();
  const std::vector<std::string> mapped_before = cg_test::memfd_mappings();
  const std::vector<std::string> open_before = cg_test::memfd_descriptors();
  options.slot_bytes = 1024;
  auto graph = launch(options);
  const std::string large(4 << 20, 'L');
  EXPECT_EQ(execute(graph, large).get(), large);
  EXPECT_EQ(execute(graph, "big:" + std::to_string(4 << 20)).get(), std::string(4 << 20, 'x'));
  const std::vector<std::string> mapped = added(cg_test::memfd_mappings(), mapped_before);
  ASSERT_TRUE(any_names(mapped, "/memfd:cg.cg_test_echo (deleted)")) << "the segment is mapped";
  ASSERT_TRUE(any_names(mapped, "/memfd:cg.overflow (deleted)")) << "overflow buffers are mapped";
  cg::Ref<std::string> unread = execute(graph, "unread");
  graph->teardown();
  EXPECT_EQ(child_pids(), std::vector<pid_t>{});
  EXPECT_TRUE(thread_count_becomes(threads_before)) << thread_count() << " threads remain";
  EXPECT_EQ(added(cg_test::memfd_mappings(), mapped_before), std::vector<std::string>{});
  EXPECT_EQ(added(cg_test::memfd_descriptors(), open_before), std::vector<std::string>{});
  EXPECT_EQ(torn_down_error([&] { unread.get(); }),
            "ChannelClosedError: graph 'cg_test_echo' was torn down");
}

TEST(Driver, TeardownEndsTheActorProcessAndReleasesAllTheGraphsSharedMemoryInTheDriver) {
  expect_teardown_releases_all_shared_memory({});
}

TEST(Driver, ThreadsModeTeardownJoinsTheActorThreadAndReleasesAllTheGraphsSharedMemory) {
  expect_teardown_releases_all_shared_memory(threads_mode());
}

// After teardown every call that would use the graph's memory says the graph
// was torn down, in both modes, whatever was in flight.
TEST(Driver, AfterTeardownGetExecuteAndInputTensorThrowChannelClosedError) {
  for (cg::LaunchOptions options : {cg::LaunchOptions{}, threads_mode()}) {
    SCOPED_TRACE(options.mode == cg::Mode::threads ? "threads mode" : "processes mode");
    auto graph = launch(options);
    cg::Ref<std::string> unread = execute(graph, "unread");
    cg::Ref<std::string> unread_as_future = execute(graph, "unread");
    graph->teardown();
    const std::string torn_down = "ChannelClosedError: graph 'cg_test_echo' was torn down";
    EXPECT_TRUE(unread.ready()) << "get() does not wait";
    EXPECT_EQ(torn_down_error([&] { unread.get(); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { unread.get(0ms); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { unread_as_future.get_future().get(); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { execute(graph, "more"); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { graph->begin_execution(); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { graph->write_input(0, std::string("more")); }), torn_down);
    EXPECT_EQ(torn_down_error([&] { graph->input_tensor(0, cg::DType::uint8, {16}); }), torn_down);
  }
}

// A get() waiting in a result channel in one thread, teardown in another:
// the get() is woken with the error, and teardown releases the memory only
// after it has left the channel.
TEST(Driver, TeardownFromAnotherThreadEndsAWaitingGetBeforeItReleasesTheMemory) {
  for (cg::LaunchOptions options : {cg::LaunchOptions{}, threads_mode()}) {
    SCOPED_TRACE(options.mode == cg::Mode::threads ? "threads mode" : "processes mode");
    const std::vector<std::string> mapped_before = cg_test::memfd_mappings();
    auto graph = launch(options);
    cg::Ref<std::string> slow = execute(graph, "sleep:300");
    std::string got;
    std::thread getter([&] { got = torn_down_error([&] { slow.get(); }); });
    std::this_thread::sleep_for(50ms); // the getter waits in the result channel
    graph->teardown();
    getter.join();
    EXPECT_EQ(got, "ChannelClosedError: graph 'cg_test_echo' was torn down");
    EXPECT_EQ(added(cg_test::memfd_mappings(), mapped_before), std::vector<std::string>{});
  }
}

// A tensor from input_tensor() that no execute() took is the caller's to
// write until the graph goes: teardown keeps the segment it is in (and
// releases the rest), the graph's last reference unmaps it.
TEST(Driver, AnInputTensorNoExecuteTookKeepsTheSegmentMappedAfterTeardownUntilTheGraphGoes) {
  const std::vector<std::string> mapped_before = cg_test::memfd_mappings();
  const std::vector<std::string> open_before = cg_test::memfd_descriptors();
  auto graph = launch();
  const cg::Tensor waiting = graph->input_tensor(0, cg::DType::uint8, {1000});
  graph->teardown();
  EXPECT_EQ(child_pids(), std::vector<pid_t>{});
  std::memset(waiting.data_ptr(), 7, 1000);
  EXPECT_EQ(static_cast<const unsigned char*>(waiting.data_ptr())[999], 7);
  const std::vector<std::string> mapped = added(cg_test::memfd_mappings(), mapped_before);
  ASSERT_EQ(mapped.size(), 1u);
  EXPECT_TRUE(any_names(mapped, "/memfd:cg.cg_test_echo (deleted)")) << mapped.front();
  EXPECT_EQ(added(cg_test::memfd_descriptors(), open_before), std::vector<std::string>{});
  graph.reset();
  EXPECT_EQ(added(cg_test::memfd_mappings(), mapped_before), std::vector<std::string>{});
}

// The profile's rings are in the memory teardown releases: stats() after
// teardown are those of the profile as teardown read it.
TEST(Driver, StatsAfterTeardownAreThoseOfTheProfileTeardownRead) {
  const std::vector<std::string> mapped_before = cg_test::memfd_mappings();
  cg::LaunchOptions options;
  options.record_profile = true;
  auto graph = launch(options);
  for (int e = 0; e < 3; ++e)
    EXPECT_EQ(execute(graph, "x").get(), "x");
  graph->teardown();
  EXPECT_EQ(added(cg_test::memfd_mappings(), mapped_before), std::vector<std::string>{});
  const cg::GraphStats stats = graph->stats();
  EXPECT_EQ(stats.graph, "cg_test_echo");
  EXPECT_EQ(stats.latency.count, 3u);
}

TEST(Driver, ModeComesFromTheEnvironmentUnlessTheOptionsSayIt) {
  ASSERT_EQ(::setenv("CG_MODE", "threads", 1), 0);
  EXPECT_EQ(cg::launch_mode({}), cg::Mode::threads);
  cg::LaunchOptions processes;
  processes.mode = cg::Mode::processes;
  EXPECT_EQ(cg::launch_mode(processes), cg::Mode::processes);
  ASSERT_EQ(::setenv("CG_MODE", "fibers", 1), 0);
  try {
    cg::launch_mode({});
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "the environment variable CG_MODE is 'fibers'; it must be 'processes' "
                           "or 'threads' (or unset)");
  }
  ASSERT_EQ(::unsetenv("CG_MODE"), 0);
  EXPECT_EQ(cg::launch_mode({}), cg::Mode::processes);
}

} // namespace
