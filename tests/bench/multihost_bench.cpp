// multihost_bench.cpp — a graph across two hosts beside plain TCP, one run.
//
// The hosts are the network namespaces cgtest-a and cgtest-b, joined by a
// veth pair (tests/e2e/netns.sh; needs root). The driver runs in cgtest-a and
// graph 'remote_size' (tests/e2e/multihost.cg.cpp) places its one actor, b,
// in cgtest-b: every execution crosses the link twice, over the graph's TCP
// channels (frames, sequence numbers, CRC-32C, the relays between rings and
// streams). The baseline is the least any TCP transport can do: blocking
// send()/recv() with TCP_NODELAY between a process in each namespace, the
// same sizes. Baseline and graph alternate, three passes each; figures are
// medians.
//
//   round trip 8 B:   8 bytes there, 8 back (the graph's input is a
//                     std::vector<std::uint8_t> of 8, 16 bytes encoded; its
//                     result the std::uint64_t count b read in place)
//   64 MiB one way:   64 MiB there, 8 bytes back; reported as GB/s
//
// Usage: multihost_bench [--rounds N] [--big N]
#include "bench_multihost.cg.hpp"
#include "tcp_bench_support.hpp"

#include "net/socket.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace cg_bench;

constexpr int passes = 3;
constexpr int warm_up = 200;
constexpr int warm_up_big = 2; // the graph's two ring slots get their 64 MiB buffers

// Plain TCP: an echo process in cgtest-b, this one measuring from cgtest-a.
Samples plain_pass(int rounds, int big) {
  int port_pipe[2];
  if (::pipe2(port_pipe, O_CLOEXEC) != 0)
    die("pipe failed");
  std::fflush(nullptr);
  const pid_t echo = ::fork();
  if (echo < 0)
    die("fork failed");
  if (echo == 0) {
    enter_namespace("cgtest-b");
    cg::detail::UniqueFd listener, connection;
    cg::Endpoint bound;
    std::string error;
    if (cg::detail::listen_tcp({"10.77.0.2", 0}, listener, bound, error) != cg::NetStatus::ok)
      die(error);
    if (::write(port_pipe[1], &bound.port, sizeof bound.port) != sizeof bound.port)
      die("pipe write failed");
    if (cg::detail::accept_tcp(listener.get(), cg::Deadline::max(), connection, error) !=
        cg::NetStatus::ok)
      die(error);
    const int fd = connection.get();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    cg::detail::set_nodelay(fd);
    std::vector<char> small(small_bytes), large(big_bytes);
    for (int i = 0; i < warm_up + rounds; ++i) {
      receive_all(fd, small.data(), small.size());
      send_all(fd, small.data(), small.size());
    }
    for (int i = 0; i < warm_up_big + big; ++i) {
      receive_all(fd, large.data(), large.size());
      send_all(fd, small.data(), small.size());
    }
    ::_exit(0);
  }
  ::close(port_pipe[1]);
  std::uint16_t port = 0;
  if (::read(port_pipe[0], &port, sizeof port) != sizeof port)
    die("the echo process did not start");
  ::close(port_pipe[0]);
  cg::detail::UniqueFd connection;
  std::string error;
  if (cg::detail::connect_tcp({"10.77.0.2", port}, Clock::now() + std::chrono::seconds(10),
                              connection, error) != cg::NetStatus::ok)
    die(error);
  const int fd = connection.get();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  cg::detail::set_nodelay(fd);
  Samples s;
  std::vector<char> small(small_bytes, 'p'), large(big_bytes, 'b');
  for (int i = 0; i < warm_up + rounds; ++i) {
    const auto start = Clock::now();
    send_all(fd, small.data(), small.size());
    receive_all(fd, small.data(), small.size());
    if (i >= warm_up)
      s.round_trip_us.push_back(Seconds(Clock::now() - start).count() * 1e6);
  }
  for (int i = 0; i < warm_up_big + big; ++i) {
    const auto start = Clock::now();
    send_all(fd, large.data(), large.size());
    receive_all(fd, small.data(), small.size());
    if (i >= warm_up_big)
      s.big_seconds.push_back(Seconds(Clock::now() - start).count());
  }
  int status = 0;
  ::waitpid(echo, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("the echo process failed");
  return s;
}

// The graph: the driver here, actor b in cgtest-b (started by the driver
// through `ip netns exec`).
Samples graph_pass(int rounds, int big) {
  cg::LaunchOptions options;
  options.mode = cg::Mode::processes;
  options.max_in_flight = 2; // one execution at a time: two slots are plenty
  options.rendezvous = "10.77.0.1:0";
  options.host_commands[1] = {"ip", "netns", "exec", "cgtest-b"};
  auto graph = cg::launch<&remote_size>(options);
  if (graph.channel_transports() != std::vector<std::string>{"tcp", "tcp"})
    die("the graph's channels are not TCP");
  Samples s;
  const std::vector<std::uint8_t> small(small_bytes, 'p');
  for (int i = 0; i < warm_up + rounds; ++i) {
    const auto start = Clock::now();
    std::uint64_t count = graph.execute(small).get();
    if (i >= warm_up)
      s.round_trip_us.push_back(Seconds(Clock::now() - start).count() * 1e6);
    if (count != small_bytes)
      die("wrong count");
  }
  const std::vector<std::uint8_t> large(big_bytes, 'b');
  for (int i = 0; i < warm_up_big + big; ++i) {
    const auto start = Clock::now();
    std::uint64_t count = graph.execute(large).get();
    if (i >= warm_up_big)
      s.big_seconds.push_back(Seconds(Clock::now() - start).count());
    if (count != big_bytes)
      die("wrong count");
  }
  return s;
}

double load_average() {
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1)
      load = 0;
    std::fclose(f);
  }
  return load;
}

int netns_script(const char* command) {
  const std::string line = std::string(CG_NETNS_SCRIPT) + " " + command;
  const int status = std::system(line.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 2000, big = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--big" && i + 1 < argc)
      big = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: multihost_bench [--rounds N] [--big N]\n");
      return 2;
    }
  }
  const int lock = ::open("/run/lock/cgtest-netns-user.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0)
    ::flock(lock, LOCK_EX);
  const int code = netns_script("up");
  if (code == 77) {
    std::fprintf(stderr, "multihost_bench: needs root for the network namespaces (see above)\n");
    return 77;
  }
  if (code != 0)
    die("netns.sh up failed");
  enter_namespace("cgtest-a");

  Samples plain, ours;
  for (int pass = 0; pass < passes; ++pass) {
    for (bool graph : {false, true}) {
      Samples s = graph ? graph_pass(rounds, big) : plain_pass(rounds, big);
      Samples& into = graph ? ours : plain;
      into.round_trip_us.insert(into.round_trip_us.end(), s.round_trip_us.begin(),
                                s.round_trip_us.end());
      into.big_seconds.insert(into.big_seconds.end(), s.big_seconds.begin(), s.big_seconds.end());
    }
  }
  netns_script("down");
  if (lock >= 0)
    ::close(lock);

  const double rtt_plain = median(plain.round_trip_us), rtt_ours = median(ours.round_trip_us);
  const double bw_plain = static_cast<double>(big_bytes) / median(plain.big_seconds) / 1e9;
  const double bw_ours = static_cast<double>(big_bytes) / median(ours.big_seconds) / 1e9;
  std::printf("multihost_bench: driver in netns cgtest-a, actor in cgtest-b (veth); %d passes x "
              "(%d round trips of %zu B, %d transfers of 64 MiB), medians; load average %.1f\n",
              passes, rounds, small_bytes, big, load_average());
  std::printf("%-28s %14s %14s %10s\n", "", "plain TCP", "graph", "graph/plain");
  std::printf("%-28s %11.1f us %11.1f us %9.2fx\n", "round trip 8 B", rtt_plain, rtt_ours,
              rtt_ours / rtt_plain);
  std::printf("%-28s %9.2f GB/s %9.2f GB/s %9.2fx\n", "64 MiB one way (+8 B back)", bw_plain,
              bw_ours, bw_ours / bw_plain);
  return 0;
}
