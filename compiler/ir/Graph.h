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
#include <string_view>
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

/// A compile-time constant embedded in generated code: a bind argument or an
/// actor constructor argument.
struct Constant {
  Type type;
  std::string expression; // a C++ expression of `type`, valid in generated code,
                          // e.g. `42`, `2.5`, `std::string("model.bin")`

  friend bool operator==(const Constant&, const Constant&) = default;
};

/// One actor instance: one process at run time.
struct Actor {
  std::string name;                      // unique within the graph, e.g. "a"
  std::string className;                 // fully qualified, e.g. "EchoActor"
  std::vector<Constant> constructorArgs; // from g.actor<C>(name, args...)
  SourceLoc loc;                         // the g.actor<C>(...) call
  unsigned host = 0;                     // logical host index (actor.host(i)); 0: the driver's
  unsigned gpus = 0;                     // GPUs of its own, from .gpus(n)
  bool needsArguments = false;           // no arguments given, and the class cannot be
                                         // built without: a graph over an actor set
                                         // takes the set's; any other graph is wrong

  friend bool operator==(const Actor&, const Actor&) = default;
};

/// Where a value comes from.
struct Producer {
  enum class Kind { Input, Task };
  Kind kind = Kind::Input;
  unsigned index = 0; // input position or task id
  int element = -1;   // for a task returning std::tuple unpacked by the
                      // graph: which element this value is; else -1

  friend bool operator==(const Producer&, const Producer&) = default;
};

/// How a value travels from its producer to its consumers.
enum class Transport {
  Shm,     // shared-memory channel (host memory); buffered, K slots
  Nccl,    // NCCL point-to-point between GPUs: blocking, a synchronous group
  Cpu,     // a cg::Tensor over shm, delivered in host memory (a CUDA result is
           // copied to the host before it is written)
  Cuda,    // a cg::Tensor over shm, copied by each reader to its CUDA device
  CudaIpc, // a cg::Tensor in a device buffer per slot, shared over CUDA IPC
           // between actors of one host; buffered like Shm
};

struct Value {
  Type type;
  Producer producer;
  Transport transport = Transport::Shm;
  unsigned cudaDevice = 0; // Transport::Cuda: the readers' device ordinal

  friend bool operator==(const Value&, const Value&) = default;
};

/// An argument of a task: a graph value, or a constant.
struct Arg {
  enum class Kind { Value, Constant };
  Kind kind = Kind::Value;
  unsigned value = 0; // Kind::Value: the value id
  Constant constant;  // Kind::Constant

  friend bool operator==(const Arg&, const Arg&) = default;
};

/// One bound method call, `actor.bind<&Class::method>(args...)`, or one rank
/// of a collective (then `collective` >= 0 and `method` names the operation).
struct Task {
  unsigned actor = 0;            // index into Graph::actors
  std::string method;            // unqualified method name, e.g. "echo"
  std::vector<Arg> args;         // in parameter order
  std::vector<unsigned> results; // value ids: one, or one per tuple element
                                 // when the graph unpacks a std::tuple result
  int collective = -1;           // index into Graph::collectives, or -1
  double cost = 0;               // estimated run time (any unit; 0: unknown),
                                 // for cost-model ordering
  SourceLoc loc;                 // the bind call

  friend bool operator==(const Task&, const Task&) = default;
};

/// A collective (all ranks block together): one task per participating actor.
struct Collective {
  enum class Kind { AllReduce, AllGather, ReduceScatter };
  Kind kind = Kind::AllReduce;
  std::string reduceOp;        // "sum", "max", ...; empty for AllGather
  std::vector<unsigned> tasks; // one per rank, in rank order
  SourceLoc loc;

  friend bool operator==(const Collective&, const Collective&) = default;
};

struct Graph {
  std::string name;             // the CG_GRAPH function's name
  SourceLoc loc;                // the CG_GRAPH function
  std::string actorSet;         // CG_GRAPH_OVER(set): the set's name (ActorSet.h);
                                // empty: actors of its own
  std::vector<unsigned> inputs; // value ids, in positional order
  std::vector<Actor> actors;
  std::vector<Task> tasks; // in bind order
  std::vector<Value> values;
  std::vector<Collective> collectives;
  std::vector<unsigned> outputs; // value ids, in g.output(...) order

  friend bool operator==(const Graph&, const Graph&) = default;
};

/// Names used in JSON, schedules and messages: "shm", "nccl", "cpu", "cuda"; "allreduce",
/// "allgather", "reducescatter".
std::string_view toString(Transport transport);
std::string_view toString(Collective::Kind kind);

} // namespace cg::ir
