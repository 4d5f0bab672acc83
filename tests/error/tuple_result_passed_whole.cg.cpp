// A task's tuple result is one value per element: passing it whole is
// named as what it is, not as the builder's own type.
#include <cg/cg.hpp>

#include <tuple>

struct CG_ACTOR Math {
  std::tuple<int, int> divmod(int a, int b) { return {a / b, a % b}; }
  int twice(int x) { return 2 * x; }
};

CG_GRAPH void whole(cg::GraphBuilder& g) {
  auto [a, b] = g.input<int, int>();
  auto math = g.actor<Math>("math");
  auto both = math.bind<&Math::divmod>(a, b);
  g.output(math.bind<&Math::twice>(both));  // expected-error {{argument 1 of 'Math::twice' is the whole 'std::tuple<int, int>' result of a task; unpack it (auto [x, y] = a.bind<...>(...)) and pass an element; the parameter is 'int'}}
}
