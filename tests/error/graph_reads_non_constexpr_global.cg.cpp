// A global without constexpr given to an actor's constructor: Clang's own
// reason (the read of a non-const variable) on the graph's error, the call at
// the user's line instead of the builder's internals, and the variable.
#include <cg/cg.hpp>

struct CG_ACTOR Embedder {
  explicit Embedder(int dim) : dim(dim) {}
  int embed(int x) { return x * dim; }
  int dim;
};

int embedding_dim = 16;  // expected-note {{declared here}}

CG_GRAPH void nlp(cg::GraphBuilder& g) {  // expected-error {{graph 'nlp' cannot be evaluated at compile time: read of non-const variable 'embedding_dim' is not allowed in a constant expression}} expected-note {{a graph's shape is fixed when cgc compiles it: take its sizes and names from constexpr values, template parameters or -D definitions, not from run-time data}}
  auto emb = g.actor<Embedder>("emb", embedding_dim);  // expected-note {{in this call}}
  g.output(emb.bind<&Embedder::embed>(g.input<int>()));
}
