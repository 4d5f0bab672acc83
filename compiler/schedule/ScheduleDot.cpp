//===- ScheduleDot.cpp - The graph and its schedule for Graphviz ----------===//
//
// Node names are stable ids (t<task>, o<actor>_<operation>) and every label
// is quoted, so any actor or method name renders.
//
//===----------------------------------------------------------------------===//

#include "schedule/ScheduleDot.h"

#include "ir/Names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace cg::schedule {
namespace {

/// A Graphviz string literal; a newline becomes a centred line break.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

constexpr const char* kGroupColours[] = {"lightblue",   "palegreen", "khaki", "plum",
                                         "lightsalmon", "lightcyan", "wheat", "thistle"};

std::string groupColour(int group) {
  return kGroupColours[static_cast<std::size_t>(group) % std::size(kGroupColours)];
}

} // namespace

std::string renderScheduleDot(const ir::Graph& graph, const Schedule& schedule,
                              const DotOptions& options) {
  const std::vector<std::string> tasks = taskLabels(graph);
  const std::vector<std::string> values = valueLabels(graph, tasks);
  std::string out;
  auto it = std::back_inserter(out);

  fmt::format_to(it, "// graph '{}' ({}): its tasks{}\n", graph.name, shortLoc(graph.loc),
                 options.operations ? ", and the operations of its schedule" : "");
  fmt::format_to(it, "digraph {} {{\n", quoted(graph.name));
  out += "  graph [fontname=\"Helvetica\", fontsize=11];\n"
         "  node [fontname=\"Helvetica\", fontsize=10, shape=box];\n"
         "  edge [fontname=\"Helvetica\", fontsize=9];\n\n";

  // Tasks.
  out += "  subgraph cluster_tasks {\n    label=\"tasks\";\n";
  out += "    inputs [label=\"driver: inputs\", shape=ellipse];\n"
         "    outputs [label=\"driver: outputs\", shape=ellipse];\n";
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    const ir::Task& task = graph.tasks[t];
    std::string_view actorClass = graph.actors[task.actor].className;
    if (actorClass.substr(0, 2) == "::")
      actorClass.remove_prefix(2); // as the user wrote it, most likely
    std::string label = fmt::format("{}\n({})", tasks[t], actorClass);
    if (std::string loc = shortLoc(task.loc); !loc.empty())
      label += "\n" + loc;
    if (std::string note = collectiveNote(graph, t); !note.empty())
      label += "\n" + note;
    fmt::format_to(it, "    t{} [label={}{}];\n", t, quoted(label),
                   task.collective >= 0 ? ", shape=hexagon" : "");
  }
  auto producerNode = [&](unsigned value) {
    const ir::Producer& producer = graph.values[value].producer;
    return producer.kind == ir::Producer::Kind::Input ? std::string("inputs")
                                                      : fmt::format("t{}", producer.index);
  };
  auto valueEdgeStyle = [&](unsigned value) {
    return graph.values[value].transport == ir::Transport::Nccl ? ", style=bold, color=blue" : "";
  };
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    std::vector<unsigned> seen;
    for (const ir::Arg& arg : graph.tasks[t].args) {
      if (arg.kind != ir::Arg::Kind::Value ||
          std::find(seen.begin(), seen.end(), arg.value) != seen.end())
        continue;
      seen.push_back(arg.value);
      fmt::format_to(
          it, "    {} -> t{} [label={}{}];\n", producerNode(arg.value), t,
          quoted(fmt::format("{}: {}\n{}", values[arg.value], graph.values[arg.value].type.spelling,
                             ir::toString(graph.values[arg.value].transport))),
          valueEdgeStyle(arg.value));
    }
  }
  for (unsigned k = 0; k < graph.outputs.size(); ++k)
    fmt::format_to(
        it, "    {} -> outputs [label={}];\n", producerNode(graph.outputs[k]),
        quoted(fmt::format("output #{}: {}", k, graph.values[graph.outputs[k]].type.spelling)));
  for (unsigned c = 0; c < graph.collectives.size(); ++c) {
    const std::vector<unsigned>& ranks = graph.collectives[c].tasks;
    for (std::size_t r = 1; r < ranks.size(); ++r)
      fmt::format_to(it,
                     "    t{} -> t{} [dir=none, style=dashed, constraint=false, "
                     "label={}];\n",
                     ranks[r - 1], ranks[r],
                     quoted(fmt::format("{} #{}", ir::toString(graph.collectives[c].kind), c)));
  }
  out += "  }\n";
  if (!options.operations)
    return out + "}\n";
  out += "\n";

  // Operations.
  const std::vector<std::vector<unsigned>> stepOf = operationSteps(schedule);

  out += "  subgraph cluster_operations {\n"
         "    label=\"operations: each actor's in order, s<n> its step in the global order\\n"
         "filled: a synchronous group; red: moved by overlap\";\n"
         "    driver [label=\"driver\", shape=ellipse];\n";
  for (const ActorSchedule& actor : schedule.actors) {
    fmt::format_to(it, "    subgraph cluster_actor{} {{\n      label={};\n", actor.actor,
                   quoted(fmt::format("actor {}", graph.actors[actor.actor].name)));
    for (unsigned i = 0; i < actor.operations.size(); ++i) {
      const Operation& op = actor.operations[i];
      std::string label = fmt::format("{} {} {}", i + 1, kindName(op.kind), tasks[op.task]);
      if (!op.channels.empty()) {
        std::vector<std::string> channels;
        for (unsigned c : op.channels)
          channels.push_back(fmt::format("c{}", c));
        label += "\n" + fmt::format("{}", fmt::join(channels, ", "));
      }
      label += fmt::format("\ns{}", stepOf[actor.actor][i]);
      if (op.group >= 0)
        label += fmt::format(" g{}", op.group);
      if (op.moved)
        label += " moved";
      std::string style;
      if (op.group >= 0)
        style += fmt::format(", style=filled, fillcolor={}", groupColour(op.group));
      if (op.moved)
        style += ", color=red, fontcolor=red, penwidth=2";
      fmt::format_to(it, "      o{}_{} [label={}{}];\n", actor.actor, i, quoted(label), style);
    }
    for (unsigned i = 1; i < actor.operations.size(); ++i)
      fmt::format_to(it, "      o{}_{} -> o{}_{} [style=dotted, arrowhead=none];\n", actor.actor,
                     i - 1, actor.actor, i);
    out += "    }\n";
  }
  // Data: from each channel's WRITE (or the driver) to its READs (or the
  // driver).
  std::vector<std::string> writers(schedule.channels.size(), "driver");
  std::vector<std::vector<std::string>> readers(schedule.channels.size());
  for (const ActorSchedule& actor : schedule.actors)
    for (unsigned i = 0; i < actor.operations.size(); ++i)
      for (unsigned c : actor.operations[i].channels) {
        std::string node = fmt::format("o{}_{}", actor.actor, i);
        if (actor.operations[i].kind == Operation::Kind::Write)
          writers[c] = std::move(node);
        else
          readers[c].push_back(std::move(node));
      }
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    if (std::find(channel.readers.begin(), channel.readers.end(), kDriver) != channel.readers.end())
      readers[c].push_back("driver");
    for (const std::string& reader : readers[c])
      fmt::format_to(it, "    {} -> {} [label={}{}];\n", writers[c], reader,
                     quoted(fmt::format("c{}", c)), valueEdgeStyle(channel.value));
  }
  // Collective ranks: joined like the tasks above.
  for (unsigned g = 0; g < schedule.groups.size(); ++g) {
    const SyncGroup& group = schedule.groups[g];
    if (group.kind != SyncGroup::Kind::Collective)
      continue;
    for (std::size_t m = 1; m < group.members.size(); ++m)
      fmt::format_to(it,
                     "    o{}_{} -> o{}_{} [dir=none, style=dashed, constraint=false, "
                     "label=\"g{}\"];\n",
                     group.members[m - 1].actor, group.members[m - 1].index, group.members[m].actor,
                     group.members[m].index, g);
  }
  out += "  }\n}\n";
  return out;
}

} // namespace cg::schedule
