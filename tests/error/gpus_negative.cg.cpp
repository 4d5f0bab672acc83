// An actor's GPU count is a count: not negative.
#include <cg/cg.hpp>

struct CG_ACTOR Stage {
  int forward(int x) { return x; }
};

CG_GRAPH void negative_gpus(cg::GraphBuilder& g) {
  auto s = g.actor<Stage>("s").gpus(-1);  // expected-error {{gpus(n): n must not be negative}}
  g.output(s.bind<&Stage::forward>(g.input<int>()));
}
