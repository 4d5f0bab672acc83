//===- GraphFixtures.h - Hand-built graphs for compiler unit tests -*- C++ -*-===//
//
// The IR passes are tested without the Clang frontend, so the tests need a
// short way to write a graph the way a CG_GRAPH function would create it:
// inputs, actors and binds append values in creation order, and each bind
// records the value it produces. The named graphs below are shared by the
// JSON, validation and scheduling tests so they all talk about the same
// shapes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>
#include <utility>
#include <vector>

namespace cg::test {

/// Every fixture pretends to come from this file; the scheduler's text output
/// shows only its basename.
inline constexpr const char* kGraphFile = "examples/echo/echo.cg.cpp";

inline ir::SourceLoc at(unsigned line, unsigned column = 3) {
  return {kGraphFile, line, column};
}

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name, unsigned line = 10) {
    graph_.name = std::move(name);
    graph_.loc = at(line, 1);
  }

  /// g.input<T>(): returns the new value's id.
  unsigned input(std::string type = "std::string") {
    unsigned value = newValue(
        std::move(type),
        {ir::Producer::Kind::Input, static_cast<unsigned>(graph_.inputs.size())});
    graph_.inputs.push_back(value);
    return value;
  }

  /// g.actor<C>("name"): returns the actor's index.
  unsigned actor(std::string name, unsigned line,
                 std::string className = "::EchoActor") {
    graph_.actors.push_back({std::move(name), std::move(className), at(line)});
    return static_cast<unsigned>(graph_.actors.size() - 1);
  }

  /// actor.bind<&C::method>(args...): returns the result value's id.
  unsigned bind(unsigned actor, std::string method, std::vector<unsigned> args,
                unsigned line, std::string resultType = "std::string") {
    unsigned task = static_cast<unsigned>(graph_.tasks.size());
    unsigned result =
        newValue(std::move(resultType), {ir::Producer::Kind::Task, task});
    graph_.tasks.push_back(
        {actor, std::move(method), std::move(args), result, at(line)});
    return result;
  }

  /// g.output(value).
  GraphBuilder& output(unsigned value) {
    graph_.outputs.push_back(value);
    return *this;
  }

  ir::Graph build() const { return graph_; }

private:
  unsigned newValue(std::string type, ir::Producer producer) {
    graph_.values.push_back({{std::move(type)}, producer});
    return static_cast<unsigned>(graph_.values.size() - 1);
  }

  ir::Graph graph_;
};

/// x -> a.echo -> b.echo -> output.
inline ir::Graph chainGraph() {
  GraphBuilder g("chain", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  unsigned vb = g.bind(b, "echo", {va}, 14);
  g.output(vb);
  return g.build();
}

/// x -> {a, b, c}.echo, each result an output.
inline ir::Graph fanOutGraph() {
  GraphBuilder g("fan_out", 20);
  unsigned x = g.input();
  unsigned a = g.actor("a", 21);
  unsigned b = g.actor("b", 22);
  unsigned c = g.actor("c", 23);
  unsigned va = g.bind(a, "echo", {x}, 24);
  unsigned vb = g.bind(b, "echo", {x}, 25);
  unsigned vc = g.bind(c, "echo", {x}, 26);
  g.output(va).output(vb).output(vc);
  return g.build();
}

/// x -> a.first -> a.second -> output: the middle value never leaves `a`.
inline ir::Graph sameActorGraph() {
  GraphBuilder g("same_actor", 30);
  unsigned x = g.input();
  unsigned a = g.actor("a", 31, "::Pipeline");
  unsigned first = g.bind(a, "first", {x}, 32);
  unsigned second = g.bind(a, "second", {first}, 33, "int");
  g.output(second);
  return g.build();
}

/// x -> a.produce; its result goes both to a.local (same actor) and to
/// b.remote (another actor); both of those are outputs.
inline ir::Graph sharedResultGraph() {
  GraphBuilder g("shared", 40);
  unsigned x = g.input();
  unsigned a = g.actor("a", 41);
  unsigned b = g.actor("b", 42);
  unsigned produced = g.bind(a, "produce", {x}, 43);
  unsigned local = g.bind(a, "local", {produced}, 44);
  unsigned remote = g.bind(b, "remote", {produced}, 45);
  g.output(local).output(remote);
  return g.build();
}

} // namespace cg::test
