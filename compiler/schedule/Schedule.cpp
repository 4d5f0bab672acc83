//===- Schedule.cpp - Channels and per-actor operation lists --------------===//
//
// Each actor is one process that runs a fixed, straight-line list of
// operations once per execution, so everything about communication is decided
// here at compile time: which values need a channel, who writes and who reads
// each one (and so each reader's slot), and in what order every actor reads,
// computes and writes. Codegen only prints what this file decides.
//
// This file strings the passes together (see Schedule.h for the list);
// ScheduleText.cpp renders `<graph>.schedule.txt`. With --schedule=cost it
// builds one full schedule per candidate task order and keeps the best by
// simulation.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"
#include "support/InternalError.h"

#include "ir/Validate.h"
#include "schedule/CostOrder.h"
#include "schedule/GlobalOrder.h"
#include "schedule/OperationGraph.h"
#include "schedule/Overlap.h"
#include "schedule/Simulator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cg::schedule {
namespace {

using ir::Graph;
using ir::Producer;

/// What every candidate shares: the channels and the driver's ends.
struct Channels {
  std::vector<Channel> channels;
  std::vector<std::optional<unsigned>> channelOf;
  std::vector<unsigned> inputChannels, outputChannels;
};

/// The full schedule for one task priority: operation graph, global order
/// (or the cycle that prevents one), projection, overlap.
std::variant<Schedule, std::vector<ir::Diagnostic>>
scheduleFor(const Graph& graph, const Channels& ch, const TaskPriority& priority,
            const ScheduleOptions& options, const CostCandidate* times = nullptr) {
  OperationGraph g = buildOperationGraph(graph, ch.channels, ch.channelOf, priority);
  if (times)
    rankByTimes(*times, g);
  GlobalOrder order = orderOperations(g);
  if (!order.complete())
    return std::vector<ir::Diagnostic>{describeCycle(graph, ch.channels, g, order.cycle)};
  std::vector<std::vector<unsigned>> perActor = projectOntoActors(g, order);

  std::vector<bool> moved(g.ops.size(), false);
  if (options.overlapGpuCommunication) {
    std::vector<bool> cudaIpc;
    for (const Channel& channel : ch.channels)
      cudaIpc.push_back(graph.values[channel.value].transport == ir::Transport::CudaIpc);
    moved = hoistReceives(g, perActor, cudaIpc);
    if (std::find(moved.begin(), moved.end(), true) != moved.end()) {
      // The global order of the lists as they are now: each actor's list as
      // a chain, ordered again. It exists by Overlap.h's rule; not finding
      // it would be a bug there.
      g.actorOps = perActor;
      for (const std::vector<unsigned>& ops : perActor)
        for (std::size_t i = 1; i < ops.size(); ++i)
          g.edges.push_back({ops[i - 1], ops[i], OpEdge::Kind::Sequence, 0});
      g.index();
      order = orderOperations(g);
      if (!order.complete())
        internalError(fmt::format("hoisting receives in graph '{}' made its schedule "
                                  "cyclic",
                                  graph.name));
    }
  }

  Schedule schedule;
  schedule.channels = ch.channels;
  schedule.inputChannels = ch.inputChannels;
  schedule.outputChannels = ch.outputChannels;
  schedule.options = options;
  std::vector<OpRef> where(g.ops.size());
  for (unsigned a = 0; a < graph.actors.size(); ++a) {
    ActorSchedule actor{a, {}};
    for (unsigned op : perActor[a]) {
      OpNode& node = g.ops[op]; // g is not needed after this
      where[op] = {a, static_cast<unsigned>(actor.operations.size())};
      actor.operations.push_back(
          {node.kind, node.task, std::move(node.channels), node.group, moved[op]});
    }
    schedule.actors.push_back(std::move(actor));
  }
  for (const OpGroup& group : g.groups) {
    SyncGroup out{group.kind, group.source, {}};
    for (unsigned op : group.members)
      out.members.push_back(where[op]);
    schedule.groups.push_back(std::move(out));
  }
  for (const std::vector<unsigned>& step : order.steps) {
    std::vector<OpRef> refs;
    for (unsigned op : step)
      refs.push_back(where[op]);
    schedule.steps.push_back(std::move(refs));
  }
  return schedule;
}

/// Runs `run` on the schedule; a deadlock is a bug in cgc.
SimulationResult check(const Graph& graph, const Schedule& schedule, SimulationOptions run) {
  SimulationResult result = simulate(graph, schedule, run);
  if (!result.completed)
    internalError(fmt::format("the schedule of graph '{}' deadlocks in simulation "
                              "({} executions, {} in flight): {}",
                              graph.name, run.executions, run.maxInFlight,
                              fmt::join(result.blocked, "; ")));
  return result;
}

/// The summary of a simulated run: one execution's makespan and the times
/// of its operations, the busiest actor, the round trips in flight.
void measure(const Graph& graph, Schedule& schedule, SimulationResult run,
             const RoundTrips* roundTrips) {
  schedule.simulation.makespan = run.firstExecution;
  schedule.simulation.start = std::move(run.start);
  schedule.simulation.finish = std::move(run.finish);
  schedule.simulation.busiest = 0;
  for (const ActorSchedule& actor : schedule.actors) {
    double busy = 0;
    for (const Operation& op : actor.operations)
      if (op.kind == Operation::Kind::Compute)
        busy += costOf(graph.tasks[op.task]);
    schedule.simulation.busiest = std::max(schedule.simulation.busiest, busy);
  }
  if (roundTrips) {
    std::vector<std::vector<unsigned>> perActor(schedule.actors.size());
    for (const ActorSchedule& actor : schedule.actors)
      for (const Operation& op : actor.operations)
        if (op.kind == Operation::Kind::Compute)
          perActor[actor.actor].push_back(op.task);
    schedule.simulation.peakInFlight = roundTrips->peak(perActor);
  }
}

/// Better: shorter makespan, then fewer round trips in flight (a relative
/// tolerance keeps float noise from deciding).
bool better(const SimulationSummary& a, const SimulationSummary& b) {
  double tolerance = 1e-9 * std::max(1.0, std::max(a.makespan, b.makespan));
  if (a.makespan < b.makespan - tolerance)
    return true;
  if (a.makespan > b.makespan + tolerance)
    return false;
  return a.peakInFlight < b.peakInFlight;
}

} // namespace

std::string_view channelTransport(const Graph& graph, const Channel& channel, bool tcpEverywhere) {
  if (graph.values[channel.value].transport != ir::Transport::Shm)
    return ir::toString(graph.values[channel.value].transport);
  if (tcpEverywhere)
    return "tcp";
  auto hostOf = [&](int endpoint) {
    return endpoint == kDriver ? 0u : graph.actors[static_cast<unsigned>(endpoint)].host;
  };
  for (int reader : channel.readers)
    if (hostOf(reader) != hostOf(channel.writer))
      return "tcp";
  return "shm";
}

std::string_view kindName(Operation::Kind kind) {
  switch (kind) {
  case Operation::Kind::Read:
    return "READ";
  case Operation::Kind::Compute:
    return "COMPUTE";
  case Operation::Kind::Write:
    return "WRITE";
  }
  return "?";
}

std::vector<std::vector<unsigned>> operationSteps(const Schedule& schedule) {
  std::vector<std::vector<unsigned>> stepOf(schedule.actors.size());
  for (const ActorSchedule& actor : schedule.actors)
    stepOf[actor.actor].assign(actor.operations.size(), 0);
  for (unsigned s = 0; s < schedule.steps.size(); ++s)
    for (const OpRef& ref : schedule.steps[s])
      stepOf[ref.actor][ref.index] = s;
  return stepOf;
}

std::variant<Schedule, std::vector<ir::Diagnostic>> buildSchedule(const Graph& graph,
                                                                  const ScheduleOptions& options) {
  if (std::optional<std::string> problem = ir::findInconsistency(graph))
    internalError(*problem);

  // An actor without a task would be a process that starts, waits for
  // nothing and does nothing; the user most likely forgot a bind.
  std::vector<bool> hasTask(graph.actors.size(), false);
  for (const ir::Task& task : graph.tasks)
    hasTask[task.actor] = true;
  std::vector<ir::Diagnostic> diagnostics;
  for (unsigned a = 0; a < graph.actors.size(); ++a)
    if (!hasTask[a])
      diagnostics.push_back(
          {graph.actors[a].loc,
           fmt::format("actor '{}' has no task; remove it or bind a method", graph.actors[a].name),
           {}});
  if (!diagnostics.empty())
    return diagnostics;
  diagnostics = findSelfSends(graph);
  if (!diagnostics.empty())
    return diagnostics;

  Channels ch;
  ch.channelOf = assignChannels(graph, ch.channels);
  for (unsigned i = 0; i < graph.inputs.size(); ++i) {
    if (!ch.channelOf[graph.inputs[i]])
      internalError(fmt::format("graph input #{} has no channel; the graph was "
                                "not validated",
                                i));
    ch.inputChannels.push_back(*ch.channelOf[graph.inputs[i]]);
  }
  for (unsigned k = 0; k < graph.outputs.size(); ++k) {
    if (!ch.channelOf[graph.outputs[k]])
      internalError(fmt::format("graph output #{} has no channel; the graph was "
                                "not validated",
                                k));
    ch.outputChannels.push_back(*ch.channelOf[graph.outputs[k]]);
  }

  auto first = scheduleFor(graph, ch, bindOrder(graph), options);
  if (auto* problems = std::get_if<std::vector<ir::Diagnostic>>(&first))
    return std::move(*problems);
  Schedule best = std::get<Schedule>(std::move(first));
  std::optional<RoundTrips> roundTrips;
  if (options.order == ScheduleOptions::Order::Cost)
    roundTrips.emplace(graph);
  if (options.order == ScheduleOptions::Order::Cost) {
    measure(graph, best, check(graph, best, {1, 1}), &*roundTrips);
    for (const CostCandidate& times : costCandidates(graph, *roundTrips)) {
      auto candidate = scheduleFor(graph, ch, times.priority, options, &times);
      // Bind order has an order, so every other task order consistent with
      // the data has one too unless it reorders collectives, which the
      // candidates never do; skip rather than fail if one still has none.
      auto* schedule = std::get_if<Schedule>(&candidate);
      if (!schedule)
        continue;
      measure(graph, *schedule, check(graph, *schedule, {1, 1}), &*roundTrips);
      if (better(schedule->simulation, best.simulation))
        best = std::move(*schedule);
    }
  }

  // The check: K executions in flight with K-slot channels, and one slot
  // with one execution in flight, each long enough to reuse every slot. The
  // first run's execution 0 runs as it would alone: it gives the summary.
  const unsigned k = std::max(1u, options.maxInFlight);
  measure(graph, best, check(graph, best, {k + 1, k}), roundTrips ? &*roundTrips : nullptr);
  check(graph, best, {2, 1});
  best.simulation.executions = k + 1;
  return best;
}

} // namespace cg::schedule
