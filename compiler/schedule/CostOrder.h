//===- CostOrder.h - Task orders chosen by simulated cost -------*- C++ -*-===//
//
// `--schedule=cost`: bind order is what the user wrote, not necessarily what
// runs best. A pipeline-parallel training step written as "all forwards,
// then all backwards" keeps every microbatch's activations alive on every
// stage until its backward (GPipe); interleaving forwards and backwards
// (1F1B) finishes as early and keeps at most as many microbatches in flight
// as there are stages. This file proposes such orders; Schedule.cpp builds
// each into a full schedule, simulates it with the tasks' costs (see
// Simulator.h), and keeps the best: shortest makespan, then fewest round
// trips in flight, then the earlier candidate (bind order is the first).
//
// A round trip is what an activation is, seen from the graph: task t on actor
// a whose result leaves a and comes back to a later task u on a through other
// actors (t "opens" it, u "closes" it: the first task of a reached on such a
// path). While it is open, a holds whatever t left for u.
//
// Candidates are list schedules: simulated time advances task by task, and
// whenever an actor is idle it starts, among its tasks whose arguments are
// computed, the earliest bound, except that it starts no task that opens a
// round trip while `cap` of its round trips are open. Each cap from 1 up to
// the number of actors (at most 16) gives a candidate, and so does no cap.
// Collectives stay barriers at their bound place on each of their actors;
// communication takes no time (the full simulation afterwards accounts for
// rendezvous). Unknown costs count 1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/OperationGraph.h"

#include <cstddef>
#include <vector>

namespace cg::schedule {

class RoundTrips {
public:
  /// Finds every task's round trips. Gives up (no round trips at all) when
  /// the search would visit more than `budget` tasks in all.
  explicit RoundTrips(const ir::Graph& graph, std::size_t budget = std::size_t{1} << 24);

  bool opens(unsigned task) const { return opens_[task]; }
  /// The tasks whose round trips `task` closes.
  const std::vector<unsigned>& closes(unsigned task) const { return closes_[task]; }

  /// The most round trips open at once on one actor, each actor running its
  /// tasks in the order given (perActor[a]: a's task ids).
  unsigned peak(const std::vector<std::vector<unsigned>>& perActor) const;

private:
  std::vector<bool> opens_;
  std::vector<std::vector<unsigned>> closes_;
};

/// A task order and the times the list schedule gave each task.
struct CostCandidate {
  TaskPriority priority;             // by start time, ties by bind order
  std::vector<double> start, finish; // per task
};

/// The candidates described above (bind order not included), distinct, in
/// the order: earliest bound first with caps 1, 2, ..., no cap; then
/// deepest first likewise.
std::vector<CostCandidate> costCandidates(const ir::Graph& graph, const RoundTrips& roundTrips);

/// Ranks `g`'s operations by the candidate's times (OperationGraph::rank),
/// so that GlobalOrder keeps the simulated run's order: a READ or a COMPUTE
/// at its task's start; a shared-memory WRITE at its task's finish, before
/// what starts then; an NCCL WRITE when the last of its readers starts,
/// since the send completes only then and the sender should compute
/// meanwhile. Sorts each actor's operations by rank.
void rankByTimes(const CostCandidate& candidate, OperationGraph& g);

/// Each actor's task ids in the order `priority` gives them.
std::vector<std::vector<unsigned>> tasksPerActor(const ir::Graph& graph,
                                                 const TaskPriority& priority);

} // namespace cg::schedule
