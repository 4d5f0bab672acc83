// A graph over an actor set names the set's actors, as the set declares them.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  explicit Echo(int id) : id(id) {}
  std::string echo(std::string msg) { return msg + std::to_string(id); }
  int id;
};

struct CG_ACTOR Other {
  std::string echo(std::string msg) { return msg; }
};

CG_ACTOR_SET void workers(cg::GraphBuilder& s) {  // expected-note {{actor set 'workers' is declared here}}
  s.actor<Echo>("a", 1);  // expected-note {{'a' is declared here}}
  s.actor<Echo>("b", 2);  // expected-note {{'b' is declared here}}
  s.actor<Echo>("c", 3).gpus(1);  // expected-note {{'c' is declared here}}
  s.actor<Echo>("d", 4).host(1);  // expected-note {{'d' is declared here}}
}

CG_GRAPH_OVER(workers) void unknown(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("critic").bind<&Echo::echo>(g.input<std::string>()));  // expected-error {{graph 'unknown' runs over actor set 'workers', which has no actor named 'critic'}}
}

CG_GRAPH_OVER(workers) void other_class(cg::GraphBuilder& g) {
  g.output(g.actor<Other>("a").bind<&Other::echo>(g.input<std::string>()));  // expected-error {{actor 'a' is a 'Echo' in actor set 'workers'; graph 'other_class' makes it a 'Other'}}
}

CG_GRAPH_OVER(workers) void other_arguments(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("b", 5).bind<&Echo::echo>(g.input<std::string>()));  // expected-error {{actor 'b' is built with (2) in actor set 'workers'; graph 'other_arguments' gives (5)}}
}

CG_GRAPH_OVER(workers) void other_gpus(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("c").gpus(2).bind<&Echo::echo>(g.input<std::string>()));  // expected-error {{actor 'c' has .gpus(1) in actor set 'workers'; graph 'other_gpus' gives .gpus(2)}}
}

CG_GRAPH_OVER(workers) void other_host(cg::GraphBuilder& g) {
  g.output(g.actor<Echo>("d").host(2).bind<&Echo::echo>(g.input<std::string>()));  // expected-error {{actor 'd' is on .host(1) in actor set 'workers'; graph 'other_host' gives .host(2)}}
}
