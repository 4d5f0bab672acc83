// A statement outside any function: the error a compiler of the whole file
// gives, at its line (Clang's incremental mode, which cgc's probe needs,
// crashed on these).
#include <cg/cg.hpp>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};

int stages = 2;
for (int i = 0; i < stages; ++i) {}  // expected-error {{expected unqualified-id}}
stages = 3;  // expected-error {{a type specifier is required for all declarations}}
{}  // expected-error {{expected unqualified-id}}
return;  // expected-error {{expected unqualified-id}}

CG_GRAPH void graph(cg::GraphBuilder& g) {
  g.output(g.actor<Id>("a").bind<&Id::id>(g.input<int>()));
}
