// An actor's name reaches the builder as a C string: a NUL inside the
// literal would end the name there, without a word.
#include <cg/cg.hpp>

struct CG_ACTOR Echo {
  int echo(int x) { return x; }
};

CG_GRAPH void nul(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("ab\0cd");  // expected-error {{an actor name holds a NUL character ('\0'), where the name would end: it would be 'ab'}}
  auto b = g.actor<Echo>(cg::indexed_name("w\0x", 1));  // expected-error {{the prefix of cg::indexed_name holds a NUL character ('\0'), where the name would end: it would be 'w'}}
  g.output(b.bind<&Echo::echo>(a.bind<&Echo::echo>(g.input<int>())));
}
