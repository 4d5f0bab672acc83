// quickstart.cg.cpp - the graphs of Ray Compiled Graph's quickstart, in C++.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR EchoActor {
  std::string echo(std::string msg) { return msg; }
};

// driver -> a -> b -> driver
CG_GRAPH void chain(cg::GraphBuilder& g) {
  auto a = g.actor<EchoActor>("a");
  auto b = g.actor<EchoActor>("b");
  auto in = g.input<std::string>();
  g.output(b.bind<&EchoActor::echo>(a.bind<&EchoActor::echo>(in)));
}

// The same input to three actors; their three results are the outputs.
CG_GRAPH void fanout(cg::GraphBuilder& g) {
  auto in = g.input<std::string>();
  auto x = g.actor<EchoActor>("x");
  auto y = g.actor<EchoActor>("y");
  auto z = g.actor<EchoActor>("z");
  g.output(x.bind<&EchoActor::echo>(in), y.bind<&EchoActor::echo>(in),
           z.bind<&EchoActor::echo>(in));
}

// Three actors in a row: executions overlap as they flow down the pipeline.
CG_GRAPH void pipeline(cg::GraphBuilder& g) {
  auto in = g.input<std::string>();
  auto first = g.actor<EchoActor>("first");
  auto second = g.actor<EchoActor>("second");
  auto third = g.actor<EchoActor>("third");
  g.output(third.bind<&EchoActor::echo>(
      second.bind<&EchoActor::echo>(first.bind<&EchoActor::echo>(in))));
}
