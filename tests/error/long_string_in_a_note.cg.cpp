// Clang quotes a string literal whole in its notes: one of 4 MiB is shown by
// its start and its length.
#include <cg/cg.hpp>

#define S16 "aaaaaaaaaaaaaaaa"
#define S256 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16
#define S4K S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256
#define S64K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K S4K
#define S1M S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K S64K

struct CG_ACTOR Echo {
  int echo(int x) { return x; }
};

constexpr int lengthOf(const char* text) {
  int n = 0;
  while (text[n] != '\0')
    ++n;
  return n;
}

CG_GRAPH void long_text(cg::GraphBuilder& g) {  // expected-error {{graph 'long_text' cannot be evaluated at compile time}}
  auto a = g.actor<Echo>("a");
  g.output(a.bind<&Echo::echo>(lengthOf(S1M S1M S1M S1M)));  // expected-note {{in call to 'lengthOf(&"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..." (4194304 characters)[0])'}}
}
