// Actor names are unique within a graph.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

CG_GRAPH void twins(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");  // expected-note {{first declared here}}
  auto b = g.actor<Echo>("a");  // expected-error {{actor name 'a' is already used in graph 'twins'}}
  g.output(b.bind<&Echo::echo>(a.bind<&Echo::echo>(g.input<std::string>())));
}
