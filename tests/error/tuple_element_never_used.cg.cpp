// Each part of an unpacked result must be used, or its errors would be lost.
#include <cg/cg.hpp>

#include <tuple>

struct CG_ACTOR Math {
  std::tuple<int, int> divmod(int a, int b) { return {a / b, a % b}; }
};

CG_GRAPH void half_used(cg::GraphBuilder& g) {
  auto [a, b] = g.input<int, int>();
  auto math = g.actor<Math>("math");
  auto [quotient, remainder] = math.bind<&Math::divmod>(a, b);  // expected-error {{element #1 of the result of 'math.divmod' is never used; pass it to another task or to g.output(...)}}
  (void)remainder;
  g.output(quotient);
}
