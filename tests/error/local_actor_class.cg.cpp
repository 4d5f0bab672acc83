// Generated code names an actor's class from files of its own: a class
// declared inside the graph function cannot be named there.
#include <cg/cg.hpp>

CG_GRAPH void local(cg::GraphBuilder& g) {
  struct CG_ACTOR Local {  // expected-note {{'Local' is declared here}}
    int twice(int x) { return 2 * x; }
  };
  auto a = g.actor<Local>("a");  // expected-error {{actor class 'Local' is declared inside a function; generated code cannot name it: declare it at namespace scope}}
  g.output(a.bind<&Local::twice>(g.input<int>()));
}
