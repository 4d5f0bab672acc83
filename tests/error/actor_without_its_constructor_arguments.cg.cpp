// An actor whose class cannot be built without arguments gets them, from its
// g.actor line or, in a graph over an actor set, from the set (a set's own
// actor without them: actor_set_declares_more_than_actors.cg.cpp).
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  explicit Echo(int id) : id(id) {}
  std::string echo(std::string msg) { return msg + std::to_string(id); }
  int id;
};

CG_GRAPH void chain(cg::GraphBuilder& g) {
  auto a = g.actor<Echo>("a");  // expected-error {{class 'Echo' cannot be built without arguments: give them, g.actor<Echo>("a", args...), or name an actor of an actor set in a graph over it}}
  g.output(a.bind<&Echo::echo>(g.input<std::string>()));
}
