// multihost_test.cpp - graphs spread over several hosts: placement, TCP
// channels, the rendezvous, remote deaths, and mpirun.
//
// "Hosts" are network namespaces on this machine (tests/e2e/netns.sh:
// cgtest-a 10.77.0.1 and cgtest-b 10.77.0.2, joined by a veth pair): the
// driver and actor a run in cgtest-a, actors b and c in cgtest-b, where they
// can reach the driver only over the veth link. Those tests need root and say
// so when skipped. The rest (placement, TCP forced on one host, mpirun) run
// anywhere.
//
// One file, about 860 lines: every test here launches the one graph source
// (multihost.cg.cpp) on the same two namespaces, with the same helpers.
#include "e2e_multihost.cg.hpp"

#include "../support/captured_output.hpp"
#include "../support/frame_relay.hpp"
#include "../support/line_relay.hpp"
#include "../support/netns.hpp"
#include "../support/scoped_env.hpp"
#include "leftovers.hpp"

#include "net/frame.hpp"
#include "net/rendezvous.hpp"
#include "net/scale_out.hpp"
#include "net/secret.hpp"
#include "os/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `command` with sh; its output (stdout and stderr) and exit code.
int run(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr)
    return -1;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr)
    output += chunk;
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A port nobody uses now, for a fixed rendezvous address, below the kernel's
// ephemeral range (32768 and up unless configured otherwise): a port the
// kernel picked for a bind to port 0 is released before the rendezvous binds
// it, and meanwhile any connect() or listen on port 0 of a test running
// beside this one may be given it. Below that range only an explicit bind
// takes a port, so what is free now stays free. Tried at random, from a seed
// of the pid and the clock, as tests of both modes run at once.
std::uint16_t own_port() {
  static std::minstd_rand random(
      static_cast<unsigned>(::getpid()) ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<std::uint16_t>(20000 + random() % 12000);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(port);
    const bool free =
        fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (fd >= 0)
      ::close(fd);
    if (free)
      return port;
  }
  ADD_FAILURE() << "no free port between 20000 and 32000 in 1000 tries";
  return 0;
}

// The launch's secret for the scope: in CG_SECRET, where the driver takes it
// from when actor processes are started by hand (as these tests do).
class ScopedSecret {
public:
  const cg::detail::Secret& get() const { return secret_; }
  // "CG_SECRET=<hex>", for a child's environment.
  std::string entry() const {
    return std::string(cg::detail::secret_variable) + "=" + secret_.hex();
  }

private:
  cg::detail::Secret secret_ = cg::detail::Secret::generate();
  cg_test::ScopedEnv env_{cg::detail::secret_variable, secret_.hex().c_str()};
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "" : ",") + item;
  return out;
}

// Channels of graph 'multihost' (its schedule): c0 x, c1 s, c2 a.add, c3
// b.add (the driver and c read it), c4 c.add, c5 a.where, c6 b.where, c7
// c.where. With b and c on host 1, the transport between hosts where one end
// is there and the other here: what the driver chooses (CG_HOST_TRANSPORT).
std::string host_transport() {
  cg::detail::HostTransport transport{};
  std::string error;
  EXPECT_TRUE(cg::detail::host_transport_from_environment(transport, error)) << error;
  return cg::detail::to_string(transport);
}
std::vector<std::string> split_transports() {
  const std::string h = host_transport();
  return {"shm", "shm", h, h, h, h, "shm", h};
}
std::string all_host_transports() {
  const std::string h = host_transport();
  return h + "," + h + "," + h + "," + h + "," + h + "," + h + "," + h + "," + h;
}

// The transports between hosts this runtime has, for tests run over each.
std::vector<const char*> host_transports() {
#if CG_HAVE_UCX
  return {"tcp", "ucx"};
#else
  return {"tcp"};
#endif
}

void expect_results(cg::Graph<&multihost>& graph, const std::string& where) {
  auto [yc, yb, w] = graph.execute(5, "driver").get();
  EXPECT_EQ(yc, 116);
  EXPECT_EQ(yb, 16);
  EXPECT_EQ(w, where);
  // Several in flight, read back in order.
  std::vector<cg::Ref<std::tuple<std::int64_t, std::int64_t, std::string>>> refs;
  for (int i = 0; i < 8; ++i)
    refs.push_back(graph.execute(i, ""));
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(std::get<0>(refs[i].get()), i + 111);
  // An error crosses hosts as a value, and the graph stays usable.
  try {
    graph.execute(-1, "x").get();
    ADD_FAILURE() << "no TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.method(), "add");
    EXPECT_EQ(e.message(), "negative input -1");
  }
  EXPECT_EQ(std::get<0>(graph.execute(1000, "").get()), 1111);
}

// ---- Placement ---------------------------------------------------------------

TEST(Placement, TheScheduleSaysTcpForChannelsBetweenHosts) {
  const std::string schedule = read_file(CG_MULTIHOST_SCHEDULE);
  EXPECT_NE(schedule.find("# channels\n"
                          "  c0  input #0  long         shm  driver -> a\n"
                          "  c1  input #1  std::string  shm  driver -> a\n"
                          "  c2  a.add     long         tcp  a -> b\n"
                          "  c3  b.add     long         tcp  b -> driver, c\n"
                          "  c4  c.add     long         tcp  c -> driver\n"
                          "  c5  a.where   std::string  tcp  a -> b\n"
                          "  c6  b.where   std::string  shm  b -> c\n"
                          "  c7  c.where   std::string  tcp  c -> driver\n"),
            std::string::npos)
      << schedule;
}

class PlacementFile : public ::testing::Test {
protected:
  std::string write(const std::string& text) {
    path_ = "/tmp/cg-placement-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty())
      std::remove(path_.c_str());
    EXPECT_TRUE(cg_test::child_pids().empty());
  }
  std::string launch_error(const std::string& path) {
    cg::LaunchOptions options;
    options.placement = path;
    try {
      cg::launch<&multihost>(options);
    } catch (const cg::LaunchError& e) {
      return e.what();
    }
    return "(launched)";
  }
  std::string path_;
};

TEST_F(PlacementFile, AnActorTheGraphLacksIsALaunchErrorNamingTheLine) {
  std::string path = write("# where the actors run\nb 1\nzz 1\n");
  EXPECT_EQ(launch_error(path), "placement file '" + path +
                                    "' line 3: graph 'multihost' has no actor 'zz' (its "
                                    "actors: a, b, c)");
}

TEST_F(PlacementFile, AHostThatIsNoNumberIsALaunchError) {
  std::string path = write("b one\n");
  EXPECT_EQ(launch_error(path),
            "placement file '" + path + "' line 1: host 'one' is not a number from 0 to 65535");
}

TEST_F(PlacementFile, AnActorPlacedTwiceOrAMalformedLineIsALaunchError) {
  std::string path = write("b 1\nc 1\nb 0\n");
  EXPECT_EQ(launch_error(path), "placement file '" + path + "' line 3: actor 'b' is placed twice");
  path = write("b 1 2\n");
  EXPECT_EQ(launch_error(path),
            "placement file '" + path + "' line 1: expected '<actor> <host>', got 'b 1 2'");
}

TEST_F(PlacementFile, AFileThatCannotBeReadIsALaunchError) {
  EXPECT_EQ(launch_error("/nonexistent/placement"),
            "placement file '/nonexistent/placement' cannot be read");
}

// A FIFO with no writer would block the open for good, /dev/zero the reads
// and a directory fail them: each is refused at once, naming the file.
TEST_F(PlacementFile, AFifoADeviceOrADirectoryIsALaunchErrorAtOnce) {
  const std::string fifo = "/tmp/cg-placement-fifo-" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string("/tmp")})
    EXPECT_EQ(launch_error(path), "placement file '" + path +
                                      "' is not a regular file (a directory, a pipe or a "
                                      "device); it should hold one '<actor> <host>' line per "
                                      "actor");
  std::remove(fifo.c_str());
}

TEST_F(PlacementFile, PlacesActorsOverridingTheGraph) {
  // b and c back on the driver's host: every channel is shared memory.
  cg::LaunchOptions options;
  options.placement = write("b 0\nc 0   # with the driver\n");
  auto graph = cg::launch<&multihost>(options);
  EXPECT_EQ(joined(graph.channel_transports()), "shm,shm,shm,shm,shm,shm,shm,shm");
  auto [yc, yb, w] = graph.execute(5, "").get();
  EXPECT_EQ(yc, 116);
  EXPECT_EQ(yb, 16);
}

// ---- TCP on one host -----------------------------------------------------------

class NetworkForced : public ::testing::TestWithParam<const char*> {};

TEST_P(NetworkForced, EveryChannelCrossesTheNetworkAndTheResultsAreTheSame) {
  const cg_test::ScopedEnv transport("CG_HOST_TRANSPORT", GetParam());
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  {
    auto graph = cg::launch<&multihost>(options);
    EXPECT_EQ(joined(graph.channel_transports()), all_host_transports());
    // Every actor is a process of its own, whatever the mode.
    EXPECT_EQ(cg_test::child_pids().size(), 3u);
    std::string ns;
    {
      char link[64] = {};
      ns = std::string(link, static_cast<std::size_t>(::readlink("/proc/self/ns/net", link, 63)));
    }
    expect_results(graph, "driver " + ns + " " + ns + " " + ns);
  }
  EXPECT_TRUE(cg_test::child_pids().empty());
}

INSTANTIATE_TEST_SUITE_P(Transports, NetworkForced, ::testing::ValuesIn(host_transports()),
                         [](const auto& info) { return std::string(info.param); });

TEST(TcpForced, ConstructorArgumentsGivenToLaunchReachActorsInProcessesOfTheirOwn) {
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  cg::Graph<&multihost>::Constructors constructors;
  constructors.b = std::tuple{20};
  constructors.c = std::tuple{300};
  auto graph = cg::launch<&multihost>(constructors, options);
  auto [yc, yb, w] = graph.execute(5, "").get();
  EXPECT_EQ(yb, 5 + 1 + 20) << "b was not constructed with launch()'s argument";
  EXPECT_EQ(yc, 5 + 1 + 20 + 300);
}

// With TCP everywhere the driver reads every result off its stream: from
// ready() (a look that does not wait), from get(), and from the collector
// thread that futures start.
TEST(TcpForced, ResultsReadOffTheirStreamsReachReadyGetAndFutures) {
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  auto graph = cg::launch<&multihost>(options);
  auto ref = graph.execute(1, "");
  const auto until = Clock::now() + 10s;
  while (!ref.ready() && Clock::now() < until)
    std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(ref.ready());
  EXPECT_EQ(std::get<0>(ref.get()), 112);
  std::vector<decltype(graph.execute(0, "").get_future())> futures;
  for (int i = 0; i < 6; ++i)
    futures.push_back(graph.execute(i, "").get_future());
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(futures[i].wait_for(10s), std::future_status::ready) << "execution " << i;
    auto [yc, yb, w] = futures[i].get();
    EXPECT_EQ(yb, i + 11);
    EXPECT_EQ(yc, i + 111);
  }
}

// `size` bytes of a pattern that `tag` shifts.
std::vector<std::uint8_t> patterned(std::size_t size, int tag) {
  std::vector<std::uint8_t> bytes(size);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::uint8_t>(tag * 31 + i * 7 + (i >> 12));
  return bytes;
}

// Every actor a process of its own, every channel over TCP, in `mode`.
cg::LaunchOptions tcp_everywhere_in(cg::Mode mode) {
  cg::LaunchOptions options;
  options.mode = mode;
  options.tcp_everywhere = true;
  return options;
}

// A large input that only another host reads is sent from the caller's
// vector while the stream takes it, and what the stream has not taken when
// it stalls (b busy with the execution before) is copied: execute() returns
// without waiting for b, and b hashes each input as it was when execute()
// returned, whatever the caller does with its vector afterwards.
TEST(TcpForced, ALargeInputArrivesAsItWasWhenExecuteReturnedEvenIfTheActorWasBusy) {
  auto fnv = [](const std::vector<std::uint8_t>& bytes) {
    std::uint64_t hash = 14695981039346656037ull;
    for (std::uint8_t byte : bytes)
      hash = (hash ^ byte) * 1099511628211ull;
    return hash;
  };
  auto made = [](int tag) { return patterned(std::size_t{32} << 20, tag); };
  for (cg::Mode mode : {cg::Mode::processes, cg::Mode::threads}) {
    SCOPED_TRACE(mode == cg::Mode::processes ? "processes" : "threads");
    auto graph = cg::launch<&remote_digest>(tcp_everywhere_in(mode));
    std::vector<std::uint8_t> bytes = made(1);
    const std::uint64_t first = fnv(bytes);
    auto ref = graph.execute(0, bytes);
    std::fill(bytes.begin(), bytes.end(), std::uint8_t{0});
    EXPECT_EQ(ref.get(), first);

    // b hashes the second input 2 s after it arrives; the third waits in the
    // stream meanwhile, more than its buffers hold.
    bytes = made(2);
    const std::uint64_t second = fnv(bytes);
    auto busy = graph.execute(2000, bytes);
    bytes = made(3);
    const std::uint64_t third = fnv(bytes);
    const auto start = Clock::now();
    auto next = graph.execute(0, bytes);
    const auto took = Clock::now() - start;
    std::fill(bytes.begin(), bytes.end(), std::uint8_t{0});
    EXPECT_LT(took, 1500ms) << "execute() waited for the busy actor";
    EXPECT_EQ(busy.get(), second);
    EXPECT_EQ(next.get(), third);
  }
}

// And a large result that only the driver reads goes from the method's value,
// to the driver's stream: values of 32 MiB there and back arrive whole.
TEST(TcpForced, ALargeResultComesBackWhole) {
  for (cg::Mode mode : {cg::Mode::processes, cg::Mode::threads}) {
    SCOPED_TRACE(mode == cg::Mode::processes ? "processes" : "threads");
    auto graph = cg::launch<&remote_echo>(tcp_everywhere_in(mode));
    for (int tag = 0; tag < 3; ++tag) {
      const std::vector<std::uint8_t> bytes = patterned((std::size_t{32} << 20) + tag, tag);
      EXPECT_TRUE(graph.execute(bytes).get() == bytes) << "value " << tag;
    }
  }
}

TEST(HostCommands, WhatAHostsProcessPrintsIsTaggedWithItsActorsAndHost) {
  cg::LaunchOptions options;
  // A command like ssh: it speaks, then runs the actor executable it is given.
  options.host_commands[1] = {"sh", "-c", "echo hello from the host command >&2; exec \"$@\"",
                              "sh"};
  cg_test::CapturedOutput err(2);
  {
    auto graph = cg::launch<&multihost>(options);
    EXPECT_EQ(std::get<0>(graph.execute(1, "").get()), 112);
  }
  EXPECT_EQ(err.text(), "(b,c host=1) hello from the host command\n");
}

TEST(TcpForced, AStartUpFailureInAProcessOfItsOwnIsALaunchErrorSayingWhy) {
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  cg::Graph<&multihost>::Constructors constructors;
  constructors.c = std::tuple{-5};
  cg_test::CapturedOutput err(2); // the actor process's own account, tagged
  try {
    cg::launch<&multihost>(constructors, options);
    ADD_FAILURE() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "actor 'c' of graph 'multihost' failed: std::invalid_argument: k must "
                           "not be negative, not -5 during start-up");
  }
  const std::string said = err.text();
  EXPECT_NE(said.find("(c pid="), std::string::npos) << said;
}

TEST(HostCommands, AHostCommandThatFailsIsALaunchErrorQuotingItsLastWords) {
  cg::LaunchOptions options;
  // As ssh fails when it cannot reach the host.
  options.host_commands[1] = {
      "sh", "-c", "echo 'ssh: connect to host node1 port 22: No route to host' >&2; exit 255"};
  cg_test::CapturedOutput err(2);
  try {
    cg::launch<&multihost>(options);
    ADD_FAILURE() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "actor 'b' of graph 'multihost' exited with code 255 (ssh: connect to "
                           "host node1 port 22: No route to host) during start-up");
  }
  EXPECT_EQ(err.text(), "(b,c host=1) ssh: connect to host node1 port 22: No route to host\n");
}

TEST(HostCommands, AStartUpFailureOfOneActorOfAHostsProcessNamesThatActor) {
  cg::LaunchOptions options;
  options.host_commands[1] = {"sh", "-c", "exec \"$@\"", "sh"};
  cg::Graph<&multihost>::Constructors constructors;
  constructors.c = std::tuple{-7};
  cg_test::CapturedOutput err(2);
  const auto start = Clock::now();
  try {
    cg::launch<&multihost>(constructors, options);
    ADD_FAILURE() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "actor 'c' of graph 'multihost' (a process running b c) failed: "
                           "std::invalid_argument: k must not be negative, not -7 during start-up");
  }
  EXPECT_LT(Clock::now() - start, 1s) << "an actor's own failure is reported at once";
  EXPECT_NE(err.text().find("(b,c host=1) "), std::string::npos);
}

TEST(TcpForced, AProfileHoldsTheActorsOfProcessesOfTheirOwnOnTheDriversClock) {
  const std::string path = "/tmp/cg-multihost-profile-" + std::to_string(::getpid()) + ".json";
  cg::LaunchOptions options;
  options.tcp_everywhere = true; // every actor a process of its own, reached over TCP
  options.profile = path;
  constexpr int executions = 5;
  {
    auto graph = cg::launch<&multihost>(options);
    for (int i = 0; i < executions; ++i)
      EXPECT_EQ(std::get<0>(graph.execute(i, "").get()), i + 111);
  }
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::map<int, std::string> names;
  std::map<std::string, std::vector<nlohmann::json>> tracks;
  for (const nlohmann::json& event : trace["traceEvents"])
    if (event["ph"] == "M" && event["name"] == "thread_name")
      names[event["tid"].get<int>()] = event["args"]["name"];
  for (const nlohmann::json& event : trace["traceEvents"])
    if (event["ph"] == "X")
      tracks[names.at(event["tid"].get<int>())].push_back(event);
  // Each actor's six operations an execution, in its schedule's order.
  const std::map<std::string, std::vector<std::string>> scheduled = {
      {"a",
       {"READ c0 (input #0)", "a.add", "WRITE c2 (a.add)", "READ c1 (input #1)", "a.where",
        "WRITE c5 (a.where)"}},
      {"b",
       {"READ c2 (a.add)", "b.add", "WRITE c3 (b.add)", "READ c5 (a.where)", "b.where",
        "WRITE c6 (b.where)"}},
      {"c",
       {"READ c3 (b.add)", "c.add", "WRITE c4 (c.add)", "READ c6 (b.where)", "c.where",
        "WRITE c7 (c.where)"}}};
  for (const auto& [actor, operations] : scheduled) {
    SCOPED_TRACE("actor " + actor);
    const std::vector<nlohmann::json>& events = tracks[actor];
    ASSERT_EQ(events.size(), operations.size() * executions);
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i]["name"], operations[i % operations.size()]) << i;
      EXPECT_EQ(events[i]["args"]["execution"], i / operations.size()) << i;
    }
  }
  // On one clock: what a wrote, b read after, to within how far off the
  // trace says each of their clocks may be (half the round trip that aligned
  // it; a loaded machine may make that long).
  const nlohmann::json& uncertainty = trace["otherData"]["clock_uncertainty_ns"];
  ASSERT_EQ(uncertainty.size(), 3u) << trace["otherData"];
  const auto off = [&](const char* actor) { return uncertainty[actor].get<double>() / 1000; };
  const auto end = [](const nlohmann::json& e) {
    return e["ts"].get<double>() + e["dur"].get<double>();
  };
  for (int e = 0; e < executions; ++e) {
    const nlohmann::json& write = tracks["a"][static_cast<std::size_t>(6 * e + 2)];
    const nlohmann::json& read = tracks["b"][static_cast<std::size_t>(6 * e)];
    EXPECT_GE(end(read) + off("a") + off("b") + 1, end(write)) << "execution " << e;
  }
  EXPECT_LE(end(tracks["c"].back()), end(tracks["driver"].back()) + off("c") + 1);
  std::filesystem::remove(path);
}

TEST(TcpForced, AKilledActorProcessIsReportedWithinTwoSeconds) {
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  auto graph = cg::launch<&multihost>(options);
  EXPECT_EQ(std::get<0>(graph.execute(1, "").get()), 112);
  std::vector<int> children = cg_test::child_pids();
  ASSERT_EQ(children.size(), 3u);
  // Which child runs c: its command line says.
  int victim = -1;
  for (int pid : children) {
    std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.size() >= 2 && cmdline.substr(cmdline.size() - 2) == std::string("c\0", 2))
      victim = pid;
  }
  ASSERT_NE(victim, -1);
  ::kill(victim, SIGKILL);
  const auto killed = Clock::now();
  try {
    graph.execute(2, "").get();
    ADD_FAILURE() << "no ActorDiedError";
  } catch (const cg::ActorDiedError& e) {
    EXPECT_LT(Clock::now() - killed, 2s);
    EXPECT_EQ(e.actor(), "c");
  }
}

// ---- A lost frame --------------------------------------------------------------

// The test plays the process of b and c (on host 1) by hand, over loopback:
// it publishes them, connects their channels, says READY, and then sends the
// driver b.add's result in a frame whose sequence number skips one.
// (Over our own TCP stream, whose frames the test forges byte by byte; UCX
// frames are forged in tests/unit/runtime/net/ucx_channel_test.cpp.)
TEST(LostFrame, IsAChannelErrorAtGetNeverAValue) {
  const ScopedSecret secret;
  const cg_test::ScopedEnv tcp("CG_HOST_TRANSPORT", "tcp");
  const std::string rendezvous = "127.0.0.1:" + std::to_string(own_port());
  const cg::detail::GraphSpec& spec = cg_generated::e2e_multihost::multihost_spec;
  std::string fake_error;
  cg::TcpChannels fake;
  cg::detail::Connections plan; // as the relays of b and c's process would connect
  cg::RendezvousClient client;
  std::thread remote([&] {
    const auto deadline = Clock::now() + 20s;
    cg::TcpChannelListener listener;
    if (client.connect(*cg::parse_endpoint(rendezvous), "multihost", secret.get(), deadline) !=
            cg::NetStatus::ok ||
        listener.listen(secret.get(), {"127.0.0.1", 0}) != cg::NetStatus::ok) {
      fake_error = client.error() + listener.error();
      return;
    }
    const cg::Endpoint self{"127.0.0.1", listener.endpoint().port};
    if (client.publish("b", self, deadline) != cg::NetStatus::ok ||
        client.publish("c", self, deadline) != cg::NetStatus::ok ||
        client.wait_for_table(deadline) != cg::NetStatus::ok) {
      fake_error = client.error();
      return;
    }
    const cg::detail::Participants p = cg::detail::participants_from_table(spec, client.table());
    plan = cg::detail::plan_connections(spec, p, cg::detail::plan_streams(spec, p), 1,
                                        cg::detail::HostTransport::tcp);
    if (cg::set_up_channels(listener, plan.incoming, plan.outgoing, deadline, fake) !=
            cg::NetStatus::ok ||
        client.ready("b", deadline) != cg::NetStatus::ok ||
        client.ready("c", deadline) != cg::NetStatus::ok)
      fake_error = fake.error + client.error();
  });
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  std::optional<cg::Graph<&multihost>> launched;
  std::string launch_error;
  try {
    launched.emplace(cg::launch<&multihost>(options));
  } catch (const cg::LaunchError& e) {
    launch_error = e.what();
  }
  remote.join();
  ASSERT_EQ(launch_error, "") << "the fake remote said: " << fake_error;
  ASSERT_EQ(fake_error, "");
  auto& graph = *launched;
  auto ref = graph.execute(5, "");
  // The driver reads its results in order (c4, c3, c7), each off its stream:
  // c.add's (c4) arrives whole, then b.add's (c3) is frame 1 where frame 0
  // belongs.
  auto send_frame = [&](std::uint32_t channel, std::uint64_t sequence) {
    std::size_t stream = 0;
    while (stream < plan.out_streams.size() && plan.out_streams[stream].channel != channel)
      ++stream;
    ASSERT_LT(stream, plan.out_streams.size());
    const std::byte payload[8] = {};
    cg::detail::FrameHeader header;
    header.sequence = sequence;
    header.length = sizeof payload;
    // Tagged as the writer would tag that frame: only its sequence number is wrong.
    const cg::TcpWriter& writer = plan.writer_of(stream, fake);
    const std::string frame = cg::detail::encoded_frame(header, payload, writer.key(), sequence);
    const int fd = writer.fd();
    ASSERT_EQ(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(frame.size()));
  };
  send_frame(4, 0);
  send_frame(3, 1);
  try {
    ref.get(5s);
    ADD_FAILURE() << "a value came through";
  } catch (const cg::ChannelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "TCP channel c3 (b -> driver) of graph 'multihost': lost frame: expected sequence "
              "0, got 1 (1 missing); the graph cannot execute any more");
  }
}

// ---- Men in the middle: a relay on the path between two hosts --------------------

// Graph remote_size's b, played by this test as an actor process would (as
// in LostFrame), that publishes a relay's address instead of its own: the
// driver's connection to b, and b's result that returns on it, pass the
// relay (tests/support/frame_relay.hpp), which knows no secret. b answers its
// input with 42 (or, `malformed`, with 3 bytes that are no std::uint64_t).
// What get() says, or the value it returns.
std::string relayed_result(cg_test::FrameRelay::Mode mode, int& rewritten, bool malformed = false) {
  const ScopedSecret secret;
  const cg_test::ScopedEnv tcp("CG_HOST_TRANSPORT", "tcp");
  const std::string rendezvous = "127.0.0.1:" + std::to_string(own_port());
  const cg::detail::GraphSpec& spec = cg_generated::e2e_multihost::remote_size_spec;
  cg::TcpChannelListener listener;
  if (listener.listen(secret.get(), {"127.0.0.1", 0}) != cg::NetStatus::ok)
    return "listen: " + listener.error();
  cg_test::FrameRelay relay({"127.0.0.1", listener.endpoint().port}, mode);
  if (!relay.error().empty())
    return "relay: " + relay.error();
  std::string fake_error;
  cg::TcpChannels fake;
  cg::detail::Connections plan;
  cg::RendezvousClient client;
  std::thread remote([&] {
    const auto deadline = Clock::now() + 20s;
    if (client.connect(*cg::parse_endpoint(rendezvous), "remote_size", secret.get(), deadline) !=
            cg::NetStatus::ok ||
        client.publish("b", relay.endpoint(), deadline) != cg::NetStatus::ok ||
        client.wait_for_table(deadline) != cg::NetStatus::ok) {
      fake_error = client.error();
      return;
    }
    const cg::detail::Participants p = cg::detail::participants_from_table(spec, client.table());
    plan = cg::detail::plan_connections(spec, p, cg::detail::plan_streams(spec, p), 1,
                                        cg::detail::HostTransport::tcp);
    if (cg::set_up_channels(listener, plan.incoming, plan.outgoing, deadline, fake) !=
            cg::NetStatus::ok ||
        client.ready("b", deadline) != cg::NetStatus::ok)
      fake_error = fake.error + client.error();
  });
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  std::optional<cg::Graph<&remote_size>> launched;
  std::string launch_error;
  try {
    launched.emplace(cg::launch<&remote_size>(options));
  } catch (const cg::LaunchError& e) {
    launch_error = e.what();
  }
  remote.join();
  if (!launch_error.empty() || !fake_error.empty())
    return "launch: " + launch_error + "; the fake b said: " + fake_error;
  auto ref = launched->execute(std::vector<std::uint8_t>(5, 7));
  // b's part: its input, then its answer, back on the same connection.
  cg::TcpReader::Message input{};
  if (plan.reader_of(0, fake).receive(input, Clock::now() + 10s) != cg::ChannelStatus::ok)
    return "b's input: " + std::string(plan.reader_of(0, fake).error());
  const std::uint64_t answer = 42;
  std::span<const std::byte> answer_bytes = std::as_bytes(std::span(&answer, 1));
  if (malformed)
    answer_bytes = answer_bytes.first(3);
  if (plan.writer_of(0, fake).send(cg::MessageKind::value, answer_bytes, Clock::now() + 10s) !=
      cg::ChannelStatus::ok)
    return "b's answer: " + std::string(plan.writer_of(0, fake).error());
  std::string said;
  try {
    said = std::to_string(ref.get(10s));
  } catch (const cg::Error& e) {
    said = e.what();
  }
  rewritten = relay.rewritten();
  return said;
}

TEST(MenInTheMiddle, ARelayThatPassesEveryByteOnLeavesTheGraphWorking) {
  int rewritten = -1;
  EXPECT_EQ(relayed_result(cg_test::FrameRelay::Mode::pass, rewritten), "42");
  EXPECT_EQ(rewritten, 0);
}

// A result that arrives intact but does not decode was sent so: the error
// names its actor and its stream, not shared memory.
TEST(MenInTheMiddle, AMalformedResultFromAnotherHostNamesItsActorAndStream) {
  int rewritten = -1;
  EXPECT_EQ(relayed_result(cg_test::FrameRelay::Mode::pass, rewritten, /*malformed=*/true),
            "the result of execution 0 of graph 'remote_size' cannot be decoded (sent so by actor "
            "'b' over tcp channel c1, whose frames arrived intact: is that host running an actor "
            "built from the same graph source?): cg: truncated input: need 8 bytes, 3 remain");
  EXPECT_EQ(rewritten, 0);
}

// The attack: the handshakes pass through unchanged, then the result frame
// is rewritten with its checksums recomputed. Its tag no longer matches.
TEST(MenInTheMiddle, AResultRewrittenOnTheWayIsAChannelErrorNamingItsActorNeverAValue) {
  int rewritten = -1;
  EXPECT_EQ(relayed_result(cg_test::FrameRelay::Mode::rewrite, rewritten),
            "TCP channel c1 (b -> driver) of graph 'remote_size': frame 0: authentication failed: "
            "its tag does not match its bytes (rewritten on the way, or not sent by the peer that "
            "proved the launch's secret); the graph cannot execute any more");
  EXPECT_EQ(rewritten, 1);
}

// b of remote_size, played by this test, reaching the driver's rendezvous
// through a relay that knows no secret (tests/support/line_relay.hpp): what
// launch() said ("launched" if it returned), what b's rendezvous client said
// ("" if all went well), and who the rendezvous saw connect.
struct RelayedSetUp {
  std::string launch;
  std::string b;
  int rewritten = -1;
  cg::Endpoint peer;  // the relay's end of its connection to the rendezvous
  cg::Endpoint relay; // where b connected
};

RelayedSetUp relayed_set_up(cg_test::LineRelay::Mode mode) {
  const ScopedSecret secret;
  const cg_test::ScopedEnv tcp("CG_HOST_TRANSPORT", "tcp");
  const std::string rendezvous = "127.0.0.1:" + std::to_string(own_port());
  const cg::detail::GraphSpec& spec = cg_generated::e2e_multihost::remote_size_spec;
  RelayedSetUp out;
  cg::TcpChannelListener listener;
  if (listener.listen(secret.get(), {"127.0.0.1", 0}) != cg::NetStatus::ok) {
    out.launch = "listen: " + listener.error();
    return out;
  }
  cg_test::LineRelay relay(*cg::parse_endpoint(rendezvous), mode);
  cg::TcpChannels fake;
  cg::RendezvousClient client;
  std::thread remote([&] {
    const auto deadline = Clock::now() + 20s;
    if (client.connect(relay.endpoint(), "remote_size", secret.get(), deadline) !=
            cg::NetStatus::ok ||
        client.publish("b", listener.endpoint(), deadline) != cg::NetStatus::ok ||
        client.wait_for_table(deadline) != cg::NetStatus::ok) {
      out.b = client.error();
      return;
    }
    const cg::detail::Participants p = cg::detail::participants_from_table(spec, client.table());
    cg::detail::Connections plan = cg::detail::plan_connections(
        spec, p, cg::detail::plan_streams(spec, p), 1, cg::detail::HostTransport::tcp);
    if (cg::set_up_channels(listener, plan.incoming, plan.outgoing, deadline, fake) !=
            cg::NetStatus::ok ||
        client.ready("b", deadline) != cg::NetStatus::ok)
      out.b = fake.error + client.error();
  });
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  options.start_timeout = 20s;
  try {
    auto graph = cg::launch<&remote_size>(options);
    out.launch = "launched";
  } catch (const cg::LaunchError& e) {
    out.launch = e.what();
  }
  remote.join();
  out.rewritten = relay.rewritten();
  out.peer = relay.upstream();
  out.relay = relay.endpoint();
  return out;
}

TEST(MenInTheMiddle, ARelayThatPassesEverySetUpLineOnLeavesTheLaunchWorking) {
  const RelayedSetUp r = relayed_set_up(cg_test::LineRelay::Mode::pass);
  EXPECT_EQ(r.launch, "launched");
  EXPECT_EQ(r.b, "");
  EXPECT_EQ(r.rewritten, 0);
}

// The attack: b's HELLO passes unchanged, then its PUBLISH is rewritten to
// send b's peers elsewhere. The line's tag no longer matches: the launch
// fails at once naming the connection it came on, and b is cut off.
TEST(MenInTheMiddle, APublishRewrittenOnTheWayIsALaunchErrorNamingThePeerNeverAnEntry) {
  const auto started = Clock::now();
  const RelayedSetUp r = relayed_set_up(cg_test::LineRelay::Mode::rewrite);
  EXPECT_LT(Clock::now() - started, 10s) << "the launch waited for its start timeout";
  EXPECT_EQ(r.rewritten, 1);
  EXPECT_EQ(r.launch, "rendezvous for graph 'remote_size': a line from " + cg::to_string(r.peer) +
                          " failed its authentication tag (rewritten, dropped, replayed or "
                          "reordered on the way): the connection is closed");
  EXPECT_EQ(r.b, "rendezvous at " + cg::to_string(r.relay) + " closed the connection");
}

// ---- Strangers: processes without the launch's secret -----------------------------

TEST(Strangers, AnActorProcessWithoutTheSecretExitsNonZeroSayingWhy) {
  std::string output;
  const int code =
      run(std::string("env -u CG_SECRET -u CG_SECRET_FILE CG_RENDEZVOUS=127.0.0.1:1 ") +
              CG_MULTIHOST_ACTORS + " multihost b,c",
          output);
  EXPECT_EQ(code, 64) << output;
  EXPECT_EQ(output, "cg actor multihost/b,c: neither CG_SECRET nor CG_SECRET_FILE is set: this "
                    "process cannot prove it belongs to the launch (see net/secret.hpp, or the "
                    "README on several hosts)\n");
}

// The attack this closes: a foreign process registering as the remote actors,
// receiving every input and sending forged results back as genuine.
TEST(Strangers, AForgedActorProcessIsTurnedAwayAndTheRealOneServesTheGraph) {
  const ScopedSecret secret;
  const std::string rendezvous = "127.0.0.1:" + std::to_string(own_port());
  // The forger knows everything but the secret; it retries until the
  // rendezvous listens, as the real actors do.
  std::string forged;
  int forged_code = -1;
  std::thread forger([&] {
    forged_code =
        run("CG_RENDEZVOUS=" + rendezvous + " CG_SECRET=" + cg::detail::Secret::generate().hex() +
                " " + CG_MULTIHOST_ACTORS + " multihost b,c",
            forged);
  });
  // Spawned and launched from this thread: children die with the thread
  // that started them (os/process.hpp).
  cg::ChildProcess real = cg::ChildProcess::spawn(CG_MULTIHOST_ACTORS, {"multihost", "b,c"},
                                                  {"CG_RENDEZVOUS=" + rendezvous, secret.entry()});
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  {
    auto graph = cg::launch<&multihost>(options);
    forger.join();
    auto [yc, yb, w] = graph.execute(5, "driver").get();
    EXPECT_EQ(yc, 116);
    EXPECT_EQ(yb, 16);
  }
  EXPECT_EQ(forged_code, 2) << forged;
  EXPECT_EQ(forged, "cg actor multihost/b,c: rendezvous at " + rendezvous +
                        " refused: authentication failed\n");
  EXPECT_TRUE(real.wait_for(5s)) << "the real actors did not exit after teardown";
}

// ---- Two hosts: network namespaces -----------------------------------------------

// Brings cgtest-a and cgtest-b up and moves this thread into cgtest-a (as
// `ip netns exec` would: tests/support/netns.hpp) for
// the test, holding a lock so that concurrent users do not take the
// namespaces down under each other. Skips, saying why, without root.
class TwoHosts : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    transport_.emplace("CG_HOST_TRANSPORT", GetParam());
    if (::geteuid() != 0)
      GTEST_SKIP() << "needs root: the two hosts are network namespaces (ip netns)";
    lock_ = ::open("/run/lock/cgtest-netns-user.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock_ >= 0)
      ::flock(lock_, LOCK_EX);
    std::string output;
    int code = run(std::string(CG_NETNS_SCRIPT) + " up", output);
    if (code == 77)
      GTEST_SKIP() << "ip netns is unavailable here: " << output;
    ASSERT_EQ(code, 0) << output;
    up_ = true;
    in_a_.emplace("cgtest-a");
    ASSERT_TRUE(in_a_->ok()) << in_a_->error();
    ns_a_ = namespace_of("/run/netns/cgtest-a");
    ns_b_ = namespace_of("/run/netns/cgtest-b");
  }
  void TearDown() override {
    in_a_.reset();
    if (up_) {
      EXPECT_TRUE(cg_test::child_pids().empty());
      std::string ignored;
      run(std::string(CG_NETNS_SCRIPT) + " down", ignored);
    }
    if (lock_ >= 0)
      ::close(lock_);
  }
  // "net:[<inode>]", as /proc/<pid>/ns/net reads for a process in it.
  static std::string namespace_of(const char* path) {
    struct stat st {};
    ::stat(path, &st);
    return "net:[" + std::to_string(st.st_ino) + "]";
  }

  std::optional<cg_test::ScopedEnv> transport_; // the transport under test
  int lock_ = -1;
  std::optional<cg_test::NetworkNamespace> in_a_;
  bool up_ = false;
  std::string ns_a_, ns_b_;
};

TEST_P(TwoHosts, TwoActorsInASecondNamespaceAnswerAcrossTheLink) {
  cg::LaunchOptions options;
  options.rendezvous = "10.77.0.1:0";
  options.host_commands[1] = {"ip", "netns", "exec", "cgtest-b"};
  {
    auto graph = cg::launch<&multihost>(options);
    EXPECT_EQ(graph.channel_transports(), split_transports());
    // a here (a process or a thread), b and c in one process there.
    EXPECT_EQ(cg_test::child_pids().size(), cg_test::actor_processes(1) + 1);
    expect_results(graph, "driver " + ns_a_ + " " + ns_b_ + " " + ns_b_);
  }
}

TEST(HostTransport, AnUnknownChoiceIsALaunchErrorSayingWhatIsAccepted) {
  const cg_test::ScopedEnv bad("CG_HOST_TRANSPORT", "rdma");
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  try {
    auto graph = cg::launch<&multihost>(options);
    ADD_FAILURE() << "no LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot start the actors of graph 'multihost': "
                                     "CG_HOST_TRANSPORT='rdma' is none of 'auto', 'ucx' and 'tcp'");
  }
}

TEST_P(TwoHosts, ALaunchersActorsFindTheDriverThroughTheRendezvousVariable) {
  // Started as a launcher would: CG_RENDEZVOUS, CG_SECRET, the graph and its actors.
  const ScopedSecret secret;
  const std::string rendezvous = "10.77.0.1:" + std::to_string(own_port());
  cg::ChildProcess remote = cg::ChildProcess::spawn("/usr/bin/env",
                                                    {"ip", "netns", "exec", "cgtest-b", "env",
                                                     "CG_RENDEZVOUS=" + rendezvous,
                                                     CG_MULTIHOST_ACTORS, "multihost", "b,c"},
                                                    {secret.entry()});
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  auto graph = cg::launch<&multihost>(options);
  EXPECT_EQ(graph.channel_transports(), split_transports());
  expect_results(graph, "driver " + ns_a_ + " " + ns_b_ + " " + ns_b_);
  graph.teardown();
  EXPECT_TRUE(remote.wait_for(5s)) << "the remote actors did not exit after teardown";
  EXPECT_EQ(remote.exit_status(), 0);
}

TEST_P(TwoHosts, AKilledRemoteActorIsReportedAsDeadWithinTwoSeconds) {
  const ScopedSecret secret;
  const std::string rendezvous = "10.77.0.1:" + std::to_string(own_port());
  cg::ChildProcess remote = cg::ChildProcess::spawn("/usr/bin/env",
                                                    {"ip", "netns", "exec", "cgtest-b", "env",
                                                     "CG_RENDEZVOUS=" + rendezvous,
                                                     CG_MULTIHOST_ACTORS, "multihost", "b,c"},
                                                    {secret.entry()});
  cg::LaunchOptions options;
  options.rendezvous = rendezvous;
  auto graph = cg::launch<&multihost>(options);
  EXPECT_EQ(std::get<1>(graph.execute(1, "").get()), 12);
  remote.kill(SIGKILL);
  const auto killed = Clock::now();
  try {
    graph.execute(2, "").get();
    ADD_FAILURE() << "no ActorDiedError";
  } catch (const cg::ActorDiedError& e) {
    EXPECT_LT(Clock::now() - killed, 2s);
    EXPECT_EQ(e.actor(), "b");
    EXPECT_EQ(std::string(e.what()),
              "actor 'b' of graph 'multihost' (a process running b c) lost its connection to "
              "the driver: its process died or its host is unreachable");
  }
  remote.wait_for(1s);
}

// A partition: host b's link goes down, nothing is closed, nobody sends a
// FIN or RST. The driver must not wait forever for b's answers.
TEST_P(TwoHosts, AHostThatGoesSilentIsReportedAsDeadWithinThePartitionTimeout) {
  cg::LaunchOptions options;
  options.rendezvous = "10.77.0.1:0";
  options.host_commands[1] = {"ip", "netns", "exec", "cgtest-b"};
  options.partition_timeout = 2s;
  auto graph = cg::launch<&multihost>(options);
  EXPECT_EQ(std::get<1>(graph.execute(1, "").get()), 12);
  std::string output;
  ASSERT_EQ(run("ip -n cgtest-b link set cgtest-vb down", output), 0) << output;
  const auto silent = Clock::now();
  try {
    graph.execute(2, "").get(30s);
    ADD_FAILURE() << "no ActorDiedError";
  } catch (const cg::ActorDiedError& e) {
    EXPECT_LT(Clock::now() - silent, 2s + 2s) << "detected later than the timeout allows";
    EXPECT_EQ(e.actor(), "b");
    EXPECT_EQ(std::string(e.what()),
              "actor 'b' of graph 'multihost' (a process running b c) is unreachable: its host "
              "answered nothing for 2000 ms (a network partition, or the host is down)");
  }
  run("ip -n cgtest-b link set cgtest-vb up", output);
}

TEST_P(TwoHosts, ActorsThatNeverComeAreNamedByTheLaunchError) {
  cg::LaunchOptions options;
  options.rendezvous = "10.77.0.1:0";
  options.start_timeout = 500ms;
  try {
    cg::launch<&multihost>(options);
    ADD_FAILURE() << "launched without b and c";
  } catch (const cg::LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("actors that never published: b, c"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, TwoHosts, ::testing::ValuesIn(host_transports()),
                         [](const auto& info) { return std::string(info.param); });

// ---- mpirun ------------------------------------------------------------------------

TEST(Mpirun, TheGraphRunsUnderMpirunWithEveryChannelOverTcp) {
  std::string where;
  if (run("command -v mpirun", where) != 0)
    GTEST_SKIP() << "mpirun (OpenMPI) is not installed";
  // The recipe cgc --emit=mpirun wrote, as a user runs it: rank 0 is the
  // driver program (compiled with cgc --transport=tcp), ranks 1-3 the actors.
  std::string output;
  int code = run("CG_RENDEZVOUS=127.0.0.1:" + std::to_string(own_port()) +
                     " CG_MPIRUN_FLAGS='--allow-run-as-root --oversubscribe' sh " +
                     CG_MULTIHOST_RECIPES + "/multihost.mpirun.sh " + CG_MULTIHOST_DRIVER,
                 output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("results 116 16\n"), std::string::npos) << output;
  EXPECT_NE(output.find("transports " + all_host_transports() + "\n"), std::string::npos) << output;
  EXPECT_NE(output.find("error a.add: negative input -1\n"), std::string::npos) << output;
}

TEST(Recipes, TheMpirunAndSrunRecipesStartOneProcessPerActor) {
  const std::string mpirun = read_file(std::string(CG_MULTIHOST_RECIPES) + "/multihost.mpirun.sh");
  EXPECT_NE(mpirun.find(
                "exec mpirun ${CG_MPIRUN_FLAGS:-} -x CG_RENDEZVOUS ${CG_SECRET:+-x CG_SECRET} \\\n"
                "  ${CG_SECRET_FILE:+-x CG_SECRET_FILE} \\\n"
                "  -np 1 ${CG_HOST_0:+--host \"$CG_HOST_0\"} \"$@\" \\\n"
                "  : -np 1 ${CG_HOST_0:+--host \"$CG_HOST_0\"} \"$CG_ACTORS\" 'multihost' 'a' \\\n"
                "  : -np 1 ${CG_HOST_1:+--host \"$CG_HOST_1\"} \"$CG_ACTORS\" 'multihost' 'b' \\\n"
                "  : -np 1 ${CG_HOST_1:+--host \"$CG_HOST_1\"} \"$CG_ACTORS\" 'multihost' 'c'\n"),
            std::string::npos)
      << mpirun;
  const std::string srun = read_file(std::string(CG_MULTIHOST_RECIPES) + "/multihost.srun.sh");
  EXPECT_NE(srun.find("  printf '0 %s\\n' \"$*\"\n"
                      "  printf '1 %s %s %s\\n' \"$CG_ACTORS\" 'multihost' 'a'\n"
                      "  printf '2 %s %s %s\\n' \"$CG_ACTORS\" 'multihost' 'b'\n"
                      "  printf '3 %s %s %s\\n' \"$CG_ACTORS\" 'multihost' 'c'\n"
                      "} >\"$conf\"\n"
                      "srun ${CG_SRUN_FLAGS:-} --export=ALL --ntasks=4 --multi-prog \"$conf\"\n"),
            std::string::npos)
      << srun;
}

} // namespace
