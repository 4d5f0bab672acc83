//===- Graph.h - The graph IR: actors, tasks, values -------------*- C++ -*-===//
//
// The compiler's one representation of a compiled graph. The frontend builds
// it from the constant-evaluated CG_GRAPH function; the scheduler and codegen
// read it; `<graph>.ir.json` is its JSON form (see GraphJson.h).
//
// Every value has exactly one producer (a graph input or a task) and is
// consumed by tasks and/or by the graph's outputs. Ids are dense indices into
// the owning vectors, in the order the user's graph function created them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cg::ir {

/// A position in the user's source, for diagnostics and generated comments.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;

  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

/// A C++ type that crosses a process boundary, spelled fully qualified so
/// generated code can name it from any namespace (e.g. "std::string").
struct Type {
  std::string spelling;

  friend bool operator==(const Type&, const Type&) = default;
};

/// One actor instance: one process at run time.
struct Actor {
  std::string name;        // unique within the graph, e.g. "a"
  std::string className;   // fully qualified, e.g. "::EchoActor"
  SourceLoc loc;           // the g.actor<C>(...) call

  friend bool operator==(const Actor&, const Actor&) = default;
};

/// Where a value comes from.
struct Producer {
  enum class Kind { Input, Task };
  Kind kind = Kind::Input;
  unsigned index = 0;      // input position or task id

  friend bool operator==(const Producer&, const Producer&) = default;
};

struct Value {
  Type type;
  Producer producer;

  friend bool operator==(const Value&, const Value&) = default;
};

/// One bound method call: `actor.bind<&Class::method>(args...)`.
struct Task {
  unsigned actor = 0;            // index into Graph::actors
  std::string method;            // unqualified method name, e.g. "echo"
  std::vector<unsigned> args;    // value ids, in parameter order
  unsigned result = 0;           // value id this task produces
  SourceLoc loc;                 // the bind call

  friend bool operator==(const Task&, const Task&) = default;
};

struct Graph {
  std::string name;                  // the CG_GRAPH function's name
  SourceLoc loc;                     // the CG_GRAPH function
  std::vector<unsigned> inputs;      // value ids, in positional order
  std::vector<Actor> actors;
  std::vector<Task> tasks;           // in bind order
  std::vector<Value> values;
  std::vector<unsigned> outputs;     // value ids, in g.output(...) order

  friend bool operator==(const Graph&, const Graph&) = default;
};

} // namespace cg::ir
