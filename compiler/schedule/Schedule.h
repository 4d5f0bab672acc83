//===- Schedule.h - Channels and per-actor operation lists -------*- C++ -*-===//
//
// The scheduler turns a validated graph into what the runtime executes:
// the channels (one per value that crosses a process boundary) and, for each
// actor, the fixed list of READ / COMPUTE / WRITE operations it runs once per
// execution. Codegen prints these lists as straight-line code.
//
// How the lists are found (the passes live in their own files):
//   OperationGraph  READ/COMPUTE/WRITE per task, their edges and the
//                   synchronous groups of blocking communication;
//   GlobalOrder     one order of all operations, each group at one step,
//                   projected onto each actor: deadlock-free by construction,
//                   or a diagnostic naming the cycle that makes it impossible;
//   Overlap         (opt-in) NCCL receives hoisted ahead of unrelated work;
//   CostOrder       (opt-in) per-actor task orders chosen by simulated
//                   makespan instead of bind order;
//   Simulator       runs every emitted schedule with the real semantics for
//                   K executions in flight; cgc emits nothing it cannot run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <cg/detail/launch_geometry.hpp>

#include <string>
#include <variant>
#include <vector>

namespace cg::schedule {

/// Writer or reader of a channel that is not an actor: the driver process.
inline constexpr int kDriver = -1;

/// One single-writer, multi-reader channel carrying one value per execution.
/// Its transport is its value's (ir::Value::transport).
struct Channel {
  unsigned value = 0;       // the ir::Value it carries
  int writer = kDriver;     // actor index, or kDriver for a graph input
  std::vector<int> readers; // actor indices and/or kDriver, ascending;
                            // a reader's position here is its reader slot

  friend bool operator==(const Channel&, const Channel&) = default;
};

/// One step of an actor's loop. Shared-memory channels of one task are read
/// (written) by one READ (WRITE) listing them; every NCCL channel has a READ
/// or WRITE of its own, since each is a rendezvous with other actors.
struct Operation {
  enum class Kind { Read, Compute, Write };
  Kind kind = Kind::Compute;
  unsigned task = 0;              // the task this operation belongs to
  std::vector<unsigned> channels; // Read: channels read; Write: channels
                                  // written; Compute: empty
  int group = -1;                 // its synchronous group (Schedule::groups):
                                  // an NCCL READ/WRITE, a collective's COMPUTE
  bool moved = false;             // hoisted ahead of computes by
                                  // --overlap-gpu-communication

  friend bool operator==(const Operation&, const Operation&) = default;
};

/// Where an operation is: Schedule::actors[actor].operations[index].
struct OpRef {
  unsigned actor = 0;
  unsigned index = 0;

  friend bool operator==(const OpRef&, const OpRef&) = default;
};

/// Blocking operations that complete only together: an NCCL send with all
/// its receives, or all ranks of a collective.
struct SyncGroup {
  enum class Kind { Nccl, Collective };
  Kind kind = Kind::Nccl;
  unsigned source = 0;        // Nccl: the channel; Collective: the
                              // ir::Collective
  std::vector<OpRef> members; // Nccl: the WRITE, then the READs by actor;
                              // Collective: the ranks' COMPUTEs, by rank

  friend bool operator==(const SyncGroup&, const SyncGroup&) = default;
};

struct ActorSchedule {
  unsigned actor = 0;
  std::vector<Operation> operations; // run in this order, once per execution

  friend bool operator==(const ActorSchedule&, const ActorSchedule&) = default;
};

struct ScheduleOptions {
  /// How each actor's tasks are ordered. Bind: in bind order, the order the
  /// graph function created them. Cost: tasks of one actor with no data path
  /// between them may be reordered to shorten the simulated makespan and the
  /// work each actor keeps in flight (see CostOrder.h); collectives stay where
  /// they were bound. Only for actors whose such methods commute.
  enum class Order { Bind, Cost };
  Order order = Order::Bind;
  /// Hoist each NCCL receive ahead of earlier computes it does not depend on
  /// (see Overlap.h).
  bool overlapGpuCommunication = false;
  /// Executions in flight, and slots per shared-memory channel, that the
  /// simulator checks the schedule with: the runtime's max_in_flight, whose
  /// default is the launch geometry's.
  unsigned maxInFlight = cg::detail::kDefaultLaunchGeometry.max_in_flight;
  friend bool operator==(const ScheduleOptions&, const ScheduleOptions&) = default;
};

/// What the simulator measured on the emitted schedule.
struct SimulationSummary {
  unsigned executions = 0;   // run to completion with maxInFlight in flight
  double makespan = 0;       // one execution alone, in the graph's cost unit
                             // (a task of unknown cost counts 1)
  double busiest = 0;        // the largest total compute cost of one actor
  unsigned peakInFlight = 0; // the most round trips one actor has open (see
                             // CostOrder.h); the activations a pipeline
                             // stage keeps
  /// Per actor, per operation: when it starts and finishes in that one
  /// execution.
  std::vector<std::vector<double>> start, finish;

  friend bool operator==(const SimulationSummary&, const SimulationSummary&) = default;
};

struct Schedule {
  std::vector<Channel> channels;
  std::vector<ActorSchedule> actors;    // one per ir::Graph::actors entry
  std::vector<unsigned> inputChannels;  // per graph input position
  std::vector<unsigned> outputChannels; // per graph output position
  std::vector<SyncGroup> groups;        // NCCL channels by channel, then
                                        // collectives by id
  /// A global order of one execution: step s holds the operations that run
  /// at step s, several only for a synchronous group. Projected onto an
  /// actor it gives that actor's operation list.
  std::vector<std::vector<OpRef>> steps;
  ScheduleOptions options; // what it was built with
  SimulationSummary simulation;

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

/// How channel `channel` of `schedule` travels at run time: "nccl" (or a
/// device transport) as the graph says; "tcp" when its writer and a reader
/// are placed on different hosts (the driver is on host 0) or `tcpEverywhere`
/// (`cgc --transport=tcp`: every channel between two processes, on one host
/// too); else "shm". A choice of links, not of order: no pass reads it.
std::string_view channelTransport(const ir::Graph& graph, const Channel& channel,
                                  bool tcpEverywhere = false);

/// "READ", "COMPUTE", "WRITE".
std::string_view kindName(Operation::Kind kind);

/// The global step (Schedule::steps) of every operation: [actor][index].
std::vector<std::vector<unsigned>> operationSteps(const Schedule& schedule);

/// Builds the schedule of a graph that passed ir::validate(). Returns the
/// schedule, or the diagnostics explaining why none exists (an actor without
/// a task; NCCL between two tasks of one actor; blocking operations waiting
/// for each other in a cycle, each named by its bind). Deterministic: the
/// same graph and options give the same schedule. Throws cg::InternalError
/// ("internal compiler error: ...") if the schedule it built fails the
/// simulator.
std::variant<Schedule, std::vector<ir::Diagnostic>>
buildSchedule(const ir::Graph& graph, const ScheduleOptions& options = {});

/// The human-readable `<graph>.schedule.txt`: per actor, numbered operations
/// with the source line of their task, groups and moved operations marked.
/// Deterministic.
/// `tcpEverywhere`: see channelTransport(). (ScheduleText.cpp)
std::string renderScheduleText(const ir::Graph& graph, const Schedule& schedule,
                               bool tcpEverywhere = false);

} // namespace cg::schedule
