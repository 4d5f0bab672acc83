// A bind whose argument has another type than the method's parameter: one
// error at the argument, in the graph's terms, and a note at the method.
#include <cg/cg.hpp>

#include <cstdint>
#include <string>
#include <vector>

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

// A task's result given where another value was meant: the result's real type
// (not the builder's template parameter), and the one value of the parameter's
// type in scope as the likely intent.
struct CG_ACTOR Tokenizer {
  std::vector<std::int32_t> ids(std::string text) { return {static_cast<std::int32_t>(text.size())}; }
};
struct CG_ACTOR Embedder {
  std::vector<float> embed(std::vector<std::int32_t> ids) { return {static_cast<float>(ids[0])}; }
};
struct CG_ACTOR Stats {
  float l2(std::vector<float> v) { return v[0]; }  // expected-note {{'Stats::l2' is declared here}}
};

CG_GRAPH void task_result(cg::GraphBuilder& g) {
  auto tokenizer = g.actor<Tokenizer>("tokenizer");
  auto embedder = g.actor<Embedder>("embedder");
  auto stats = g.actor<Stats>("stats");
  auto ids = tokenizer.bind<&Tokenizer::ids>(g.input<std::string>());
  auto vec = embedder.bind<&Embedder::embed>(ids);
  g.output(stats.bind<&Stats::l2>(ids), vec);  // expected-error {{argument 1 of 'Stats::l2' is a cg::Value<std::vector<int>>; the parameter is 'std::vector<float>'; did you mean 'vec'?}}
}
