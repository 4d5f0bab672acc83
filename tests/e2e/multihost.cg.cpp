// multihost.cg.cpp - a 3-actor graph with two actors on a second host, for the
// scale-out tests (tests/e2e/multihost_test.cpp) and the benchmark.
//
//   input x -> a.add -> b.add -> c.add -> output #0
//                        b.add ---------> output #1   (read by c and by the driver)
//   input s -> a.where -> b.where -> c.where -> output #2
//
// a stays on the driver's host; b and c are placed on host 1, so a -> b, b ->
// driver and c -> driver cross hosts (TCP) and b -> c does not (one process).
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <unistd.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

struct CG_ACTOR Stage {
  // A negative k is refused: a start-up failure on another host.
  constexpr explicit Stage(std::int64_t k) : k(k) {
    if (k < 0)
      throw std::invalid_argument("k must not be negative, not " + std::to_string(k));
  }

  // x + k; a negative x is refused (an error that crosses hosts as a value).
  std::int64_t add(std::int64_t x) {
    if (x < 0)
      throw std::invalid_argument("negative input " + std::to_string(x));
    return x + k;
  }

  // `path` followed by this process's network namespace, e.g. "net:[4026532]".
  std::string where(std::string path) {
    char link[64] = {};
    ssize_t n = ::readlink("/proc/self/ns/net", link, sizeof link - 1);
    return path + (path.empty() ? "" : " ") +
           std::string(link, n > 0 ? static_cast<std::size_t>(n) : 0);
  }

  // FNV-1a of the bytes, after `busy_ms` milliseconds of (pretended) work.
  std::uint64_t digest(std::int64_t busy_ms, std::span<const std::uint8_t> bytes) {
    ::usleep(static_cast<useconds_t>(busy_ms * 1000));
    std::uint64_t hash = 14695981039346656037ull;
    for (std::uint8_t byte : bytes)
      hash = (hash ^ byte) * 1099511628211ull;
    return hash;
  }

  // The bytes, back.
  std::vector<std::uint8_t> echo(std::span<const std::uint8_t> bytes) {
    return {bytes.begin(), bytes.end()};
  }

  // How many bytes arrived, read where they arrived (in the channel's memory).
  std::uint64_t size(std::span<const std::uint8_t> bytes) { return bytes.size(); }
  // The same, for a tensor.
  std::uint64_t tensor_size(cg::TensorView t) { return t.nbytes(); }

  std::int64_t k;
};

CG_GRAPH void multihost(cg::GraphBuilder& g) {
  auto a = g.actor<Stage>("a", 1);
  auto b = g.actor<Stage>("b", 10).host(1);
  auto c = g.actor<Stage>("c", 100).host(1);
  auto [x, s] = g.input<std::int64_t, std::string>();
  auto yb = b.bind<&Stage::add>(a.bind<&Stage::add>(x));
  auto yc = c.bind<&Stage::add>(yb);
  auto w = c.bind<&Stage::where>(b.bind<&Stage::where>(a.bind<&Stage::where>(s)));
  g.output(yc, yb, w);
}

// The benchmark's round trip: bytes from the driver to b (on host 1), their
// count back.
CG_GRAPH void remote_size(cg::GraphBuilder& g) {
  auto b = g.actor<Stage>("b", 0).host(1);
  g.output(b.bind<&Stage::size>(g.input<std::vector<std::uint8_t>>()));
}

// The same with a tensor the driver makes in place (graph.input_tensor()).
CG_GRAPH void remote_tensor_size(cg::GraphBuilder& g) {
  auto b = g.actor<Stage>("b", 0).host(1);
  g.output(b.bind<&Stage::tensor_size>(g.input<cg::Tensor>()));
}

// Large inputs for b alone, which hashes each after `busy` ms: what the
// driver sends from the caller's memory.
CG_GRAPH void remote_digest(cg::GraphBuilder& g) {
  auto b = g.actor<Stage>("b", 0).host(1);
  auto [busy, bytes] = g.input<std::int64_t, std::vector<std::uint8_t>>();
  g.output(b.bind<&Stage::digest>(busy, bytes));
}

// A large value there and back: the result, too, goes from the method's value.
CG_GRAPH void remote_echo(cg::GraphBuilder& g) {
  auto b = g.actor<Stage>("b", 0).host(1);
  g.output(b.bind<&Stage::echo>(g.input<std::vector<std::uint8_t>>()));
}
