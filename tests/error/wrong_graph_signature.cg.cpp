// A graph function takes the builder and returns nothing.
#include <cg/cg.hpp>

struct CG_ACTOR Echo {
  int id(int x) { return x; }
};

CG_GRAPH int counted(cg::GraphBuilder& g) {  // expected-error {{a CG_GRAPH function must be a non-template 'void counted(cg::GraphBuilder&)'}}
  auto a = g.actor<Echo>("a");
  g.output(a.bind<&Echo::id>(g.input<int>()));
  return 1;
}
