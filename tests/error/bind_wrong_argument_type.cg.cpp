// A method taking an int bound to a std::string value: an ordinary C++ error.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Doubler {
  int twice(int x) { return 2 * x; }
};

CG_GRAPH void wrong_type(cg::GraphBuilder& g) {
  auto a = g.actor<Doubler>("a");
  g.output(a.bind<&Doubler::twice>(g.input<std::string>()));  // expected-error {{no matching member function for call to 'bind'}}
}
