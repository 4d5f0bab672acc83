// bench.cg.cpp - the graphs the benchmarks time.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

struct CG_ACTOR Relay {
  std::uint64_t echo(std::uint64_t x) { return x; }
  // Receives a payload, answers with its size: one hop of payload, read in
  // place (the span points into the channel's shared memory).
  std::uint64_t absorb(std::span<const std::uint8_t> payload) { return payload.size(); }
  // The same for a tensor the driver made in place (graph.input_tensor()):
  // no copy on either side.
  std::uint64_t absorb_tensor(cg::TensorView payload) { return payload.nbytes(); }
  // Receives a payload by value and gives it back: a copy out of the channel
  // on each side, beyond what the span path costs.
  std::vector<std::uint8_t> give_back(std::vector<std::uint8_t> payload) { return payload; }
  // Busy for 25 microseconds by the steady clock, then echoes: a chain of two
  // of these is a graph whose execution takes 50, against which what a
  // profile costs is judged a second time (profile_cost_bench).
  std::uint64_t work(std::uint64_t x) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(25);
    while (std::chrono::steady_clock::now() < until) {
    }
    return x;
  }
};

// driver -> a -> driver
CG_GRAPH void round_trip(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  g.output(a.bind<&Relay::echo>(g.input<std::uint64_t>()));
}

// driver -> a -> b -> driver
CG_GRAPH void chain(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  auto b = g.actor<Relay>("b");
  g.output(b.bind<&Relay::echo>(a.bind<&Relay::echo>(g.input<std::uint64_t>())));
}

// driver -> a -> b -> driver, each actor busy for a while (Relay::work)
CG_GRAPH void long_chain(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  auto b = g.actor<Relay>("b");
  g.output(b.bind<&Relay::work>(a.bind<&Relay::work>(g.input<std::uint64_t>())));
}

// driver -> a (payload) -> driver (8 bytes)
CG_GRAPH void payload_hop(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  g.output(a.bind<&Relay::absorb>(g.input<std::vector<std::uint8_t>>()));
}

// driver -> a (a tensor made in place) -> driver (8 bytes)
CG_GRAPH void tensor_hop(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  g.output(a.bind<&Relay::absorb_tensor>(g.input<cg::Tensor>()));
}

// driver -> a (payload, by value) -> driver (the payload again)
CG_GRAPH void payload_echo(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  g.output(a.bind<&Relay::give_back>(g.input<std::vector<std::uint8_t>>()));
}

// driver -> N actors -> driver
CG_GRAPH void fanout1(cg::GraphBuilder& g) {
  auto x = g.input<std::uint64_t>();
  g.output(g.actor<Relay>("r0").bind<&Relay::echo>(x));
}
CG_GRAPH void fanout2(cg::GraphBuilder& g) {
  auto x = g.input<std::uint64_t>();
  g.output(g.actor<Relay>("r0").bind<&Relay::echo>(x), g.actor<Relay>("r1").bind<&Relay::echo>(x));
}
CG_GRAPH void fanout4(cg::GraphBuilder& g) {
  auto x = g.input<std::uint64_t>();
  g.output(g.actor<Relay>("r0").bind<&Relay::echo>(x), g.actor<Relay>("r1").bind<&Relay::echo>(x),
           g.actor<Relay>("r2").bind<&Relay::echo>(x), g.actor<Relay>("r3").bind<&Relay::echo>(x));
}
