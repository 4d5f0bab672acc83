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

// A name repeated by a loop: one error at the line, suggesting an indexed name.
CG_GRAPH void looped(cg::GraphBuilder& g) {
  auto value = g.input<std::string>();
  for (int i = 0; i < 3; ++i)
    value = g.actor<Echo>("worker").bind<&Echo::echo>(value);  // expected-error {{actor name 'worker' is made again by this line in graph 'looped'; give each actor a name of its own, in a loop with cg::indexed_name("worker", i)}}
  g.output(value);
}
