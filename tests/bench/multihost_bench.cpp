// multihost_bench.cpp - a graph across two hosts beside plain TCP, one run.
//
// The hosts are the network namespaces cgtest-a and cgtest-b, joined by a
// veth pair (tests/e2e/netns.sh; needs root). The driver runs in cgtest-a and
// graph 'remote_size' (tests/e2e/multihost.cg.cpp) places its one actor, b,
// in cgtest-b: every execution crosses the link twice, over the graph's
// channels between hosts (frames, sequence numbers, CRC-32C, the relays
// between rings and streams), carried by UCX and then by our own TCP stream
// (CG_HOST_TRANSPORT). UCX picks TCP here by itself: its shared-memory
// transports cannot tell it when a peer dies, which the graph requires. Two
// baselines, from the same run:
//   - plain TCP, the least any TCP transport can do: blocking send()/recv()
//     with TCP_NODELAY between a process in each namespace, the same sizes;
//   - ucx_perftest (Debian ucx-utils, UCX's own benchmark): tag_lat with 8 B
//     (its one-way figure doubled into a round trip) and tag_bw with 64 MiB
//     messages, with UCX_TLS=tcp: on one machine UCX would otherwise pick
//     shared memory across the namespaces, which two hosts do not have.
// The three alternate, three passes each; figures are medians (ucx_perftest's
// 50th percentile latency, its overall bandwidth).
//
//   round trip 8 B:   8 bytes there, 8 back (the graph's input is a
//                     std::vector<std::uint8_t> of 8, 16 bytes encoded; its
//                     result the std::uint64_t count b read in place)
//   64 MiB one way:   64 MiB there, 8 bytes back; reported as GB/s
//     the same, made in place: graph 'remote_tensor_size', whose input is a
//                     cg::Tensor the driver makes in the input channel
//                     (input_tensor(), filled before the clock starts, as
//                     the baselines' buffers are) and b reads where it
//                     arrives (cg::TensorView): no copy but the network's
//
// Usage: multihost_bench [--rounds N] [--big N]
#include "../support/netns.hpp"
#include "bench_multihost.cg.hpp"
#include "targets.hpp"
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
#include <cstring>
#include <sstream>
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
Samples graph_pass(int rounds, int big, const char* transport) {
  ::setenv("CG_HOST_TRANSPORT", transport, 1);
  cg::LaunchOptions options;
  options.mode = cg::Mode::processes;
  options.max_in_flight = 2; // one execution at a time: two slots are plenty
  options.rendezvous = "10.77.0.1:0";
  options.host_commands[1] = {"ip", "netns", "exec", "cgtest-b"};
  auto graph = cg::launch<&remote_size>(options);
  if (graph.channel_transports() != std::vector<std::string>{transport, transport})
    die(std::string("the graph's channels are not ") + transport);
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
  // `transfer` prepares one 64 MiB execution and returns its ref; the clock
  // runs from execute() to the count coming back.
  auto time_transfers = [&](std::vector<double>& into, auto transfer) {
    for (int i = 0; i < warm_up_big + big; ++i) {
      Clock::time_point start;
      std::uint64_t count = transfer(start).get();
      if (i >= warm_up_big)
        into.push_back(Seconds(Clock::now() - start).count());
      if (count != big_bytes)
        die("wrong count");
    }
  };
  const std::vector<std::uint8_t> large(big_bytes, 'b');
  time_transfers(s.big_seconds, [&](Clock::time_point& start) {
    start = Clock::now();
    return graph.execute(large);
  });
  graph.teardown();
  // The same bytes as a tensor made where the input channel carries it, and
  // read where it arrives: no copy on either host but the network's.
  auto tensors = cg::launch<&remote_tensor_size>(options);
  time_transfers(s.in_place_seconds, [&](Clock::time_point& start) {
    cg::Tensor t = tensors.input_tensor(cg::DType::uint8, {static_cast<std::int64_t>(big_bytes)});
    std::memset(t.data_ptr(), 'b', big_bytes); // the caller's writes, as `large` was made
    start = Clock::now();
    return tensors.execute(t);
  });
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

// One ucx_perftest run of `test` between cgtest-b (server) and cgtest-a
// (client); its "Final:" line's figures, or empty if it failed.
std::vector<double> ucx_perftest(const std::string& test, std::size_t bytes, int iterations) {
  static int port = 13400;
  const std::string flags = " -p " + std::to_string(++port) + " -t " + test + " -s " +
                            std::to_string(bytes) + " -n " + std::to_string(iterations);
  const std::string server = "ip netns exec cgtest-b env UCX_TLS=tcp timeout 120 ucx_perftest" +
                             flags + " >/dev/null 2>&1 &";
  if (std::system(server.c_str()) != 0)
    return {};
  // The client fails at once while the server does not listen yet: try again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    ::usleep(250'000);
    // Through `ip netns exec` (not just this process's namespace): UCX finds
    // its devices in /sys/class/net, which only that remounts.
    FILE* client = ::popen(("ip netns exec cgtest-a env UCX_TLS=tcp timeout 120 ucx_perftest "
                            "10.77.0.2" +
                            flags + " 2>/dev/null")
                               .c_str(),
                           "r");
    if (client == nullptr)
      return {};
    std::vector<double> figures;
    char line[512];
    while (std::fgets(line, sizeof line, client) != nullptr) {
      if (std::strncmp(line, "Final:", 6) != 0)
        continue;
      std::istringstream fields(line + 6);
      for (double value; fields >> value;)
        figures.push_back(value);
    }
    ::pclose(client);
    if (figures.size() >= 6)
      return figures;
  }
  return {};
}

// ucx_perftest's figures as Samples: round trips in us, seconds per 64 MiB.
Samples ucx_pass(int rounds, int big) {
  Samples s;
  // Final: iterations, latency 50%ile / average / overall (us, one way),
  // bandwidth average / overall (MB/s, MB = 2^20 bytes), message rates.
  const std::vector<double> lat = ucx_perftest("tag_lat", small_bytes, rounds);
  if (!lat.empty())
    s.round_trip_us.push_back(2 * lat[1]);
  const std::vector<double> bw = ucx_perftest("tag_bw", big_bytes, std::max(big, 4));
  if (!bw.empty() && bw[5] > 0)
    s.big_seconds.push_back(static_cast<double>(big_bytes) / (bw[5] * 1048576.0));
  return s;
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
  cg_test::NetworkNamespace in_a("cgtest-a");
  if (!in_a.ok())
    die(in_a.error());
  in_a.stay();

  const bool have_ucx = std::system("command -v ucx_perftest >/dev/null") == 0;
  Samples plain, ucx, ours_ucx, ours_tcp;
  for (int pass = 0; pass < passes; ++pass) {
    for (Samples* into : {&plain, &ucx, &ours_ucx, &ours_tcp}) {
      if (into == &ucx && !have_ucx)
        continue;
      Samples s = into == &plain      ? plain_pass(rounds, big)
                  : into == &ucx      ? ucx_pass(rounds, big)
                  : into == &ours_ucx ? graph_pass(rounds, big, "ucx")
                                      : graph_pass(rounds, big, "tcp");
      into->round_trip_us.insert(into->round_trip_us.end(), s.round_trip_us.begin(),
                                 s.round_trip_us.end());
      into->big_seconds.insert(into->big_seconds.end(), s.big_seconds.begin(), s.big_seconds.end());
      into->in_place_seconds.insert(into->in_place_seconds.end(), s.in_place_seconds.begin(),
                                    s.in_place_seconds.end());
    }
  }
  netns_script("down");
  if (lock >= 0)
    ::close(lock);

  const auto gbps_of = [](const std::vector<double>& seconds) {
    return seconds.empty() ? 0.0 : static_cast<double>(big_bytes) / median(seconds) / 1e9;
  };
  const auto gbps = [&](const Samples& s) { return gbps_of(s.big_seconds); };
  const auto rtt = [](const Samples& s) {
    return s.round_trip_us.empty() ? 0.0 : median(s.round_trip_us);
  };
  const double rtt_plain = rtt(plain), rtt_ucx = rtt(ucx), rtt_ours = rtt(ours_ucx),
               rtt_ours_tcp = rtt(ours_tcp);
  const double bw_plain = gbps(plain), bw_ucx = gbps(ucx), bw_ours = gbps(ours_ucx),
               bw_ours_tcp = gbps(ours_tcp);
  // The targets compare with the better baseline: the lower round trip, the
  // higher bandwidth.
  const double rtt_best = rtt_ucx > 0 ? std::min(rtt_plain, rtt_ucx) : rtt_plain;
  const double bw_best = std::max(bw_plain, bw_ucx);
  std::printf("multihost_bench: driver in netns cgtest-a, actor in cgtest-b (veth); %d passes x "
              "(%d round trips of %zu B, %d transfers of 64 MiB), medians; load average %.1f\n",
              passes, rounds, small_bytes, big, load_average());
  std::printf("%-26s %13s %17s %13s %13s %9s %9s\n", "", "plain TCP", "ucx_perftest(tcp)",
              "graph (UCX)", "graph (TCP)", "UCX/best", "TCP/best");
  std::printf("%-26s %10.1f us %14.1f us %10.1f us %10.1f us %8.2fx %8.2fx\n", "round trip 8 B",
              rtt_plain, rtt_ucx, rtt_ours, rtt_ours_tcp, rtt_ours / rtt_best,
              rtt_ours_tcp / rtt_best);
  std::printf("%-26s %8.2f GB/s %12.2f GB/s %8.2f GB/s %8.2f GB/s %8.2fx %8.2fx\n",
              "64 MiB one way (+8 B back)", bw_plain, bw_ucx, bw_ours, bw_ours_tcp,
              bw_ours / bw_best, bw_ours_tcp / bw_best);
  const double in_place = gbps_of(ours_ucx.in_place_seconds),
               in_place_tcp = gbps_of(ours_tcp.in_place_seconds);
  std::printf("%-26s %8.2f GB/s %12.2f GB/s %8.2f GB/s %8.2f GB/s %8.2fx %8.2fx\n",
              "  the same, made in place", bw_plain, bw_ucx, in_place, in_place_tcp,
              in_place / bw_best, in_place_tcp / bw_best);
  if (!have_ucx)
    std::printf("(ucx_perftest is not installed: Debian ucx-utils, scripts/install-deps)\n");

  // Each of our figures beside its target (targets.def), against the better baseline.
  const cg_bench::Target& near = cg_bench::target("remote_round_trip");
  const cg_bench::Target& large = cg_bench::target("remote_large");
  const struct {
    const char* row;
    const cg_bench::Target& target;
    double ours, best;
  } judged[] = {
      {"round trip 8 B, graph (UCX)", near, rtt_ours, rtt_best},
      {"round trip 8 B, graph (TCP)", near, rtt_ours_tcp, rtt_best},
      {"64 MiB one way, graph (UCX)", large, bw_ours, bw_best},
      {"64 MiB one way, graph (TCP)", large, bw_ours_tcp, bw_best},
      {"64 MiB made in place, graph (UCX)", large, in_place, bw_best},
      {"64 MiB made in place, graph (TCP)", large, in_place_tcp, bw_best},
  };
  std::printf("\n");
  for (const auto& j : judged)
    std::printf("%-34s %-52s %s\n", j.row, cg_bench::describe(j.target).c_str(),
                cg_bench::word(cg_bench::judge(j.target, j.ours, j.best)));
  return 0;
}
