//===- Simulator.h - Run a schedule with the runtime's semantics -*- C++ -*-===//
//
// The scheduler's proof (GlobalOrder.h) is an argument; the simulator is the
// check. It executes the emitted operation lists as the processes would:
//   - every actor runs its list once per execution, for `executions`
//     executions; the driver writes each execution's inputs, in input order,
//     once fewer than `maxInFlight` executions are in flight, and reads the
//     outputs of the oldest one, in output order;
//   - a shared-memory channel is a ring of `maxInFlight` slots: a WRITE waits
//     while the ring is full (some reader has not read the value written
//     `maxInFlight` executions before), a READ waits until its value is
//     written; an operation listing several channels handles them in order;
//   - an NCCL READ or WRITE is a rendezvous: it completes when the WRITE and
//     every READ of its channel have started;
//   - the ranks of a collective are a barrier;
//   - a COMPUTE takes its task's cost (unknown: 1); communication takes no
//     time.
// With times it also measures the makespan, which CostOrder compares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <string>
#include <vector>

namespace cg::schedule {

struct SimulationOptions {
  unsigned executions = 1;
  unsigned maxInFlight = 1;
  /// Time every execution (makespan of the whole run), not only execution
  /// 0: keeps the times of the last K writes and reads of every channel.
  bool timeEveryExecution = false;
};

struct SimulationResult {
  bool completed = false;
  /// When not completed: each process that waits, and for what, e.g.
  /// "actor 'b' (execution 0) waits at operation 3, READ c1".
  std::vector<std::string> blocked;
  /// When everything is done (completed runs with timeEveryExecution).
  double makespan = 0;
  /// When execution 0 is done: its last operation, and the driver's reads of
  /// its outputs. Later executions never delay it (every process runs them
  /// after it), so it is the makespan of one execution alone.
  double firstExecution = 0;
  /// Per actor, per operation: when it started and finished in execution 0.
  /// An operation starts when what it waits for is there (its data, all
  /// members of its group) and its actor is free.
  std::vector<std::vector<double>> start, finish;
};

/// The cost a COMPUTE of `task` takes: its cost, 1 when unknown (0).
double costOf(const ir::Task& task);

SimulationResult simulate(const ir::Graph& graph, const Schedule& schedule,
                          const SimulationOptions& options);

} // namespace cg::schedule
