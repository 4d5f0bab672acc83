// flood_test.cpp - a launch over several hosts outlasts strangers: silent
// connections held open to the driver's listeners, a hundred thousand
// rejected connections, and an actor process that gives up during set-up.
//
// "Host 1" is actor processes on this machine (graph 'multihost': b and c
// there, a with the driver), reached over loopback, as the TCP-forced tests of
// multihost_test.cpp run them.
#include "e2e_multihost.cg.hpp"

#include "../support/captured_output.hpp"
#include "../support/scoped_env.hpp"
#include "leftovers.hpp"

#include "net/rendezvous.hpp"
#include "net/secret.hpp"
#include "net/socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A port nobody uses now, for a fixed rendezvous address (the kernel picks it).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0)
    ::close(fd);
  return port;
}

// The TCP ports this process listens on (IPv4): its sockets' inodes matched
// with the kernel's table of listening sockets.
std::set<std::uint16_t> listening_ports() {
  std::set<std::string> inodes;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.rfind("socket:[", 0) == 0)
      inodes.insert(target.substr(8, target.size() - 9));
  }
  std::set<std::uint16_t> ports;
  std::ifstream table("/proc/self/net/tcp");
  std::string line;
  std::getline(table, line); // the heading
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (state == "0A" && inodes.count(inode) != 0) // TCP_LISTEN
      ports.insert(
          static_cast<std::uint16_t>(std::stoul(local.substr(local.find(':') + 1), {}, 16)));
  }
  return ports;
}

// How many connections wait in the accept queue of this process's listener
// on `port` (for a listening socket, the kernel's table gives that as rx_queue).
std::size_t accept_queue(std::uint16_t port) {
  std::ifstream table("/proc/self/net/tcp");
  std::string line;
  std::getline(table, line);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    if (state == "0A" && std::stoul(local.substr(local.find(':') + 1), {}, 16) == port)
      return std::stoul(queues.substr(queues.find(':') + 1), {}, 16);
  }
  return 0;
}

// A connection to 127.0.0.1:`port` that says nothing (invalid if it failed).
cg::detail::UniqueFd silent_connection(std::uint16_t port) {
  cg::detail::UniqueFd fd;
  std::string error;
  EXPECT_EQ(cg::detail::connect_tcp({"127.0.0.1", port}, Clock::now() + 5s, fd, error),
            cg::NetStatus::ok)
      << error;
  return fd;
}

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// 64 connections that never speak, to the driver's channel listener and to its
// rendezvous each, opened before any actor of host 1 starts: its writers to
// the driver still get in, and the graph runs.
TEST(Flood, SixtyFourSilentConnectionsToEachListenerOfTheDriverKeepNoWriterOut) {
  const std::set<std::uint16_t> before = listening_ports();
  const std::string go = "/tmp/cg-flood-go-" + std::to_string(::getpid());
  std::remove(go.c_str());
  std::vector<cg::detail::UniqueFd> silent;
  std::size_t listeners_flooded = 0;
  std::thread flooder([&] {
    // The driver listens for channels, then for the rendezvous: both ports
    // are new once launch() is under way.
    std::set<std::uint16_t> added;
    for (const auto until = Clock::now() + 20s; added.size() < 2 && Clock::now() < until;) {
      std::this_thread::sleep_for(5ms);
      added.clear();
      for (std::uint16_t port : listening_ports())
        if (before.count(port) == 0)
          added.insert(port);
    }
    for (std::uint16_t port : added)
      for (int i = 0; i < 64; ++i)
        silent.push_back(silent_connection(port));
    listeners_flooded = added.size();
    std::ofstream{go} << "go\n"; // host 1's process may start now
  });
  cg::LaunchOptions options;
  options.start_timeout = 15s;
  // Host 1's process waits for the flood to be in place.
  options.host_commands[1] = {"sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.01; done; exec \"$@\"",
                              go};
  try {
    auto graph = cg::launch<&multihost>(options);
    flooder.join();
    auto [yc, yb, w] = graph.execute(5, "").get();
    EXPECT_EQ(yc, 116);
    EXPECT_EQ(yb, 16);
  } catch (const cg::LaunchError& e) {
    ADD_FAILURE() << "the flood kept a writer out: " << e.what();
  }
  if (flooder.joinable())
    flooder.join();
  std::remove(go.c_str());
  EXPECT_EQ(listeners_flooded, 2u);
  EXPECT_EQ(silent.size(), 128u);
  EXPECT_TRUE(cg_test::child_pids().empty());
}

// What the driver said about the rendezvous's rejections: how many
// connections its lines account for, and how many lines it took.
struct RejectionReport {
  std::uint64_t connections = 0;
  std::size_t lines = 0;
};

RejectionReport rejection_report(const std::string& said) {
  static const std::regex one("^cg: graph 'multihost': rendezvous dropped a connection from ");
  static const std::regex many("^cg: graph 'multihost': rendezvous dropped ([0-9]+) more "
                               "connections? from [0-9]+ address(es)? in the last ");
  RejectionReport report;
  std::istringstream lines(said);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (line.find("rendezvous") == std::string::npos)
      continue;
    ++report.lines;
    if (std::regex_search(line, one))
      report.connections += 1;
    else if (std::regex_search(line, match, many))
      report.connections += std::stoull(match[1]);
    else
      ADD_FAILURE() << "a line of neither form: " << line;
  }
  return report;
}

// A hundred thousand connections to a running graph's rendezvous, each
// closed at once (every hundredth after a line of garbage): the driver's
// memory grows by less than 4 MiB, its log by a handful of lines a second,
// and those lines still account for every connection.
TEST(Flood, AHundredThousandRejectedConnectionsCostTheDriverBoundedMemoryAndLog) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Instrumented, each connection costs several times as much: a fifth of
  // them fit the test's time. Memory is not weighed there: ASan keeps what is
  // freed in quarantine, TSan keeps its shadow.
  constexpr int connections = 20'000;
  constexpr bool weighs_memory = false;
#else
  constexpr int connections = 100'000;
  constexpr bool weighs_memory = true;
#endif
  const std::uint16_t port = free_port();
  ASSERT_NE(port, 0);
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  options.rendezvous = "127.0.0.1:" + std::to_string(port);
  double seconds = 0;
  std::int64_t grown = 0;
  std::string said;
  {
    cg_test::CapturedOutput err(2);
    {
      auto graph = cg::launch<&multihost>(options);
      EXPECT_EQ(std::get<0>(graph.execute(1, "").get()), 112);
      const std::int64_t resident_before = resident_bytes();
      const auto start = Clock::now();
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(port);
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      for (int i = 0; i < connections; ++i) {
        // Never more than the accept queue holds: past it the kernel drops
        // connection attempts, and each would wait a second to try again.
        while (i % 256 == 0 && accept_queue(port) > 1024)
          std::this_thread::sleep_for(1ms);
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to), 0)
            << "connection " << i << ": " << cg::detail::errno_text(errno);
        if (i % 100 == 0) {
          ASSERT_EQ(::send(fd, "GET / HTTP/1.1\r\n\r\n", 18, MSG_NOSIGNAL), 18);
        }
        // Reset, not closed: no TIME_WAIT, so the ports last a hundred thousand.
        const linger reset{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        ::close(fd);
      }
      EXPECT_EQ(std::get<0>(graph.execute(2, "").get()), 113) << "the graph stopped serving";
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::this_thread::sleep_for(200ms);
      grown = resident_bytes() - resident_before;
    }
    said = err.text();
  }
  const RejectionReport report = rejection_report(said);
  std::printf("%d connections in %.1f s: resident memory %+lld bytes, %zu lines of log\n",
              connections, seconds, static_cast<long long>(grown), report.lines);
  if (weighs_memory) {
    EXPECT_LT(grown, 4 << 20) << "resident memory grew by " << grown << " bytes";
  }
  EXPECT_EQ(report.connections, static_cast<std::uint64_t>(connections)) << said.substr(0, 2000);
  // At most 5 lines of single rejections and one summary a second, and a last
  // summary at teardown.
  EXPECT_LE(report.lines, static_cast<std::size_t>(6 * (seconds + 1) + 1))
      << report.lines << " lines in " << seconds << " s; " << said.substr(0, 2000);
}

// A process of host 1 that publishes its actors, then gives up before its
// writers to the driver connect (as one whose connection was refused would):
// the launch fails within a second, saying so in a line, not after the whole
// start_timeout.
TEST(Flood, AnActorProcessThatGivesUpDuringSetUpFailsTheLaunchWithinASecond) {
  const cg::detail::Secret secret = cg::detail::Secret::generate();
  const cg_test::ScopedEnv secret_env(cg::detail::secret_variable, secret.hex().c_str());
  const std::uint16_t port = free_port();
  ASSERT_NE(port, 0);
  const cg::Endpoint rendezvous{"127.0.0.1", port};
  Clock::time_point gave_up{};
  std::string fake_error;
  std::thread fake([&] {
    // Host 1's process as far as its channels: it listens (and never
    // answers), publishes b and c, waits for the table, then gives up.
    cg::detail::UniqueFd listener;
    cg::Endpoint bound;
    std::string error;
    if (cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error) != cg::NetStatus::ok) {
      fake_error = error;
      return;
    }
    const auto deadline = Clock::now() + 20s;
    cg::RendezvousClient client;
    if (client.connect(rendezvous, "multihost", secret, deadline) != cg::NetStatus::ok ||
        client.publish("b", bound, deadline) != cg::NetStatus::ok ||
        client.publish("c", bound, deadline) != cg::NetStatus::ok ||
        client.wait_for_table(deadline) != cg::NetStatus::ok) {
      fake_error = client.error();
      return;
    }
    std::this_thread::sleep_for(200ms); // the driver is waiting for b's and c's writers
    gave_up = Clock::now();
    client.report_failure({cg::RemoteFailure::Cause::host, "", "gave up setting up its channels"});
  });
  cg::LaunchOptions options;
  options.rendezvous = cg::to_string(rendezvous);
  options.start_timeout = 10s;
  std::string what;
  try {
    cg::launch<&multihost>(options);
    ADD_FAILURE() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    what = e.what();
  }
  const auto failed = Clock::now();
  fake.join();
  ASSERT_EQ(fake_error, "");
  EXPECT_EQ(what, "actor 'b' of graph 'multihost' (a process running b c) failed: gave up "
                  "setting up its channels during start-up");
  EXPECT_LT(failed - gave_up, 1s) << "the launch failed "
                                  << std::chrono::duration<double>(failed - gave_up).count()
                                  << " s after the process gave up";
}

} // namespace
