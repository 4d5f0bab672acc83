//===- GlobalOrder.cpp - One order of all operations, or the cycle --------===//
//
// Kahn's algorithm over the operation graph with each synchronous group
// taken as one unit, choosing among ready units by the rule in GlobalOrder.h.
// Two heaps keep it O(E log V): the units that are ready and preferred (each
// member at its actor's cursor), and all ready units for rule 2. A unit, once
// preferred, stays preferred until placed: a cursor only moves past an
// operation when that operation is placed.
//
//===----------------------------------------------------------------------===//

#include "schedule/GlobalOrder.h"
#include "support/InternalError.h"

#include "ir/Names.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

namespace cg::schedule {
namespace {

constexpr unsigned kNone = ~0u;

/// Units are ops (id < n) and groups (n + group index).
struct Units {
  const OperationGraph& g;
  unsigned n;

  unsigned of(unsigned op) const {
    int group = g.ops[op].group;
    return group < 0 ? op : n + static_cast<unsigned>(group);
  }
  template <typename F> void forMembers(unsigned unit, F f) const {
    if (unit < n)
      f(unit);
    else
      for (unsigned op : g.groups[unit - n].members)
        f(op);
  }
  unsigned rank(unsigned op) const { return g.rank.empty() ? op : g.rank[op]; }
  unsigned key(unsigned unit) const {
    if (unit < n)
      return rank(unit);
    unsigned best = ~0u;
    for (unsigned op : g.groups[unit - n].members)
      best = std::min(best, rank(op));
    return best;
  }
};

} // namespace

GlobalOrder orderOperations(const OperationGraph& g) {
  const auto n = static_cast<unsigned>(g.ops.size());
  const Units units{g, n};
  const auto numUnits = n + static_cast<unsigned>(g.groups.size());

  std::vector<unsigned> indegree(numUnits, 0);
  for (const OpEdge& e : g.edges)
    if (units.of(e.from) != units.of(e.to))
      ++indegree[units.of(e.to)];

  // Each op's position in its actor's preferred order, and each actor's
  // cursor: the position of its first op not placed yet.
  std::vector<unsigned> position(n, 0);
  for (const std::vector<unsigned>& ops : g.actorOps)
    for (unsigned i = 0; i < ops.size(); ++i)
      position[ops[i]] = i;
  std::vector<unsigned> cursor(g.actorOps.size(), 0);
  std::vector<bool> placed(n, false);
  std::vector<bool> unitPlaced(numUnits, false);
  std::vector<bool> inPreferred(numUnits, false);

  using Entry = std::pair<unsigned, unsigned>; // (key, unit)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> preferred, ready;

  auto checkPreferred = [&](unsigned unit) {
    if (indegree[unit] != 0 || unitPlaced[unit] || inPreferred[unit])
      return;
    bool atCursors = true;
    units.forMembers(unit, [&](unsigned op) {
      atCursors = atCursors && position[op] == cursor[g.ops[op].actor];
    });
    if (!atCursors)
      return;
    inPreferred[unit] = true;
    preferred.push({units.key(unit), unit});
  };
  auto becameReady = [&](unsigned unit) {
    ready.push({units.key(unit), unit});
    checkPreferred(unit);
  };

  for (unsigned unit = 0; unit < numUnits; ++unit) {
    bool empty = unit >= n && g.groups[unit - n].members.empty();
    bool grouped = unit < n && g.ops[unit].group >= 0;
    if (!empty && !grouped && indegree[unit] == 0)
      becameReady(unit);
  }

  GlobalOrder order;
  unsigned numPlaced = 0;
  while (true) {
    unsigned unit = kNone;
    if (!preferred.empty()) {
      unit = preferred.top().second;
      preferred.pop();
    } else {
      while (!ready.empty() && unitPlaced[ready.top().second])
        ready.pop();
      if (ready.empty())
        break;
      unit = ready.top().second;
      ready.pop();
    }
    unitPlaced[unit] = true;
    std::vector<unsigned> step;
    units.forMembers(unit, [&](unsigned op) {
      placed[op] = true;
      step.push_back(op);
    });
    numPlaced += static_cast<unsigned>(step.size());
    for (unsigned op : step) {
      unsigned actor = g.ops[op].actor;
      const std::vector<unsigned>& ops = g.actorOps[actor];
      while (cursor[actor] < ops.size() && placed[ops[cursor[actor]]])
        ++cursor[actor];
      if (cursor[actor] < ops.size())
        checkPreferred(units.of(ops[cursor[actor]]));
    }
    for (unsigned op : step)
      g.forEachOut(op, [&](const OpEdge& e) {
        unsigned target = units.of(e.to);
        if (target != unit && --indegree[target] == 0)
          becameReady(target);
      });
    order.steps.push_back(std::move(step));
  }
  if (numPlaced == n)
    return order;

  // Every unit left has a predecessor left. Walk predecessors from the
  // earliest one left until a unit repeats: that stretch is a cycle.
  unsigned start = kNone;
  for (unsigned op = 0; op < n && start == kNone; ++op)
    if (!placed[op])
      start = units.of(op);
  std::vector<unsigned> visitedAt(numUnits, kNone);
  std::vector<unsigned> walk; // edges, each into the previous unit
  unsigned unit = start;
  while (visitedAt[unit] == kNone) {
    visitedAt[unit] = static_cast<unsigned>(walk.size());
    unsigned via = kNone;
    units.forMembers(unit, [&](unsigned op) {
      for (unsigned i = g.inBegin[op]; i < g.inBegin[op + 1] && via == kNone; ++i) {
        const OpEdge& e = g.edges[g.inEdges[i]];
        if (!placed[e.from] && units.of(e.from) != unit)
          via = g.inEdges[i];
      }
    });
    if (via == kNone)
      internalError("an operation left unplaced "
                    "has no predecessor left");
    walk.push_back(via);
    unit = units.of(g.edges[via].from);
  }
  order.cycle.assign(walk.begin() + visitedAt[unit], walk.end());
  std::reverse(order.cycle.begin(), order.cycle.end());
  return order;
}

std::vector<std::vector<unsigned>> projectOntoActors(const OperationGraph& g,
                                                     const GlobalOrder& order) {
  std::vector<std::vector<unsigned>> perActor(g.actorOps.size());
  for (const std::vector<unsigned>& step : order.steps)
    for (unsigned op : step)
      perActor[g.ops[op].actor].push_back(op);
  return perActor;
}

ir::Diagnostic describeCycle(const ir::Graph& graph, const std::vector<Channel>& channels,
                             const OperationGraph& g, const std::vector<unsigned>& cycle) {
  // Start at the link leaving the earliest-bound operation, so the same
  // cycle always reads the same way.
  std::size_t first = 0;
  for (std::size_t i = 1; i < cycle.size(); ++i)
    if (g.edges[cycle[i]].from < g.edges[cycle[first]].from)
      first = i;
  std::vector<unsigned> edges(cycle.begin() + static_cast<std::ptrdiff_t>(first), cycle.end());
  edges.insert(edges.end(), cycle.begin(), cycle.begin() + static_cast<std::ptrdiff_t>(first));

  const std::vector<std::string> tasks = taskLabels(graph);
  auto locOf = [&](unsigned op) { return graph.tasks[g.ops[op].task].loc; };
  auto nameOf = [&](unsigned op) { return tasks[g.ops[op].task]; };
  auto actorOf = [&](unsigned op) { return graph.actors[g.ops[op].actor].name; };

  std::vector<ir::Note> notes;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const OpEdge& e = g.edges[edges[i]];
    switch (e.kind) {
    case OpEdge::Kind::InTask:
      break; // a task's own READ, COMPUTE and WRITE: nothing to explain
    case OpEdge::Kind::ProgramOrder:
    case OpEdge::Kind::Sequence:
      notes.push_back({locOf(e.to), fmt::format("actor '{}' runs '{}' only after '{}'",
                                                actorOf(e.to), nameOf(e.to), nameOf(e.from))});
      break;
    case OpEdge::Kind::Data: {
      const ir::Value& value = graph.values[channels[e.channel].value];
      notes.push_back(
          {locOf(e.to),
           fmt::format("'{}' waits for the result of '{}' ({})", nameOf(e.to), nameOf(e.from),
                       value.transport == ir::Transport::Nccl ? "nccl" : "shm")});
      break;
    }
    }
    // Inside a group the cycle enters at one member and leaves at another:
    // the leaving one completes only together with the entering one.
    unsigned entered = e.to;
    unsigned leaves = g.edges[edges[(i + 1) % edges.size()]].from;
    if (entered == leaves || g.ops[entered].group < 0)
      continue;
    const OpGroup& group = g.groups[static_cast<unsigned>(g.ops[entered].group)];
    if (group.kind == SyncGroup::Kind::Collective) {
      const ir::Collective& collective = graph.collectives[group.source];
      auto rankOf = [&](unsigned op) {
        return std::find(collective.tasks.begin(), collective.tasks.end(), g.ops[op].task) -
               collective.tasks.begin();
      };
      notes.push_back({locOf(leaves),
                       fmt::format("rank {} of {} #{} on actor '{}' completes only together with "
                                   "rank {} on actor '{}'",
                                   rankOf(leaves), ir::toString(collective.kind), group.source,
                                   actorOf(leaves), rankOf(entered), actorOf(entered))});
    } else if (g.ops[leaves].kind == Operation::Kind::Write) {
      notes.push_back(
          {locOf(leaves),
           fmt::format("'{}' on actor '{}' can send over nccl only when '{}' "
                       "on actor '{}' receives",
                       nameOf(leaves), actorOf(leaves), nameOf(entered), actorOf(entered))});
    } else if (g.ops[entered].kind == Operation::Kind::Write) {
      notes.push_back(
          {locOf(leaves),
           fmt::format("'{}' on actor '{}' receives over nccl only when '{}' "
                       "on actor '{}' sends",
                       nameOf(leaves), actorOf(leaves), nameOf(entered), actorOf(entered))});
    } else {
      notes.push_back(
          {locOf(leaves),
           fmt::format("'{}' on actor '{}' receives the same nccl send as "
                       "'{}' on actor '{}', at the same time",
                       nameOf(leaves), actorOf(leaves), nameOf(entered), actorOf(entered))});
    }
  }
  ir::SourceLoc at = notes.empty() ? graph.loc : notes.front().loc;
  return {at,
          fmt::format("graph '{}' has no deadlock-free schedule: its blocking "
                      "operations wait for each other in a cycle",
                      graph.name),
          std::move(notes)};
}

} // namespace cg::schedule
