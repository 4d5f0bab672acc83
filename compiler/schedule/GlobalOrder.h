//===- GlobalOrder.h - One order of all operations, or the cycle -*- C++ -*-===//
//
// Deadlock freedom by construction: if every actor runs its operations in the
// order they have in one global topological order of the operation graph in
// which each synchronous group occupies one step, no actor can wait forever.
// (Induction on the steps: when the operations before step s are done, every
// member of step s is at the head of its actor's list, its predecessors are
// done, and the other members of its group are at their heads too.) Such an
// order exists exactly when the graph with each group merged into one node
// has no cycle; when it has one, the cycle is the proof that no schedule can
// exist, and the diagnostic names its operations by their binds.
//
// The priority rule (which ready step comes first) decides which of the many
// valid orders is emitted. It is:
//   1. Keep each actor in its own preferred order (program order, each task
//      reading, computing, writing): a step is preferred when each of its
//      operations is the next one its actor has not run yet. Among preferred
//      steps, the one holding the lowest operation id (the earliest-bound
//      task; with --schedule=cost, the earliest in the simulated run, see
//      OperationGraph::rank) comes first.
//   2. When no step is preferred yet some are ready, every actor's next
//      operation waits for a group whose other members are due later on
//      their own actors. Then the ready step with the lowest operation id
//      (or rank) runs ahead of its actors' orders. In Ray's 1F1B example this is what
//      puts the second microbatch's receive on the second worker before its
//      send of the first microbatch's gradient: the first worker sends both
//      microbatches before it receives anything.
// With shared memory only, rule 1 always applies and every actor runs its
// tasks in bind order, each READ just before its COMPUTE.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"
#include "schedule/OperationGraph.h"

#include <vector>

namespace cg::schedule {

struct GlobalOrder {
  /// Op ids per step, in order; a step is one op or one synchronous group.
  std::vector<std::vector<unsigned>> steps;
  /// When no order exists: the edges (ids into OperationGraph::edges) of one
  /// cycle, each edge's target in the same step (group) as the next edge's
  /// source. Empty when every operation was placed.
  std::vector<unsigned> cycle;

  bool complete() const { return cycle.empty(); }
};

/// Orders all operations of `g` by the rule above.
GlobalOrder orderOperations(const OperationGraph& g);

/// Each actor's operations in the order of `order`'s steps.
std::vector<std::vector<unsigned>> projectOntoActors(const OperationGraph& g,
                                                     const GlobalOrder& order);

/// The diagnostic for a cycle found by orderOperations(), in source terms:
/// an error at the first bind in the cycle, then one note per link (which
/// task waits for which, and why), each at its bind.
ir::Diagnostic describeCycle(const ir::Graph& graph, const std::vector<Channel>& channels,
                             const OperationGraph& g, const std::vector<unsigned>& cycle);

} // namespace cg::schedule
