// A value belongs to the graph that made it.
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};

CG_GRAPH void borrowing(cg::GraphBuilder& g) {
  cg::GraphBuilder other;
  auto foreign = other.input<int>();
  auto a = g.actor<Id>("a");
  g.input<int>();
  g.output(a.bind<&Id::id>(foreign));  // expected-error {{this value belongs to another graph}}
}
