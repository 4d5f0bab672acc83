// CG_GRAPH_OVER names a function marked CG_ACTOR_SET and defined in the source.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

constexpr void helpers(cg::GraphBuilder& s) {  // expected-note {{mark 'helpers' CG_ACTOR_SET}}
  s.actor<Echo>("a");
}

CG_GRAPH_OVER(helpers) void over(cg::GraphBuilder& g) {  // expected-error {{graph 'over' runs over 'helpers', which is not marked CG_ACTOR_SET}}
  g.output(g.actor<Echo>("a").bind<&Echo::echo>(g.input<std::string>()));
}

CG_ACTOR_SET void elsewhere(cg::GraphBuilder& s);  // expected-note {{declared here}}

CG_GRAPH_OVER(elsewhere) void over_elsewhere(cg::GraphBuilder& g) {  // expected-error {{graph 'over_elsewhere' runs over actor set 'elsewhere', which this source declares but does not define}}
  g.output(g.actor<Echo>("a").bind<&Echo::echo>(g.input<std::string>()));
}
