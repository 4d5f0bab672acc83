// Generated code calls a bound method with the values it received, which
// would deduce other template arguments than the bind names.
#include <cg/cg.hpp>

#include <cstdint>

struct CG_ACTOR Widen {
  template <typename T> T same(T x) { return x; }
};

CG_GRAPH void widen(cg::GraphBuilder& g) {
  auto w = g.actor<Widen>("w");
  g.output(w.bind<&Widen::same<std::int64_t>>(g.input<std::int64_t>()));  // expected-error {{method 'Widen::same' is a member function template; bind a method that is not a template (one that calls this one)}}
}
