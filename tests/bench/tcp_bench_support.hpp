// tcp_bench_support.hpp - what the TCP benchmarks (tcp_pingpong, multihost_bench)
// share: the two sizes they measure and their samples, failing loudly,
// medians, entering a network namespace, and the plain TCP baseline's
// blocking send and receive.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cg_bench {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

/// The two cases: a small message there and back, a big one there (and an
/// 8-byte acknowledgement back).
constexpr std::size_t small_bytes = 8;
constexpr std::size_t big_bytes = std::size_t{64} << 20;

/// One pass's figures: each round trip in microseconds, each big transfer in seconds.
struct Samples {
  std::vector<double> round_trip_us;
  std::vector<double> big_seconds;
  std::vector<double> in_place_seconds; // the graph's: a tensor made in place
};

/// Prints "<program>: <what>" and exits with 1: a benchmark has no use for a
/// half-measured figure.
[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(1);
}

inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// Moves the calling thread into /run/netns/<name> (made by tests/e2e/netns.sh).
inline void enter_namespace(const char* name) {
  const int fd = ::open((std::string("/run/netns/") + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
    die(std::string("cannot enter network namespace ") + name);
  ::close(fd);
}

/// Plain TCP, the least any transport can do: blocking send() until all is out.
inline void send_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n <= 0)
      die("send failed");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

/// Blocking recv() until `bytes` are in.
inline void receive_all(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n <= 0)
      die("recv failed");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

} // namespace cg_bench
