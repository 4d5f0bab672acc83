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

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cg::test {

/// Every fixture pretends to come from this file; the scheduler's text output
/// shows only its basename.
inline constexpr const char* kGraphFile = "examples/echo/echo.cg.cpp";

inline ir::SourceLoc at(unsigned line, unsigned column = 3) { return {kGraphFile, line, column}; }

/// A compile-time constant, e.g. constant("int", "42").
inline ir::Constant constant(std::string type, std::string expression) {
  return {{std::move(type)}, std::move(expression)};
}

/// One argument of GraphBuilder::bind(): a value id or a constant, so that a
/// bind's arguments read `{x, constant("int", "2")}`.
struct ArgSpec {
  ArgSpec(unsigned value) { arg.value = value; }
  ArgSpec(ir::Constant constant) {
    arg.kind = ir::Arg::Kind::Constant;
    arg.constant = std::move(constant);
  }
  ir::Arg arg;
};

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name, unsigned line = 10) {
    graph_.name = std::move(name);
    graph_.loc = at(line, 1);
  }

  /// g.input<T>(): returns the new value's id.
  unsigned input(std::string type = "std::string", ir::Transport transport = ir::Transport::Shm) {
    unsigned value = newValue(
        std::move(type), {ir::Producer::Kind::Input, static_cast<unsigned>(graph_.inputs.size())});
    graph_.values[value].transport = transport;
    graph_.inputs.push_back(value);
    return value;
  }

  /// g.actor<C>("name", constructorArgs...): returns the actor's index.
  unsigned actor(std::string name, unsigned line, std::string className = "::EchoActor",
                 std::vector<ir::Constant> constructorArgs = {}) {
    ir::Actor actor;
    actor.name = std::move(name);
    actor.className = std::move(className);
    actor.constructorArgs = std::move(constructorArgs);
    actor.loc = at(line);
    graph_.actors.push_back(std::move(actor));
    return static_cast<unsigned>(graph_.actors.size() - 1);
  }

  /// actor.bind<&C::method>(args...): returns the result value's id.
  unsigned bind(unsigned actor, std::string method, std::vector<ArgSpec> args, unsigned line,
                std::string resultType = "std::string") {
    unsigned task = newTask(actor, std::move(method), std::move(args), line);
    unsigned result = newValue(std::move(resultType), {ir::Producer::Kind::Task, task});
    graph_.tasks[task].results.push_back(result);
    return result;
  }

  /// auto [e0, e1, ...] = actor.bind<&C::method>(args...) for a method
  /// returning std::tuple<T0, T1, ...>: returns the element values' ids.
  std::vector<unsigned> bindTuple(unsigned actor, std::string method, std::vector<ArgSpec> args,
                                  unsigned line, std::vector<std::string> elementTypes) {
    unsigned task = newTask(actor, std::move(method), std::move(args), line);
    for (std::size_t k = 0; k < elementTypes.size(); ++k) {
      unsigned value = newValue(std::move(elementTypes[k]),
                                {ir::Producer::Kind::Task, task, static_cast<int>(k)});
      graph_.tasks[task].results.push_back(value);
    }
    return graph_.tasks[task].results;
  }

  /// One collective: rank r is a task on actors[r] reading inputs[r]
  /// (method: the kind's name, e.g. "allreduce"). Returns each rank's result.
  std::vector<unsigned> collective(ir::Collective::Kind kind, std::string reduceOp,
                                   std::vector<unsigned> actors, std::vector<unsigned> inputs,
                                   unsigned line, std::string type = "std::vector<float>") {
    static const char* const kMethods[] = {"allreduce", "allgather", "reducescatter"};
    ir::Collective collective;
    collective.kind = kind;
    collective.reduceOp = std::move(reduceOp);
    collective.loc = at(line);
    int id = static_cast<int>(graph_.collectives.size());
    std::vector<unsigned> results;
    for (std::size_t r = 0; r < actors.size(); ++r) {
      unsigned value = bind(actors[r], kMethods[static_cast<int>(kind)], {inputs[r]}, line, type);
      unsigned task = graph_.values[value].producer.index;
      graph_.tasks[task].collective = id;
      collective.tasks.push_back(task);
      results.push_back(value);
    }
    graph_.collectives.push_back(std::move(collective));
    return results;
  }

  /// Sends `value` over `transport` instead of shared memory.
  GraphBuilder& transport(unsigned value, ir::Transport transport) {
    graph_.values[value].transport = transport;
    return *this;
  }

  /// Sets the estimated cost of the task producing `value`.
  GraphBuilder& cost(unsigned value, double cost) {
    graph_.tasks[graph_.values[value].producer.index].cost = cost;
    return *this;
  }

  /// g.output(value).
  GraphBuilder& output(unsigned value) {
    graph_.outputs.push_back(value);
    return *this;
  }

  ir::Graph build() const { return graph_; }

private:
  unsigned newTask(unsigned actor, std::string method, std::vector<ArgSpec> args, unsigned line) {
    ir::Task task;
    task.actor = actor;
    task.method = std::move(method);
    for (ArgSpec& arg : args)
      task.args.push_back(std::move(arg.arg));
    task.loc = at(line);
    graph_.tasks.push_back(std::move(task));
    return static_cast<unsigned>(graph_.tasks.size() - 1);
  }

  unsigned newValue(std::string type, ir::Producer producer) {
    ir::Value value;
    value.type.spelling = std::move(type);
    value.producer = producer;
    graph_.values.push_back(std::move(value));
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

/// x -> a.split, a method returning std::tuple<std::string, int> that the
/// graph unpacks; element 0 goes to b.left, element 1 to c.right (with a
/// constant second argument); both are outputs.
inline ir::Graph tupleGraph() {
  GraphBuilder g("tuple", 50);
  unsigned x = g.input();
  unsigned a = g.actor("a", 51, "::Splitter");
  unsigned b = g.actor("b", 52);
  unsigned c = g.actor("c", 53, "::Scaler");
  std::vector<unsigned> parts = g.bindTuple(a, "split", {x}, 54, {"std::string", "int"});
  unsigned left = g.bind(b, "left", {parts[0]}, 55);
  unsigned right = g.bind(c, "right", {parts[1], constant("int", "3")}, 56, "int");
  g.output(left).output(right);
  return g.build();
}

/// Every IR feature at once: actor constructor arguments, constant bind
/// arguments, an unpacked tuple, NCCL values, an allreduce over two GPU
/// actors and an allgather over them, and task costs.
inline ir::Graph gpuGraph() {
  GraphBuilder g("gpu", 60);
  unsigned x = g.input("std::vector<float>");
  unsigned w0 =
      g.actor("w0", 61, "::Worker",
              {constant("int", "0"), constant("std::string", "std::string(\"model.bin\")")});
  unsigned w1 =
      g.actor("w1", 62, "::Worker",
              {constant("int", "1"), constant("std::string", "std::string(\"model.bin\")")});
  std::vector<unsigned> halves = g.bindTuple(w0, "split", {x, constant("double", "0.5")}, 63,
                                             {"std::vector<float>", "std::vector<float>"});
  g.transport(halves[1], ir::Transport::Nccl).cost(halves[0], 2.5);
  unsigned g0 = g.bind(w0, "grad", {halves[0]}, 64, "std::vector<float>");
  unsigned g1 = g.bind(w1, "grad", {halves[1]}, 65, "std::vector<float>");
  g.transport(g0, ir::Transport::Nccl).transport(g1, ir::Transport::Nccl);
  g.cost(g1, 12);
  std::vector<unsigned> sums =
      g.collective(ir::Collective::Kind::AllReduce, "sum", {w0, w1}, {g0, g1}, 66);
  std::vector<unsigned> all =
      g.collective(ir::Collective::Kind::AllGather, "", {w1, w0}, {sums[1], sums[0]}, 67);
  g.output(all[0]).output(all[1]);
  return g.build();
}

} // namespace cg::test
