// A source that ends inside a function (a file cut off, say) is reported at
// its own last line, not at a file of cgc's.
#include <cg/cg.hpp>

struct CG_ACTOR Echo {
  int echo(int x) { return x; }
};

CG_GRAPH void cut(cg::GraphBuilder& g) {  // expected-note {{to match this '{'}}
  auto a = g.actor<Echo>("a");
  g.output(a.bind<&Echo::echo>(g.input<int>()));  // expected-error {{expected '}'}}
