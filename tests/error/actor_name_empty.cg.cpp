// Builder rules broken at compile time are reported at the user's line.
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};

CG_GRAPH void nameless(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("");  // expected-error {{actor name is empty}}
  g.output(a.bind<&Id::id>(g.input<int>()));
}
