// A method of one class bound on an actor of another.
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};
struct CG_ACTOR Doubler {
  int twice(int x) { return 2 * x; }
};

CG_GRAPH void mixed_up(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("a");
  g.output(a.bind<&Doubler::twice>(g.input<int>()));  // expected-error {{bind<&C::method>: the method does not belong to this actor's class}}
}
