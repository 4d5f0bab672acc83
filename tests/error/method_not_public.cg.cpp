// Only public methods can be bound: C++ access control says so first.
#include <cg/cg.hpp>

#include <string>

class CG_ACTOR Vault {
  std::string secret(std::string key) { return key; }
};

CG_GRAPH void peek(cg::GraphBuilder& g) {
  auto a = g.actor<Vault>("a");
  g.output(a.bind<&Vault::secret>(g.input<std::string>()));  // expected-error {{'secret' is a private member of 'Vault'}}
}
