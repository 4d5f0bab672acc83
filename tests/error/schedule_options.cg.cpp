// Not a must-fail source: a graph built through add_compiled_graph() with the
// scheduling options, so that CheckScheduleOptions.cmake can see them reach
// cgc and its artefacts land next to the generated sources.
#include <cg/cg.hpp>

namespace ns {

struct CG_ACTOR Stage {
  int forward(int x) { return x + 1; }
  int backward(int x) { return x - 1; }
};

CG_GRAPH void pipeline(cg::GraphBuilder& g) {
  auto a = g.actor<Stage>("a");
  auto b = g.actor<Stage>("b");
  auto in = g.input<int>();
  g.output(a.bind<&Stage::backward>(b.bind<&Stage::backward>(
      b.bind<&Stage::forward>(a.bind<&Stage::forward>(in)))));
}

} // namespace ns
