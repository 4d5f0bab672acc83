//===- ActorSetSchedule.h - Graphs over one actor set, together --*- C++ -*-===//
//
// Each graph over an actor set is scheduled as a graph of its own; at run
// time every actor of the set runs the executions the driver submits in the
// order it submitted them, each by the program of its graph. That cannot
// deadlock when every graph's schedule is deadlock-free: an execution waits
// only for operations and channel slots of its own graph, and everything
// submitted before it finishes first. The check here is the simulator's, as
// for one graph: for each ordered pair of the set's graphs it runs the two
// in turn, the actors' programs laid end to end in submission order, with K
// executions of each in flight; and renderActorSetScheduleText() writes
// `<set>.schedule.txt`, each actor's program in each graph that uses it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ActorSet.h"
#include "ir/Diagnostic.h"
#include "ir/Graph.h"
#include "schedule/Schedule.h"
#include "schedule/Simulator.h"

#include <functional>
#include <string>
#include <vector>

namespace cg::schedule {

/// A graph over the set with the schedule built for it.
struct SetGraph {
  const ir::Graph* graph = nullptr;
  const Schedule* schedule = nullptr;
};

/// The graphs of `graphs` over `set`, each with its schedule (`schedules`
/// has one per graph, in the same order).
std::vector<SetGraph> graphsOver(const ir::ActorSet& set, const std::vector<ir::Graph>& graphs,
                                 const std::vector<Schedule>& schedules);

/// Which of the graphs `first`, `second` (indices into the set's graphs,
/// executed in this turn) actor `actor` of the set runs, in the order it
/// runs them. The runtime's order is submissionOrder().
using TurnOrder =
    std::function<std::vector<unsigned>(unsigned actor, unsigned first, unsigned second)>;

/// The order the runtime keeps: `first` then `second`, each only if it uses
/// the actor.
TurnOrder submissionOrder(const ir::ActorSet& set, const std::vector<SetGraph>& graphs);

/// Runs graphs `first` and `second` in turn, `executions` times, each actor
/// running its part of both as `order` says, with `maxInFlight` executions
/// of the turn in flight and channels of as many slots.
SimulationResult simulateInTurn(const ir::ActorSet& set, const std::vector<SetGraph>& graphs,
                                unsigned first, unsigned second, const TurnOrder& order,
                                unsigned maxInFlight, unsigned executions);

/// Every ordered pair of `graphs` (all over `set`, each with its schedule)
/// run in turn; a pair that blocks is an error at the second graph naming
/// both and the actors that wait, with a note at the first.
std::vector<ir::Diagnostic> checkGraphsInTurn(const ir::ActorSet& set,
                                              const std::vector<SetGraph>& graphs,
                                              unsigned maxInFlight, const TurnOrder& order);

/// checkGraphsInTurn() for each set of `sets`, over its graphs among
/// `graphs` (`schedules`: one per graph, in the same order), in submission
/// order.
std::vector<ir::Diagnostic> checkActorSets(const std::vector<ir::ActorSet>& sets,
                                           const std::vector<ir::Graph>& graphs,
                                           const std::vector<Schedule>& schedules,
                                           unsigned maxInFlight);

/// How many executions of each pair checkGraphsInTurn() runs.
unsigned turnsChecked(unsigned maxInFlight);

/// `<set>.schedule.txt`: for each actor of the set, its numbered operations
/// in each graph that uses it (as in that graph's `<graph>.schedule.txt`,
/// whose channels they name), and what checkGraphsInTurn() ran.
/// `graphs` and `schedules` as for checkActorSets().
std::string renderActorSetScheduleText(const ir::ActorSet& set,
                                       const std::vector<ir::Graph>& graphs,
                                       const std::vector<Schedule>& schedules, unsigned maxInFlight,
                                       bool tcpEverywhere = false);

} // namespace cg::schedule
