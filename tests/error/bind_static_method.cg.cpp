// Static methods run in no actor: they cannot be tasks.
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  static int id(int x) { return x; }
};

CG_GRAPH void stateless(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("a");
  g.output(a.bind<&Id::id>(g.input<int>()));  // expected-error {{bind<&C::method>: the method must be a non-static member function}}
}
