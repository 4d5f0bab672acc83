// tcp_pingpong.cpp - the TCP channel (cg::TcpWriter / cg::TcpReader) beside plain TCP, one run.
//
// Two processes, one connection. The measuring side sends; the echo side
// answers. Ours runs twice: over one connection, both directions on it (as
// a graph's two streams between two hosts share one), and over a connection
// each way, where every message costs its receiver an acknowledgement packet
// of its own. Figures are medians over many repetitions, and the plain-TCP
// baseline (send()/recv() on blocking sockets with TCP_NODELAY, the least any
// TCP transport can do) runs in the same invocation, alternating with ours, so
// their ratio survives the noise of a shared machine even when absolute
// figures do not.
//
//   8 B round trip:  a message of 8 bytes there and back.
//   64 MiB one way:  64 MiB there, an 8-byte acknowledgement back; reported as GB/s.
//
// Usage: tcp_pingpong [--netns] [--deadlines] [--rounds N] [--big N]
//   --netns     run the two processes in the network namespaces cgtest-a and
//               cgtest-b (tests/e2e/netns.sh, brought up and down here; needs
//               root), over a veth pair instead of loopback
//   --deadlines every cg call gets a finite deadline (now + 60 s), which waits
//               in poll(); by default they wait with Deadline::max(), as an
//               actor waiting for its next input does
//   --rounds N  8-byte round trips per pass (default 20000)
//   --big N     64 MiB transfers per pass (default 8)
#include "net/crc32c.hpp"
#include "net/socket.hpp"
#include "net/tcp_channel.hpp"
#include "tcp_bench_support.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include <string>
#include <vector>

namespace {

using namespace cg_bench;

constexpr int warm_up_rounds = 1000;
constexpr int passes = 3; // each pass runs the baseline, then ours

enum class Transport { plain, cg, cg_split }; // cg_split: a connection each way

struct Options {
  bool netns = false;
  int rounds = 20000;
  int big = 8;
};

bool finite_deadlines = false; // --deadlines

cg::Deadline soon() {
  return finite_deadlines ? Clock::now() + std::chrono::seconds(60) : cg::Deadline::max();
}

// ---- plain TCP: blocking send()/recv() -------------------------------------------

void make_blocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  cg::detail::set_nodelay(fd);
}

void plain_echo(int fd, const Options& o) {
  make_blocking(fd);
  std::vector<char> small(small_bytes);
  std::vector<char> big(big_bytes);
  for (int i = 0; i < warm_up_rounds + o.rounds; ++i) {
    receive_all(fd, small.data(), small.size());
    send_all(fd, small.data(), small.size());
  }
  for (int i = 0; i < 1 + o.big; ++i) {
    receive_all(fd, big.data(), big.size());
    send_all(fd, small.data(), small.size());
  }
}

Samples plain_measure(int fd, const Options& o) {
  make_blocking(fd);
  Samples s;
  std::vector<char> small(small_bytes, 'p');
  std::vector<char> big(big_bytes, 'b');
  for (int i = 0; i < warm_up_rounds + o.rounds; ++i) {
    const auto start = Clock::now();
    send_all(fd, small.data(), small.size());
    receive_all(fd, small.data(), small.size());
    if (i >= warm_up_rounds)
      s.round_trip_us.push_back(Seconds(Clock::now() - start).count() * 1e6);
  }
  for (int i = 0; i < 1 + o.big; ++i) {
    const auto start = Clock::now();
    send_all(fd, big.data(), big.size());
    receive_all(fd, small.data(), small.size());
    if (i >= 1)
      s.big_seconds.push_back(Seconds(Clock::now() - start).count());
  }
  return s;
}

// ---- ours: TcpWriter / TcpReader on the same connection ---------------------------

void check(cg::ChannelStatus status, std::string_view error) {
  if (status != cg::ChannelStatus::ok)
    die(std::string(cg::to_string(status)) + ": " + std::string(error));
}

// `in` and `out` may be one connection (two descriptors of it) or two.
void cg_echo(int in, int out, const Options& o) {
  cg::TcpWriter writer(out);
  cg::TcpReader reader(in);
  const std::vector<std::byte> ack(small_bytes);
  cg::TcpReader::Message m{};
  for (int i = 0; i < warm_up_rounds + o.rounds; ++i) {
    check(reader.receive(m, soon()), reader.error());
    check(writer.send(m.kind, m.payload, soon()), writer.error());
  }
  for (int i = 0; i < 1 + o.big; ++i) {
    check(reader.receive(m, soon()), reader.error());
    check(writer.send(cg::MessageKind::value, ack, soon()), writer.error());
  }
}

Samples cg_measure(int out, int in, const Options& o) {
  cg::TcpWriter writer(out);
  cg::TcpReader reader(in);
  Samples s;
  const std::vector<std::byte> small(small_bytes, std::byte{'p'});
  const std::vector<std::byte> big(big_bytes, std::byte{'b'});
  cg::TcpReader::Message m{};
  for (int i = 0; i < warm_up_rounds + o.rounds; ++i) {
    const auto start = Clock::now();
    check(writer.send(cg::MessageKind::value, small, soon()), writer.error());
    check(reader.receive(m, soon()), reader.error());
    if (i >= warm_up_rounds)
      s.round_trip_us.push_back(Seconds(Clock::now() - start).count() * 1e6);
  }
  for (int i = 0; i < 1 + o.big; ++i) {
    const auto start = Clock::now();
    check(writer.send(cg::MessageKind::value, big, soon()), writer.error());
    check(reader.receive(m, soon()), reader.error());
    if (i >= 1)
      s.big_seconds.push_back(Seconds(Clock::now() - start).count());
  }
  return s;
}

// ---- one pass: an echo process and this one, connected ---------------------------

Samples run_pass(Transport transport, const Options& o) {
  int port_pipe[2];
  if (::pipe2(port_pipe, O_CLOEXEC) != 0)
    die("pipe failed");
  std::fflush(nullptr);
  const pid_t echo = ::fork();
  if (echo < 0)
    die("fork failed");
  const char* echo_host = o.netns ? "10.77.0.2" : "127.0.0.1";
  if (echo == 0) {
    if (o.netns)
      enter_namespace("cgtest-b");
    cg::detail::UniqueFd listener, connection;
    cg::Endpoint bound;
    std::string error;
    if (cg::detail::listen_tcp({echo_host, 0}, listener, bound, error) != cg::NetStatus::ok)
      die(error);
    if (::write(port_pipe[1], &bound.port, sizeof bound.port) != sizeof bound.port)
      die("pipe write failed");
    if (cg::detail::accept_tcp(listener.get(), soon(), connection, error) != cg::NetStatus::ok)
      die(error);
    if (transport == Transport::plain) {
      plain_echo(connection.release(), o);
    } else if (transport == Transport::cg) {
      const int fd = connection.release();
      cg_echo(fd, ::dup(fd), o);
    } else {
      cg::detail::UniqueFd back;
      if (cg::detail::accept_tcp(listener.get(), soon(), back, error) != cg::NetStatus::ok)
        die(error);
      cg_echo(connection.release(), back.release(), o);
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
  if (cg::detail::connect_tcp({echo_host, port}, soon(), connection, error) != cg::NetStatus::ok)
    die(error);
  const int fd = connection.release();
  Samples s;
  if (transport == Transport::plain) {
    s = plain_measure(fd, o);
  } else if (transport == Transport::cg) {
    s = cg_measure(fd, ::dup(fd), o);
  } else {
    cg::detail::UniqueFd back;
    if (cg::detail::connect_tcp({echo_host, port}, soon(), back, error) != cg::NetStatus::ok)
      die(error);
    s = cg_measure(fd, back.release(), o);
  }
  if (transport == Transport::plain)
    ::close(fd); // cg's writer closed its own
  int status = 0;
  ::waitpid(echo, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("the echo process failed");
  return s;
}

double crc_gigabytes_per_second() {
  const std::vector<std::byte> data(big_bytes, std::byte{7});
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    volatile std::uint32_t sink = cg::detail::crc32c(0, data.data(), data.size());
    (void)sink;
    seconds.push_back(Seconds(Clock::now() - start).count());
  }
  return static_cast<double>(big_bytes) / median(seconds) / 1e9;
}

int netns_script(const char* command) {
  const std::string line = std::string(CG_NETNS_SCRIPT) + " " + command;
  const int status = std::system(line.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--netns") {
      o.netns = true;
    } else if (arg == "--deadlines") {
      finite_deadlines = true;
    } else if (arg == "--rounds" && i + 1 < argc) {
      o.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--big" && i + 1 < argc) {
      o.big = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: tcp_pingpong [--netns] [--deadlines] [--rounds N] [--big N]\n");
      return 2;
    }
  }

  int lock = -1;
  if (o.netns) {
    lock = ::open("/run/lock/cgtest-netns-user.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock >= 0)
      ::flock(lock, LOCK_EX);
    const int code = netns_script("up");
    if (code == 77) {
      std::fprintf(stderr, "tcp_pingpong: --netns is not possible here (see above)\n");
      return 77;
    }
    if (code != 0)
      die("netns.sh up failed");
    enter_namespace("cgtest-a"); // the measuring side; the echo side enters cgtest-b
  }

  Samples plain, ours, split;
  for (int pass = 0; pass < passes; ++pass) {
    for (Transport t : {Transport::plain, Transport::cg, Transport::cg_split}) {
      Samples s = run_pass(t, o);
      Samples& into = t == Transport::plain ? plain : t == Transport::cg ? ours : split;
      into.round_trip_us.insert(into.round_trip_us.end(), s.round_trip_us.begin(),
                                s.round_trip_us.end());
      into.big_seconds.insert(into.big_seconds.end(), s.big_seconds.begin(), s.big_seconds.end());
    }
  }
  if (o.netns) {
    netns_script("down");
    ::close(lock);
  }

  const double rtt_plain = median(plain.round_trip_us), rtt_ours = median(ours.round_trip_us);
  const double rtt_split = median(split.round_trip_us);
  const double bw_plain = static_cast<double>(big_bytes) / median(plain.big_seconds) / 1e9;
  const double bw_ours = static_cast<double>(big_bytes) / median(ours.big_seconds) / 1e9;
  const double bw_split = static_cast<double>(big_bytes) / median(split.big_seconds) / 1e9;
  std::printf("tcp_pingpong over %s, cg waiting %s: %d passes x (%d round trips of %zu B, %d "
              "transfers of 64 MiB), medians\n",
              o.netns ? "a veth pair between netns cgtest-a and cgtest-b" : "loopback",
              finite_deadlines ? "with deadlines (poll)" : "without deadlines", passes, o.rounds,
              small_bytes, o.big);
  std::printf("%-26s %14s %14s %10s %18s\n", "", "plain TCP", "cg::Tcp*", "cg/plain",
              "cg, a conn each way");
  std::printf("%-26s %11.1f us %11.1f us %9.2fx %15.1f us\n", "8 B round trip", rtt_plain, rtt_ours,
              rtt_ours / rtt_plain, rtt_split);
  std::printf("%-26s %9.2f GB/s %9.2f GB/s %9.2fx %13.2f GB/s\n", "64 MiB one way (+8 B ack)",
              bw_plain, bw_ours, bw_ours / bw_plain, bw_split);
  std::printf("(CRC-32C alone on this machine: %.1f GB/s; cg checksums every byte on both sides)\n",
              crc_gigabytes_per_second());
  return 0;
}
