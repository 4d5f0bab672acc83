// Diagnostics about binds and actors made in a helper function name the
// helper's file and line, not the graph function's.
// cgc-expect-in: helper_in_another_file.hpp
#include "helper_in_another_file.hpp"

CG_GRAPH void helped(cg::GraphBuilder& g) {
  auto once = echo_twice(g, g.input<std::string>());
  auto b = another_a(g);
  g.output(b.bind<&Echo::echo>(once));
}
