// Only regular files are included: Clang would read a device as an empty
// file, and a pipe or a terminal would block.
#include <cg/cg.hpp>

#include "/dev/zero" // expected-error {{'/dev/zero' is not a regular file (a device, a pipe or a socket): it cannot be included}}

struct CG_ACTOR Echo {
  int id(int x) { return x; }
};

CG_GRAPH void echo(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("a").bind<&Echo::id>(g.input<int>()));
}
