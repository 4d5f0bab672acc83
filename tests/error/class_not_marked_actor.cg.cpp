// A class used as an actor must be marked CG_ACTOR: one error per class.
#include <cg/cg.hpp>

#include <string>

struct Echo {  // expected-note {{mark 'Echo' CG_ACTOR where it is declared}}
  std::string echo(std::string msg) { return msg; }
};

CG_GRAPH void unmarked(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");  // expected-error {{class 'Echo' is used as an actor but is not marked CG_ACTOR}}
  auto b = g.actor<Echo>("b");
  g.output(b.bind<&Echo::echo>(a.bind<&Echo::echo>(g.input<std::string>())));
}
