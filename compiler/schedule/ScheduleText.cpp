//===- ScheduleText.cpp - The human-readable <graph>.schedule.txt ---------===//
//
// Channels, groups and per actor its numbered READ/COMPUTE/WRITE
// operations, each with the source line of its task, aligned in columns so
// the file can be scanned down them; then what the simulator checked. Names
// come from ir/Names.h, as in the JSON and dot renderings.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"

#include "ir/Names.h"
#include "schedule/Groups.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace cg::schedule {

using ir::collectiveNote;
using ir::endpointName;
using ir::Graph;
using ir::shortLoc;
using ir::taskLabels;
using ir::valueLabels;

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

std::string renderScheduleText(const Graph& graph, const Schedule& schedule, bool tcpEverywhere) {
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
    typeWidth = std::max(typeWidth, graph.values[channel.value].type.spelling.size());
    transportWidth =
        std::max(transportWidth, channelTransport(graph, channel, tcpEverywhere).size());
  }
  if (schedule.channels.empty())
    out += "  (none)\n";
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    std::vector<std::string> readers;
    for (int reader : channel.readers)
      readers.push_back(endpointName(graph, reader));
    fmt::format_to(it, "  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {} -> {}\n", fmt::format("c{}", c),
                   idWidth, labels[channel.value], labelWidth,
                   graph.values[channel.value].type.spelling, typeWidth,
                   channelTransport(graph, channel, tcpEverywhere), transportWidth,
                   endpointName(graph, channel.writer), fmt::join(readers, ", "));
  }

  // Synchronous groups: operations that complete only together, named by
  // actor and operation number.
  if (!schedule.groups.empty()) {
    const std::vector<Communicator> groups = communicatorsOf(graph, schedule).groups;
    out += "# synchronous groups (their operations complete together)\n";
    std::size_t gWidth = 0, nameWidth = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      gWidth = std::max(gWidth, 1 + digits(g));
      nameWidth = std::max(nameWidth, groups[g].name.size());
    }
    for (std::size_t g = 0; g < schedule.groups.size(); ++g) {
      std::vector<std::string> members;
      for (const OpRef& ref : schedule.groups[g].members)
        members.push_back(
            fmt::format("{} {} {}", graph.actors[ref.actor].name, ref.index + 1,
                        kindName(schedule.actors[ref.actor].operations[ref.index].kind)));
      fmt::format_to(it, "  {:<{}}  {:<{}}  {}\n", fmt::format("g{}", g), gWidth, groups[g].name,
                     nameWidth, fmt::join(members, ", "));
    }
  }

  // Operations: the bodies of all COMPUTE lines share one column for their
  // source location, so the file can be scanned down that column.
  // A constant argument shows as its C++ expression.
  auto computeBody = [&](const Operation& op) {
    return ir::taskCall(graph, op.task, tasks, labels);
  };
  auto channelList = [&](const Operation& op, bool withValues) {
    std::vector<std::string> items;
    for (unsigned c : op.channels)
      items.push_back(withValues ? fmt::format("c{} ({})", c, labels[schedule.channels[c].value])
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
      fmt::format_to(it, "  {:>{}}  {:<7}  ", n + 1, numberWidth, kindName(op.kind));
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
    fmt::format_to(it, "  {:<{}}  -> c{}\n", fmt::format("input #{}", i), endWidth,
                   schedule.inputChannels[i]);
  for (std::size_t k = 0; k < schedule.outputChannels.size(); ++k) {
    unsigned c = schedule.outputChannels[k];
    fmt::format_to(it, "  {:<{}}  <- c{} ({})\n", fmt::format("output #{}", k), endWidth, c,
                   labels[schedule.channels[c].value]);
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
