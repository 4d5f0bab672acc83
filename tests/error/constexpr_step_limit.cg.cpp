// A graph that runs away hits the evaluator's step limit; cgc says how to raise it.
// cgc-args: --constexpr-steps=20000
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};

constexpr int busy(int rounds) {
  int n = 0;
  for (int i = 0; i < rounds; ++i)
    n += i % 3;  // expected-note {{constexpr evaluation hit maximum step limit; possible infinite loop?}}
  return n;
}

CG_GRAPH void runaway(cg::GraphBuilder& g) {  // expected-error {{graph 'runaway' cannot be evaluated at compile time}} expected-note {{cgc evaluates graphs with -fconstexpr-steps=20000; raise it with 'cgc --constexpr-steps=N' (add_compiled_graph(... CONSTEXPR_STEPS N))}}
  auto a = g.actor<Id>("a");
  if (busy(1000000) > 0)
    g.output(a.bind<&Id::id>(g.input<int>()));
}
