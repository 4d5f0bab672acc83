// A graph whose shape depends on what only a run knows: said in graph terms,
// with Clang's note on why kept, and what to do instead.
#include <cg/cg.hpp>

#include <cstdlib>

struct CG_ACTOR Echo {
  int echo(int x) { return x; }
};

int stages = 3;  // expected-note {{declared here}}

CG_GRAPH void from_environment(cg::GraphBuilder& g) {  // expected-error {{graph 'from_environment' cannot be evaluated at compile time}} expected-note {{a graph's shape is fixed when cgc compiles it: take its sizes and names from constexpr values, template parameters or -D definitions, not from run-time data}}
  auto v = g.input<int>();
  const char* wanted = std::getenv("STAGES");  // expected-note {{non-constexpr function 'getenv' cannot be used in a constant expression}}
  for (int i = 0; i < (wanted ? 2 : 1); ++i)
    v = g.actor<Echo>(cg::indexed_name("s", i)).bind<&Echo::echo>(v);
  g.output(v);
}

CG_GRAPH void from_a_global(cg::GraphBuilder& g) {  // expected-error {{graph 'from_a_global' cannot be evaluated at compile time}} expected-note {{a graph's shape is fixed when cgc compiles it: take its sizes and names from constexpr values, template parameters or -D definitions, not from run-time data}}
  auto v = g.input<int>();
  for (int i = 0; i < stages; ++i)  // expected-note {{read of non-const variable 'stages' is not allowed in a constant expression}}
    v = g.actor<Echo>(cg::indexed_name("t", i)).bind<&Echo::echo>(v);
  g.output(v);
}
