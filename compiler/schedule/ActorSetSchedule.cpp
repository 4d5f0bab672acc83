//===- ActorSetSchedule.cpp - Graphs over one actor set, together ---------===//
//
// A turn is built as one graph the simulator already knows how to run: the
// set's actors, and the two graphs' tasks, values, channels and groups side
// by side, renumbered; each actor's operation list is its operations of the
// graphs it runs, laid end to end in the turn's order. The driver writes the
// inputs of both and reads the outputs of both, as it does for one graph.
//
//===----------------------------------------------------------------------===//
#include "schedule/ActorSetSchedule.h"
#include "ir/Names.h"
#include "support/InternalError.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cg::schedule {
namespace {

/// The set's index of each actor of `graph`, by name.
std::vector<unsigned> setIndices(const ir::ActorSet& set, const ir::Graph& graph) {
  std::vector<unsigned> indices;
  for (const ir::Actor& actor : graph.actors) {
    auto it = std::find_if(set.actors.begin(), set.actors.end(),
                           [&](const ir::Actor& a) { return a.name == actor.name; });
    if (it == set.actors.end())
      internalError("graph '" + graph.name + "' names actor '" + actor.name +
                    "', which its set lacks");
    indices.push_back(static_cast<unsigned>(it - set.actors.begin()));
  }
  return indices;
}

/// Whether graph `g` uses the set's actor `actor`.
bool runs(const ir::ActorSet& set, const SetGraph& g, unsigned actor) {
  for (const ir::Actor& a : g.graph->actors)
    if (a.name == set.actors[actor].name)
      return true;
  return false;
}

struct Turn {
  ir::Graph graph;
  Schedule schedule;
};

Turn buildTurn(const ir::ActorSet& set, const std::vector<SetGraph>& graphs, unsigned first,
               unsigned second, const TurnOrder& order) {
  Turn turn;
  ir::Graph& out = turn.graph;
  Schedule& schedule = turn.schedule;
  out.name = graphs[first].graph->name + " then " + graphs[second].graph->name;
  out.actors = set.actors;
  const auto numActors = static_cast<unsigned>(set.actors.size());
  schedule.actors.resize(numActors);
  for (unsigned a = 0; a < numActors; ++a)
    schedule.actors[a].actor = a;

  // Where each graph's numbering starts in the turn.
  struct Offsets {
    unsigned task = 0, value = 0, input = 0, channel = 0, group = 0, collective = 0;
    std::vector<unsigned> actors; // graph's actor -> set's actor
  };
  std::vector<Offsets> offsets(graphs.size());
  unsigned groups = 0; // the groups are added last, after the operations
  for (unsigned g : {first, second}) {
    const ir::Graph& graph = *graphs[g].graph;
    const Schedule& own = *graphs[g].schedule;
    Offsets& at = offsets[g];
    at = {static_cast<unsigned>(out.tasks.size()),
          static_cast<unsigned>(out.values.size()),
          static_cast<unsigned>(out.inputs.size()),
          static_cast<unsigned>(schedule.channels.size()),
          groups,
          static_cast<unsigned>(out.collectives.size()),
          setIndices(set, graph)};
    groups += static_cast<unsigned>(own.groups.size());
    for (ir::Task task : graph.tasks) {
      task.actor = at.actors[task.actor];
      for (ir::Arg& arg : task.args)
        if (arg.kind == ir::Arg::Kind::Value)
          arg.value += at.value;
      for (unsigned& result : task.results)
        result += at.value;
      if (task.collective >= 0)
        task.collective += static_cast<int>(at.collective);
      out.tasks.push_back(std::move(task));
    }
    for (ir::Value value : graph.values) {
      value.producer.index += value.producer.kind == ir::Producer::Kind::Input ? at.input : at.task;
      out.values.push_back(std::move(value));
    }
    for (unsigned input : graph.inputs)
      out.inputs.push_back(input + at.value);
    for (unsigned output : graph.outputs)
      out.outputs.push_back(output + at.value);
    for (ir::Collective collective : graph.collectives) {
      for (unsigned& task : collective.tasks)
        task += at.task;
      out.collectives.push_back(std::move(collective));
    }
    for (Channel channel : own.channels) {
      channel.value += at.value;
      if (channel.writer != kDriver)
        channel.writer = static_cast<int>(at.actors[static_cast<unsigned>(channel.writer)]);
      for (int& reader : channel.readers)
        if (reader != kDriver)
          reader = static_cast<int>(at.actors[static_cast<unsigned>(reader)]);
      std::sort(channel.readers.begin(), channel.readers.end());
      schedule.channels.push_back(std::move(channel));
    }
    for (unsigned c : own.inputChannels)
      schedule.inputChannels.push_back(c + at.channel);
    for (unsigned c : own.outputChannels)
      schedule.outputChannels.push_back(c + at.channel);
  }

  // Each actor's program: its graphs' operations end to end, in the turn's
  // order; where each graph's operations start, for the groups' members.
  std::vector<std::vector<unsigned>> opStart(numActors, std::vector<unsigned>(graphs.size(), 0));
  for (unsigned a = 0; a < numActors; ++a) {
    for (unsigned g : order(a, first, second)) {
      if (g != first && g != second)
        internalError("a turn's order names a graph outside the turn");
      const Offsets& at = offsets[g];
      opStart[a][g] = static_cast<unsigned>(schedule.actors[a].operations.size());
      for (unsigned own = 0; own < at.actors.size(); ++own) {
        if (at.actors[own] != a)
          continue;
        for (Operation op : graphs[g].schedule->actors[own].operations) {
          op.task += at.task;
          for (unsigned& c : op.channels)
            c += at.channel;
          if (op.group >= 0)
            op.group += static_cast<int>(at.group);
          schedule.actors[a].operations.push_back(std::move(op));
        }
      }
    }
  }
  for (unsigned g : {first, second}) {
    const Offsets& at = offsets[g];
    for (SyncGroup group : graphs[g].schedule->groups) {
      group.source += group.kind == SyncGroup::Kind::Nccl ? at.channel : at.collective;
      for (OpRef& member : group.members) {
        member.actor = at.actors[member.actor];
        member.index += opStart[member.actor][g];
      }
      schedule.groups.push_back(std::move(group));
    }
  }
  return turn;
}

/// The actors a blocked run names ("actor 'b' (execution 0) waits at ..."),
/// each once, in the order named.
std::vector<std::string> waitingActors(const SimulationResult& result) {
  std::vector<std::string> names;
  for (const std::string& line : result.blocked) {
    static constexpr std::string_view prefix = "actor '";
    if (line.rfind(prefix, 0) != 0)
      continue;
    std::string name = line.substr(prefix.size(), line.find('\'', prefix.size()) - prefix.size());
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  }
  return names;
}

/// The lines of `text` (a graph's schedule.txt) under "# actor <name> (".
std::vector<std::string> actorSection(const std::string& text, const std::string& name) {
  std::vector<std::string> lines;
  const std::string header = "# actor " + name + " (";
  bool inside = false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("#", 0) == 0) {
      if (inside)
        break;
      inside = line.rfind(header, 0) == 0;
      continue;
    }
    if (inside)
      lines.push_back(std::move(line));
  }
  return lines;
}

} // namespace

std::vector<SetGraph> graphsOver(const ir::ActorSet& set, const std::vector<ir::Graph>& graphs,
                                 const std::vector<Schedule>& schedules) {
  std::vector<SetGraph> members;
  for (std::size_t i = 0; i < graphs.size(); ++i)
    if (graphs[i].actorSet == set.name)
      members.push_back({&graphs[i], &schedules[i]});
  return members;
}

TurnOrder submissionOrder(const ir::ActorSet& set, const std::vector<SetGraph>& graphs) {
  return [&set, &graphs](unsigned actor, unsigned first, unsigned second) {
    std::vector<unsigned> runsThem;
    for (unsigned g : {first, second})
      if (runs(set, graphs[g], actor))
        runsThem.push_back(g);
    return runsThem;
  };
}

SimulationResult simulateInTurn(const ir::ActorSet& set, const std::vector<SetGraph>& graphs,
                                unsigned first, unsigned second, const TurnOrder& order,
                                unsigned maxInFlight, unsigned executions) {
  Turn turn = buildTurn(set, graphs, first, second, order);
  return simulate(turn.graph, turn.schedule, {executions, maxInFlight});
}

unsigned turnsChecked(unsigned maxInFlight) { return 2 * std::max(1u, maxInFlight) + 1; }

std::vector<ir::Diagnostic> checkGraphsInTurn(const ir::ActorSet& set,
                                              const std::vector<SetGraph>& graphs,
                                              unsigned maxInFlight, const TurnOrder& order) {
  std::vector<ir::Diagnostic> problems;
  for (unsigned first = 0; first < graphs.size(); ++first)
    for (unsigned second = 0; second < graphs.size(); ++second) {
      if (first == second)
        continue;
      SimulationResult result =
          simulateInTurn(set, graphs, first, second, order, maxInFlight, turnsChecked(maxInFlight));
      if (result.completed)
        continue;
      std::vector<std::string> quoted;
      for (const std::string& name : waitingActors(result))
        quoted.push_back("'" + name + "'");
      const ir::Graph& a = *graphs[first].graph;
      const ir::Graph& b = *graphs[second].graph;
      problems.push_back(
          {b.loc,
           fmt::format("graphs '{}' and '{}' of actor set '{}' block each other when '{}' "
                       "follows '{}': {} {} {} for each other",
                       a.name, b.name, set.name, b.name, a.name,
                       quoted.size() == 1 ? "actor" : "actors", fmt::join(quoted, ", "),
                       quoted.size() == 1 ? "waits" : "wait"),
           {{a.loc, fmt::format("graph '{}' is declared here", a.name)}}});
    }
  return problems;
}

std::vector<ir::Diagnostic> checkActorSets(const std::vector<ir::ActorSet>& sets,
                                           const std::vector<ir::Graph>& graphs,
                                           const std::vector<Schedule>& schedules,
                                           unsigned maxInFlight) {
  std::vector<ir::Diagnostic> problems;
  for (const ir::ActorSet& set : sets) {
    std::vector<SetGraph> members = graphsOver(set, graphs, schedules);
    for (ir::Diagnostic& problem :
         checkGraphsInTurn(set, members, maxInFlight, submissionOrder(set, members)))
      problems.push_back(std::move(problem));
  }
  return problems;
}

std::string renderActorSetScheduleText(const ir::ActorSet& set,
                                       const std::vector<ir::Graph>& allGraphs,
                                       const std::vector<Schedule>& schedules, unsigned maxInFlight,
                                       bool tcpEverywhere) {
  const std::vector<SetGraph> graphs = graphsOver(set, allGraphs, schedules);
  std::vector<std::string> texts, names;
  for (const SetGraph& g : graphs) {
    texts.push_back(renderScheduleText(*g.graph, *g.schedule, tcpEverywhere));
    names.push_back(g.graph->name);
  }
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "# schedule of actor set '{}'", set.name);
  if (std::string loc = ir::shortLoc(set.loc); !loc.empty())
    fmt::format_to(it, " ({})", loc);
  if (names.empty())
    out += ": no graph runs over it\n";
  else
    fmt::format_to(it, ": graphs {}\n", fmt::join(names, ", "));
  out += "# every actor runs the executions in the order the driver submits them, each with its "
         "graph's program; channels cN are those of <graph>.schedule.txt\n";
  for (unsigned a = 0; a < set.actors.size(); ++a) {
    const ir::Actor& actor = set.actors[a];
    fmt::format_to(it, "# actor {} ({})\n", actor.name, actor.className);
    bool any = false;
    for (unsigned g = 0; g < graphs.size(); ++g) {
      if (!runs(set, graphs[g], a))
        continue;
      any = true;
      fmt::format_to(it, "  in graph {}\n", graphs[g].graph->name);
      for (const std::string& line : actorSection(texts[g], actor.name))
        out += "  " + line + '\n';
    }
    if (!any)
      out += "  (in no graph)\n";
  }
  const std::size_t pairs = graphs.size() * (graphs.size() - (graphs.empty() ? 0 : 1));
  fmt::format_to(it,
                 "# checked by simulation: each of the {} ordered pair{} of graphs executed in "
                 "turn, {} times, {} in flight\n",
                 pairs, pairs == 1 ? "" : "s", turnsChecked(maxInFlight),
                 std::max(1u, maxInFlight));
  return out;
}

} // namespace cg::schedule
