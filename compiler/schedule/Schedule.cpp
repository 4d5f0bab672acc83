//===- Schedule.cpp - Channels and per-actor operation lists --------------===//
//
// Each actor is one process that runs a fixed, straight-line list of
// operations once per execution, so everything about communication is decided
// here at compile time: which values need a channel, who writes and who reads
// each one (and so each reader's slot), and in what order every actor reads,
// computes and writes. Codegen only prints what this file decides.
//
// This file strings the passes together (see Schedule.h for the list) and
// renders `<graph>.schedule.txt`. With --schedule=cost it builds one full
// schedule per candidate task order and keeps the best by simulation.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"

#include "ir/Validate.h"
#include "schedule/CostOrder.h"
#include "schedule/GlobalOrder.h"
#include "schedule/Labels.h"
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

[[noreturn]] void internalError(std::string_view message) {
  throw std::logic_error(fmt::format("internal compiler error: {}", message));
}

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
    moved = hoistReceives(g, perActor);
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
      OpNode& node = g.ops[op];   // g is not needed after this
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

std::string_view channelTransport(const Graph& graph, const Schedule& schedule,
                                  const Channel& channel) {
  if (graph.values[channel.value].transport != ir::Transport::Shm)
    return ir::toString(graph.values[channel.value].transport);
  if (schedule.options.tcpEverywhere)
    return "tcp";
  auto hostOf = [&](int endpoint) {
    return endpoint == kDriver ? 0u : graph.actors[static_cast<unsigned>(endpoint)].host;
  };
  for (int reader : channel.readers)
    if (hostOf(reader) != hostOf(channel.writer))
      return "tcp";
  return "shm";
}

std::variant<Schedule, std::vector<ir::Diagnostic>>
buildSchedule(const Graph& graph, const ScheduleOptions& options) {
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
           fmt::format("actor '{}' has no task; remove it or bind a method",
                       graph.actors[a].name),
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

//===----------------------------------------------------------------------===//
// Text rendering
//===----------------------------------------------------------------------===//

namespace {

std::size_t digits(std::size_t n) {
  std::size_t count = 1;
  while (n >= 10) {
    n /= 10;
    ++count;
  }
  return count;
}

} // namespace

std::string renderScheduleText(const Graph& graph, const Schedule& schedule) {
  const std::vector<std::string> tasks = taskLabels(graph);
  const std::vector<std::string> labels = valueLabels(graph, tasks);
  std::string out;
  auto it = std::back_inserter(out);

  fmt::format_to(it, "# schedule of graph '{}'", graph.name);
  if (std::string loc = shortLoc(graph.loc); !loc.empty())
    fmt::format_to(it, " ({})", loc);
  out += '\n';

  // Channels: id, value, type, transport, writer -> readers (in reader-slot
  // order).
  out += "# channels\n";
  std::size_t idWidth = 0, labelWidth = 0, typeWidth = 0, transportWidth = 0;
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    idWidth = std::max(idWidth, 1 + digits(c));
    labelWidth = std::max(labelWidth, labels[channel.value].size());
    typeWidth = std::max(typeWidth,
                         graph.values[channel.value].type.spelling.size());
    transportWidth =
        std::max(transportWidth, channelTransport(graph, schedule, channel).size());
  }
  if (schedule.channels.empty())
    out += "  (none)\n";
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    std::vector<std::string> readers;
    for (int reader : channel.readers)
      readers.push_back(endpointName(graph, reader));
    fmt::format_to(it, "  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {} -> {}\n",
                   fmt::format("c{}", c), idWidth, labels[channel.value],
                   labelWidth, graph.values[channel.value].type.spelling,
                   typeWidth,
                   channelTransport(graph, schedule, channel),
                   transportWidth, endpointName(graph, channel.writer),
                   fmt::join(readers, ", "));
  }

  // Synchronous groups: operations that complete only together, named by
  // actor and operation number.
  auto groupName = [&](const SyncGroup& group) {
    if (group.kind == SyncGroup::Kind::Nccl)
      return fmt::format("nccl c{}", group.source);
    const ir::Collective& collective = graph.collectives[group.source];
    std::string kind(ir::toString(collective.kind));
    if (!collective.reduceOp.empty())
      kind += " " + collective.reduceOp;
    return fmt::format("{} #{}", kind, group.source);
  };
  if (!schedule.groups.empty()) {
    out += "# synchronous groups (their operations complete together)\n";
    std::size_t gWidth = 0, nameWidth = 0;
    for (std::size_t g = 0; g < schedule.groups.size(); ++g) {
      gWidth = std::max(gWidth, 1 + digits(g));
      nameWidth = std::max(nameWidth, groupName(schedule.groups[g]).size());
    }
    for (std::size_t g = 0; g < schedule.groups.size(); ++g) {
      std::vector<std::string> members;
      for (const OpRef& ref : schedule.groups[g].members)
        members.push_back(fmt::format(
            "{} {} {}", graph.actors[ref.actor].name, ref.index + 1,
            kindName(schedule.actors[ref.actor].operations[ref.index].kind)));
      fmt::format_to(it, "  {:<{}}  {:<{}}  {}\n", fmt::format("g{}", g), gWidth,
                     groupName(schedule.groups[g]), nameWidth, fmt::join(members, ", "));
    }
  }

  // Operations: the bodies of all COMPUTE lines share one column for their
  // source location, so the file can be scanned down that column.
  // A constant argument shows as its C++ expression.
  auto computeBody = [&](const Operation& op) {
    const ir::Task& task = graph.tasks[op.task];
    std::vector<std::string_view> args;
    for (const ir::Arg& arg : task.args)
      args.push_back(arg.kind == ir::Arg::Kind::Value
                         ? std::string_view(labels[arg.value])
                         : std::string_view(arg.constant.expression));
    return fmt::format("{}({})", tasks[op.task], fmt::join(args, ", "));
  };
  auto channelList = [&](const Operation& op, bool withValues) {
    std::vector<std::string> items;
    for (unsigned c : op.channels)
      items.push_back(withValues ? fmt::format("c{} ({})", c,
                                               labels[schedule.channels[c].value])
                                 : fmt::format("c{}", c));
    return fmt::format("{}", fmt::join(items, ", "));
  };
  std::size_t numberWidth = 1, bodyWidth = 0;
  for (const ActorSchedule& actor : schedule.actors) {
    numberWidth = std::max(numberWidth, digits(actor.operations.size()));
    for (const Operation& op : actor.operations)
      if (op.kind == Operation::Kind::Compute)
        bodyWidth = std::max(bodyWidth, computeBody(op).size());
  }

  for (const ActorSchedule& actor : schedule.actors) {
    fmt::format_to(it, "# actor {} ({})\n", graph.actors[actor.actor].name,
                   graph.actors[actor.actor].className);
    if (actor.operations.empty())
      out += "  (no operations)\n";
    for (std::size_t n = 0; n < actor.operations.size(); ++n) {
      const Operation& op = actor.operations[n];
      fmt::format_to(it, "  {:>{}}  {:<7}  ", n + 1, numberWidth,
                     kindName(op.kind));
      // Markers after the body: the group, and whether overlap moved it.
      std::string markers;
      if (op.group >= 0)
        markers += fmt::format("  [g{}]", op.group);
      if (op.moved)
        markers += "  [moved]";
      std::string line;
      switch (op.kind) {
      case Operation::Kind::Read:
        line = channelList(op, /*withValues=*/true);
        break;
      case Operation::Kind::Write:
        line = channelList(op, /*withValues=*/false);
        break;
      case Operation::Kind::Compute: {
        std::string loc = shortLoc(graph.tasks[op.task].loc);
        std::string note = collectiveNote(graph, op.task);
        line = computeBody(op);
        if (!loc.empty() || !note.empty())
          line = fmt::format("{:<{}}", line, bodyWidth);
        if (!loc.empty())
          line += "  " + loc;
        if (!note.empty())
          line += "  " + note;
        break;
      }
      }
      if (!markers.empty() && op.kind != Operation::Kind::Compute)
        line = fmt::format("{:<{}}", line, bodyWidth);
      out += line + markers + '\n';
    }
  }

  // The driver's side: which channel it fills for each input and drains for
  // each output.
  out += "# driver\n";
  std::size_t endWidth = 0;
  for (std::size_t i = 0; i < schedule.inputChannels.size(); ++i)
    endWidth = std::max(endWidth, fmt::format("input #{}", i).size());
  for (std::size_t k = 0; k < schedule.outputChannels.size(); ++k)
    endWidth = std::max(endWidth, fmt::format("output #{}", k).size());
  for (std::size_t i = 0; i < schedule.inputChannels.size(); ++i)
    fmt::format_to(it, "  {:<{}}  -> c{}\n", fmt::format("input #{}", i),
                   endWidth, schedule.inputChannels[i]);
  for (std::size_t k = 0; k < schedule.outputChannels.size(); ++k) {
    unsigned c = schedule.outputChannels[k];
    fmt::format_to(it, "  {:<{}}  <- c{} ({})\n", fmt::format("output #{}", k),
                   endWidth, c, labels[schedule.channels[c].value]);
  }

  // What was checked, and how it was built when not by default.
  std::vector<std::string> built;
  if (schedule.options.order == ScheduleOptions::Order::Cost)
    built.push_back("--schedule=cost");
  if (schedule.options.overlapGpuCommunication)
    built.push_back("--overlap-gpu-communication");
  if (!built.empty())
    fmt::format_to(it, "# built with {}\n", fmt::join(built, " "));
  fmt::format_to(it,
                 "# checked by simulation: {} executions, {} in flight; one execution "
                 "takes {:g} cost units (unknown costs count 1)",
                 schedule.simulation.executions, schedule.options.maxInFlight,
                 schedule.simulation.makespan);
  if (schedule.options.order == ScheduleOptions::Order::Cost)
    fmt::format_to(it, ", at most {} round trip{} in flight per actor",
                   schedule.simulation.peakInFlight,
                   schedule.simulation.peakInFlight == 1 ? "" : "s");
  out += '\n';
  return out;
}

} // namespace cg::schedule
