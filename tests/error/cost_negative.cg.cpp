// Costs (for cgc --schedule=cost) are run times: finite and not negative.
#include <cg/cg.hpp>

struct CG_ACTOR Stage {
  int forward(int x) { return x; }
};

CG_GRAPH void negative(cg::GraphBuilder& g) {
  auto s = g.actor<Stage>("s");
  g.cost<&Stage::forward>(-1.0);  // expected-error {{g.cost<&C::method>(c): a cost must be finite and not negative}}
  g.output(s.bind<&Stage::forward>(g.input<int>()));
}
