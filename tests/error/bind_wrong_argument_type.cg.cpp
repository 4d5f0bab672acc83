// A bind whose argument has another type than the method's parameter: one
// error at the argument, in the graph's terms, and a note at the method.
#include <cg/cg.hpp>

#include <string>

struct Request {
  int id;
};
struct Prediction {
  float score;
};

struct CG_ACTOR Doubler {
  int twice(int x) { return 2 * x; }
};

struct CG_ACTOR Post {
  int combine(Prediction p, Request r) { return r.id + static_cast<int>(p.score); }  // expected-note {{'Post::combine' is declared here}}
};

CG_GRAPH void wrong_type(cg::GraphBuilder& g) {
  auto a = g.actor<Doubler>("a");
  g.output(a.bind<&Doubler::twice>(g.input<std::string>()));  // expected-error {{argument 1 of 'Doubler::twice' is a cg::Value<std::string>; the parameter is 'int'}}
}

CG_GRAPH void second_argument(cg::GraphBuilder& g) {
  auto post = g.actor<Post>("post");
  auto prediction = g.input<Prediction>();
  g.output(post.bind<&Post::combine>(prediction, prediction));  // expected-error {{argument 2 of 'Post::combine' is a cg::Value<Prediction>; the parameter is 'Request'}}
}
