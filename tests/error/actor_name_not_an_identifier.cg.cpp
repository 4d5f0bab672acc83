// An actor name is pasted into generated code, file names and placement
// files: only identifiers are accepted, so a quote cannot inject code and
// 'a-b' cannot collide with 'a_b'.
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};

CG_GRAPH void quoted(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("a\"x");  // expected-error {{an actor name may hold only letters, digits and '_', and cannot start with a digit}}
  g.output(a.bind<&Id::id>(g.input<int>()));
}

CG_GRAPH void dashed(cg::GraphBuilder& g) {
  auto a = g.actor<Id>(cg::indexed_name("stage-", 0));  // expected-error {{an actor name may hold only letters, digits and '_', and cannot start with a digit}}
  g.output(a.bind<&Id::id>(g.input<int>()));
}

CG_GRAPH void digit_first(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("0a");  // expected-error {{an actor name may hold only letters, digits and '_', and cannot start with a digit}}
  g.output(a.bind<&Id::id>(g.input<int>()));
}
