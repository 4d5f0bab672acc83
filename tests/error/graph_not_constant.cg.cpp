// A graph function must be constant-evaluable: Clang's own note says why not.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

const char* actor_name() { return "a"; }  // expected-note {{declared here}}

CG_GRAPH void dynamic(cg::GraphBuilder& g) {  // expected-error {{graph 'dynamic' cannot be evaluated at compile time}}
  auto a = g.actor<Echo>(actor_name());  // expected-note {{non-constexpr function 'actor_name' cannot be used in a constant expression}}
  g.output(a.bind<&Echo::echo>(g.input<std::string>()));
}
