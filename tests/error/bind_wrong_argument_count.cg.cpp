// A bind given more or fewer arguments than its method takes: one error at
// the bind, and a note at the method (not Clang's note per arity overload).
#include <cg/cg.hpp>

struct CG_ACTOR Post {
  int combine(int a, int b) { return a + b; }  // expected-note {{'Post::combine' is declared here}}
};

CG_GRAPH void too_few(cg::GraphBuilder& g) {
  auto post = g.actor<Post>("post");
  g.output(post.bind<&Post::combine>(g.input<int>()));  // expected-error {{'Post::combine' takes 2 arguments, but bind was given 1}}
}

CG_GRAPH void too_many(cg::GraphBuilder& g) {
  auto post = g.actor<Post>("post");
  auto x = g.input<int>();
  g.output(post.bind<&Post::combine>(x, x, x));  // expected-error {{'Post::combine' takes 2 arguments, but bind was given 3}}
}
