// A graph far beyond sense: cgc writes it, warning about the files it takes.
#include <cg/cg.hpp>

struct CG_ACTOR Stage {
  int step(int x) { return x + 1; }
};

CG_GRAPH void many(cg::GraphBuilder& g) {
  auto v = g.input<int>();
  for (int a = 0; a < 2001; ++a)
    v = g.actor<Stage>(cg::indexed_name("s", a)).bind<&Stage::step>(v);
  g.output(v);
}
