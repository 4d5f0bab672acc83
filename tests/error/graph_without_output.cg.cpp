// A graph must return something.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

CG_GRAPH void silent(cg::GraphBuilder& g) {  // expected-error {{graph 'silent' has no output; call g.output(...)}}
  g.actor<Echo>("a");
}
