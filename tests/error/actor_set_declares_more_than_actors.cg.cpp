// An actor set declares actors, each once and with its arguments, and at least one.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

struct CG_ACTOR Numbered {
  explicit Numbered(int id) : id(id) {}
  int id;
};

CG_ACTOR_SET void binds(cg::GraphBuilder& s) {
  auto a = s.actor<Echo>("a");
  a.bind<&Echo::echo>("hello");  // expected-error {{actor set 'binds' declares actors only; bind, read inputs and write outputs in a graph over it, CG_GRAPH_OVER(binds)}}
}

CG_ACTOR_SET void reads(cg::GraphBuilder& s) {  // expected-error {{actor set 'reads' declares actors only; bind, read inputs and write outputs in a graph over it, CG_GRAPH_OVER(reads)}}
  s.actor<Echo>("a");
  s.input<std::string>();
}

CG_ACTOR_SET void empty(cg::GraphBuilder&) {}  // expected-error {{actor set 'empty' declares no actor}}

CG_ACTOR_SET void twins(cg::GraphBuilder& s) {
  s.actor<Echo>("a");  // expected-note {{first declared here}}
  s.actor<Echo>("a");  // expected-error {{actor name 'a' is already used in actor set 'twins'}}
}

CG_ACTOR_SET void unbuilt(cg::GraphBuilder& s) {
  s.actor<Numbered>("n");  // expected-error {{class 'Numbered' cannot be built without arguments: give them, g.actor<Numbered>("n", args...)}}
}

CG_GRAPH_OVER(binds) void over(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("a").bind<&Echo::echo>(g.input<std::string>()));
}
