// A logical host index is 0 to 65535 (actor.host(i)).
#include <cg/cg.hpp>

struct CG_ACTOR Stage {
  int forward(int x) { return x; }
};

CG_GRAPH void far_away(cg::GraphBuilder& g) {
  auto s = g.actor<Stage>("s").host(-1);  // expected-error {{actor.host(i): a host index must be 0 to 65535}}
  g.output(s.bind<&Stage::forward>(g.input<int>()));
}
