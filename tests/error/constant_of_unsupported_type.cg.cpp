// Constants are embedded in generated code: only simple types can be.
#include <cg/cg.hpp>

struct Point {
  int x;
  int y;
};

struct CG_ACTOR Plotter {
  int plot(Point p) { return p.x + p.y; }
};

CG_GRAPH void plotting(cg::GraphBuilder& g) {
  auto a = g.actor<Plotter>("a");
  g.output(a.bind<&Plotter::plot>(Point{1, 2}));  // expected-error {{bind<>: a constant argument must be arithmetic, an enum or a string literal; pass other values as graph inputs}}
}
