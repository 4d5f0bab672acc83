// expected-error {{no CG_GRAPH function found; mark a 'void graph(cg::GraphBuilder&)' function with CG_GRAPH}}
#include <cg/cg.hpp>

struct CG_ACTOR Lonely {
  int id(int x) { return x; }
};
