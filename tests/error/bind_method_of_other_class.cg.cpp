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
  g.output(a.bind<&Doubler::twice>(g.input<int>()));  // expected-error {{'Doubler::twice' is a method of 'Doubler', but this actor's class is 'Id'; bind it on an actor of class 'Doubler', or bind a method of 'Id'}}
}
