// A task whose result nobody reads would lose its errors silently.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

CG_GRAPH void dropped(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");
  auto b = g.actor<Echo>("b");
  auto in = g.input<std::string>();
  b.bind<&Echo::echo>(in);  // expected-error {{result of 'b.echo' is never used; pass it to another task or to g.output(...)}}
  g.output(a.bind<&Echo::echo>(in));
}
