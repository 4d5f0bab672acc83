// An input nobody reads is a mistake, not a no-op.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
  std::string hello() { return "hello"; }
};

CG_GRAPH void ignores_input(cg::GraphBuilder& g) {  // expected-error {{graph input #0 is never used}}
  auto a = g.actor<Echo>("a");
  g.input<std::string>();
  g.output(a.bind<&Echo::hello>());
}
