// A value declared to be assigned later, as a feedback edge would be: one
// error in the graph's terms (no cycles; state lives in the actor), not the
// builder's constructors.
#include <cg/cg.hpp>

struct CG_ACTOR Accumulator {
  int add(int x, int previous) { return x + previous; }
};

CG_GRAPH void feedback(cg::GraphBuilder& g) {
  auto acc = g.actor<Accumulator>("acc");
  cg::Value<int> previous;  // expected-error {{a cg::Value cannot be declared before it is bound: a graph has no cycles, so every value is a task's result, a graph input or a constant; state that carries from one execution to the next lives in the actor (a member its method updates)}}
  auto sum = acc.bind<&Accumulator::add>(g.input<int>(), previous);
  previous = sum;
  g.output(sum);
}
