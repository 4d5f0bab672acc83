// A value passed between tasks is an object on a thread's stack: a type of
// gigabytes cannot be one.
#include <cg/cg.hpp>

#include <array>

struct CG_ACTOR Huge {
  std::array<char, (std::size_t{1} << 31)> make(int) { return {}; }
  int first(const std::array<char, (std::size_t{1} << 31)>& a) { return a[0]; }
};

CG_GRAPH void huge(cg::GraphBuilder& g) {
  auto h = g.actor<Huge>("h");
  auto made = h.bind<&Huge::make>(g.input<int>());  // expected-error {{type 'std::array<char, 2147483648>' is 2147483648 bytes, more than the 1048576 bytes (1 MiB) a value passed between tasks may be: it is held on a thread's stack; pass a std::vector or a cg::Tensor}}
  g.output(h.bind<&Huge::first>(made));
}
