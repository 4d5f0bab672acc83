// ray_microbench.cg.cpp - the three graphs of Ray Compiled Graph's first microbenchmark.
//
// Ray's benchmark passes a one-byte payload through an echo method; ours
// passes an 8-byte word through the same. ray_microbench.cpp times each graph
// one call at a time, beside a bare floor (ray_microbench_floor.hpp).
#include <cg/cg.hpp>

#include <cstdint>

struct CG_ACTOR Echo {
  std::uint64_t echo(std::uint64_t x) { return x; }
};

// driver -> a -> driver
CG_GRAPH void single_actor(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");
  g.output(a.bind<&Echo::echo>(g.input<std::uint64_t>()));
}

// driver -> a, b, c, d at once -> driver gathers the four results
CG_GRAPH void scatter_gather(cg::GraphBuilder& g) {
  auto x = g.input<std::uint64_t>();
  g.output(g.actor<Echo>("a").bind<&Echo::echo>(x), g.actor<Echo>("b").bind<&Echo::echo>(x),
           g.actor<Echo>("c").bind<&Echo::echo>(x), g.actor<Echo>("d").bind<&Echo::echo>(x));
}

// driver -> a -> b -> c -> d -> driver
CG_GRAPH void chain_of_four(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");
  auto b = g.actor<Echo>("b");
  auto c = g.actor<Echo>("c");
  auto d = g.actor<Echo>("d");
  g.output(d.bind<&Echo::echo>(
      c.bind<&Echo::echo>(b.bind<&Echo::echo>(a.bind<&Echo::echo>(g.input<std::uint64_t>())))));
}
