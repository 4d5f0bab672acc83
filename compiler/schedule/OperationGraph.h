//===- OperationGraph.h - READ/COMPUTE/WRITE operations and their edges -*- C++ -*-===//
//
// The scheduler reasons about operations, not tasks: a task reads its
// arguments, computes, and writes its results, and only the reads and writes
// wait for other processes. Splitting tasks this way lets an actor receive a
// later task's argument before it sends an earlier task's result, which is
// what makes schedules such as 1F1B deadlock-free (see GlobalOrder.h).
//
// Operations of a task (in this order):
//   READ   its shared-memory arguments the actor does not hold yet (one op),
//   READ   each NCCL argument it does not hold yet (one op per channel),
//   COMPUTE,
//   WRITE  its shared-memory results other processes read (one op),
//   WRITE  each NCCL result (one op per channel).
// Edges (u -> v: v cannot start before u is done):
//   inside a task, every READ -> COMPUTE -> every WRITE;
//   program order, between consecutive COMPUTEs of one actor;
//   data, from the WRITE of a channel to every READ of it.
// Synchronous groups: operations that complete only together (each blocks
// until all have started): an NCCL channel's WRITE with all its READs; the
// COMPUTEs of all ranks of a collective.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <optional>
#include <vector>

namespace cg::schedule {

struct OpNode {
  Operation::Kind kind = Operation::Kind::Compute;
  unsigned task = 0;
  unsigned actor = 0;
  std::vector<unsigned> channels; // as in Operation
  int group = -1;                 // index into OperationGraph::groups
};

struct OpEdge {
  enum class Kind { InTask, ProgramOrder, Data, Sequence };
  unsigned from = 0;
  unsigned to = 0;
  Kind kind = Kind::InTask;
  unsigned channel = 0; // Data: the channel
};

struct OpGroup {
  SyncGroup::Kind kind = SyncGroup::Kind::Nccl;
  unsigned source = 0;           // the channel or the ir::Collective
  std::vector<unsigned> members; // op ids: as in SyncGroup::members
};

struct OperationGraph {
  /// Op ids follow the task priority given to buildOperationGraph(), and a
  /// task's operations in the order above: a lower id is preferred earlier.
  std::vector<OpNode> ops;
  std::vector<OpEdge> edges;
  std::vector<OpGroup> groups;
  /// Per actor, its operations in its preferred order (its tasks in program
  /// order, each task's operations in the order above).
  std::vector<std::vector<unsigned>> actorOps;
  /// When not empty, each op's preference instead of its id (lower first);
  /// actorOps is then sorted by it. CostOrder sets it from simulated times.
  std::vector<unsigned> rank;
  /// Edge ids by source and by target op (filled by index()).
  std::vector<unsigned> outBegin, outEdges, inBegin, inEdges;

  /// Rebuilds the adjacency lists after `edges` changed.
  void index();
  template <typename F> void forEachOut(unsigned op, F f) const {
    for (unsigned i = outBegin[op]; i < outBegin[op + 1]; ++i)
      f(edges[outEdges[i]]);
  }
  template <typename F> void forEachIn(unsigned op, F f) const {
    for (unsigned i = inBegin[op]; i < inBegin[op + 1]; ++i)
      f(edges[inEdges[i]]);
  }
};

/// One channel per value that crosses a process boundary, in value order,
/// into `channels`; returns the channel of each value that has one.
std::vector<std::optional<unsigned>> assignChannels(const ir::Graph& graph,
                                                    std::vector<Channel>& channels);

/// The order in which tasks are preferred: every task once, each after the
/// producers of its arguments (bind order is one; CostOrder.h finds others).
/// Each actor's program order is this order restricted to the actor.
using TaskPriority = std::vector<unsigned>;

/// 0, 1, ..., n-1: bind order.
TaskPriority bindOrder(const ir::Graph& graph);

/// An NCCL value read by a plain task on its own actor: the send would wait
/// for a receive its own actor reaches only after it. One diagnostic per
/// such pair, at the reading bind, naming both binds.
std::vector<ir::Diagnostic> findSelfSends(const ir::Graph& graph);

/// The operation graph of `graph` with the given channels, tasks preferred
/// in `priority` order.
OperationGraph buildOperationGraph(const ir::Graph& graph, const std::vector<Channel>& channels,
                                   const std::vector<std::optional<unsigned>>& channelOf,
                                   const TaskPriority& priority);

} // namespace cg::schedule
