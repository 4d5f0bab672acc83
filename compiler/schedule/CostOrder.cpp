//===- CostOrder.cpp - Task orders chosen by simulated cost ---------------===//
//
// The list scheduler is event driven: a heap of finish times; at each time,
// finished tasks release their dependants, then every idle actor (in index
// order) starts its best startable task. Collectives are barriers: on each
// of its actors a rank waits for the tasks bound before it there, the tasks
// bound after it wait for it, and all ranks start together once every rank's
// actor has reached it.
//
//===----------------------------------------------------------------------===//

#include "schedule/CostOrder.h"

#include "schedule/Simulator.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <utility>

namespace cg::schedule {
namespace {

/// Tasks reading any result of each task, ascending, once each.
std::vector<std::vector<unsigned>> consumersOf(const ir::Graph& graph) {
  std::vector<std::vector<unsigned>> readers(graph.values.size());
  for (unsigned t = 0; t < graph.tasks.size(); ++t)
    for (const ir::Arg& arg : graph.tasks[t].args)
      if (arg.kind == ir::Arg::Kind::Value)
        readers[arg.value].push_back(t);
  std::vector<std::vector<unsigned>> consumers(graph.tasks.size());
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    for (unsigned result : graph.tasks[t].results)
      consumers[t].insert(consumers[t].end(), readers[result].begin(), readers[result].end());
    std::sort(consumers[t].begin(), consumers[t].end());
    consumers[t].erase(std::unique(consumers[t].begin(), consumers[t].end()), consumers[t].end());
  }
  return consumers;
}

/// Which startable task an idle actor prefers.
enum class Rule {
  Bind,    // the earliest bound
  Deepest, // the one that finishes latest with unlimited actors (its
           // longest chain of costs from the inputs), then the earliest
           // bound: work already under way before new work
};

/// Each task's finish time with as many actors as tasks: its cost plus the
/// latest such time of its producers.
std::vector<double> depths(const ir::Graph& graph) {
  std::vector<double> depth(graph.tasks.size(), 0);
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    double start = 0;
    for (const ir::Arg& arg : graph.tasks[t].args)
      if (arg.kind == ir::Arg::Kind::Value &&
          graph.values[arg.value].producer.kind == ir::Producer::Kind::Task)
        start = std::max(start, depth[graph.values[arg.value].producer.index]);
    depth[t] = start + costOf(graph.tasks[t]);
  }
  return depth;
}

/// One list schedule with `cap` round trips per actor (0: no cap).
CostCandidate listSchedule(const ir::Graph& graph, const RoundTrips& roundTrips,
                           const std::vector<double>& depth, Rule rule, unsigned cap) {
  const auto numTasks = static_cast<unsigned>(graph.tasks.size());
  const auto numActors = static_cast<unsigned>(graph.actors.size());
  auto keyOf = [&](unsigned t) {
    return std::pair<double, unsigned>(rule == Rule::Deepest ? -depth[t] : 0.0, t);
  };

  // Waits: distinct producer tasks, plus the collective barriers.
  std::vector<unsigned> waits(numTasks, 0);
  std::vector<std::vector<unsigned>> releases(numTasks); // t done -> these wait less
  for (unsigned t = 0; t < numTasks; ++t) {
    std::vector<unsigned> producers;
    for (const ir::Arg& arg : graph.tasks[t].args)
      if (arg.kind == ir::Arg::Kind::Value &&
          graph.values[arg.value].producer.kind == ir::Producer::Kind::Task)
        producers.push_back(graph.values[arg.value].producer.index);
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    for (unsigned p : producers) {
      releases[p].push_back(t);
      ++waits[t];
    }
  }
  {
    std::vector<std::vector<unsigned>> byActor(numActors);
    for (unsigned t = 0; t < numTasks; ++t)
      byActor[graph.tasks[t].actor].push_back(t);
    for (const std::vector<unsigned>& tasks : byActor) {
      int lastRank = -1;
      std::vector<unsigned> segment;
      for (unsigned t : tasks) {
        if (graph.tasks[t].collective >= 0) {
          for (unsigned s : segment) {
            releases[s].push_back(t);
            ++waits[t];
          }
          segment.clear();
          if (lastRank >= 0) {
            releases[static_cast<unsigned>(lastRank)].push_back(t);
            ++waits[t];
          }
          lastRank = static_cast<int>(t);
        } else {
          if (lastRank >= 0) {
            releases[static_cast<unsigned>(lastRank)].push_back(t);
            ++waits[t];
          }
          segment.push_back(t);
        }
      }
    }
  }

  // Startable plain tasks per actor, best first.
  std::vector<std::set<std::pair<double, unsigned>>> ready(numActors);
  std::vector<unsigned> collectiveReady(graph.collectives.size(), 0);
  std::vector<bool> idle(numActors, true);
  std::vector<bool> waitingAtRank(numActors, false);
  std::vector<unsigned> open(numActors, 0);
  std::vector<bool> isOpen(numTasks, false);
  std::vector<double> start(numTasks, -1);
  unsigned started = 0;

  using Event = std::pair<double, unsigned>; // (finish time, task)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> running;

  auto becameReady = [&](unsigned t) {
    const ir::Task& task = graph.tasks[t];
    if (task.collective < 0) {
      ready[task.actor].insert(keyOf(t));
      return;
    }
    waitingAtRank[task.actor] = true;
    ++collectiveReady[static_cast<unsigned>(task.collective)];
  };
  for (unsigned t = 0; t < numTasks; ++t)
    if (waits[t] == 0)
      becameReady(t);

  auto begin = [&](unsigned t, double now, double duration) {
    start[t] = now;
    ++started;
    unsigned actor = graph.tasks[t].actor;
    idle[actor] = false;
    for (unsigned opener : roundTrips.closes(t))
      if (isOpen[opener]) {
        isOpen[opener] = false;
        --open[actor];
      }
    if (roundTrips.opens(t)) {
      isOpen[t] = true;
      ++open[actor];
    }
    running.push({now + duration, t});
  };
  // Starts what idle actors can start at `now`; with `force`, the first
  // ready task held back by the cap, when nothing else can run.
  auto dispatch = [&](double now, bool force) {
    bool any = false;
    for (unsigned k = 0; k < graph.collectives.size(); ++k) {
      const std::vector<unsigned>& ranks = graph.collectives[k].tasks;
      if (collectiveReady[k] != ranks.size())
        continue;
      bool allIdle = std::all_of(ranks.begin(), ranks.end(),
                                 [&](unsigned t) { return idle[graph.tasks[t].actor]; });
      if (!allIdle)
        continue;
      double duration = 0;
      for (unsigned t : ranks)
        duration = std::max(duration, costOf(graph.tasks[t]));
      collectiveReady[k] = 0;
      for (unsigned t : ranks) {
        waitingAtRank[graph.tasks[t].actor] = false;
        begin(t, now, duration);
      }
      any = true;
    }
    for (unsigned a = 0; a < numActors; ++a) {
      if (!idle[a] || waitingAtRank[a] || ready[a].empty())
        continue;
      for (const auto& entry : ready[a]) {
        unsigned t = entry.second;
        if (cap != 0 && roundTrips.opens(t) && !force) {
          unsigned closing = 0;
          for (unsigned opener : roundTrips.closes(t))
            closing += isOpen[opener] ? 1 : 0;
          if (open[a] - closing >= cap)
            continue;
        }
        ready[a].erase(entry);
        begin(t, now, costOf(graph.tasks[t]));
        any = true;
        if (force)
          return true;
        break;
      }
    }
    return any;
  };

  double now = 0;
  dispatch(now, false);
  while (started < numTasks || !running.empty()) {
    if (running.empty()) {
      if (!dispatch(now, true))
        break; // cannot happen for a graph in bind order; leave the rest
      continue;
    }
    now = running.top().first;
    while (!running.empty() && running.top().first == now) {
      unsigned t = running.top().second;
      running.pop();
      idle[graph.tasks[t].actor] = true;
      for (unsigned next : releases[t])
        if (--waits[next] == 0)
          becameReady(next);
    }
    dispatch(now, false);
  }

  // A task never started (impossible for a valid graph) goes last, in bind
  // order.
  for (unsigned t = 0; t < numTasks; ++t)
    if (start[t] < 0)
      start[t] = now + 1;
  CostCandidate candidate;
  candidate.priority.resize(numTasks);
  for (unsigned t = 0; t < numTasks; ++t)
    candidate.priority[t] = t;
  std::stable_sort(candidate.priority.begin(), candidate.priority.end(),
                   [&](unsigned a, unsigned b) { return start[a] < start[b]; });
  candidate.finish.resize(numTasks);
  for (unsigned t = 0; t < numTasks; ++t)
    candidate.finish[t] = start[t] + costOf(graph.tasks[t]);
  candidate.start = std::move(start);
  return candidate;
}

} // namespace

RoundTrips::RoundTrips(const ir::Graph& graph, std::size_t budget)
    : opens_(graph.tasks.size(), false), closes_(graph.tasks.size()) {
  const std::vector<std::vector<unsigned>> consumers = consumersOf(graph);
  std::vector<unsigned> seen(graph.tasks.size(), 0);
  unsigned stamp = 0;
  std::size_t work = 0;
  std::vector<unsigned> stack;
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    const unsigned actor = graph.tasks[t].actor;
    ++stamp;
    stack.clear();
    for (unsigned c : consumers[t])
      if (graph.tasks[c].actor != actor && seen[c] != stamp) {
        seen[c] = stamp;
        stack.push_back(c);
      }
    std::vector<unsigned> closers;
    while (!stack.empty()) {
      if (++work > budget) {
        opens_.assign(graph.tasks.size(), false);
        closes_.assign(graph.tasks.size(), {});
        return;
      }
      unsigned x = stack.back();
      stack.pop_back();
      for (unsigned c : consumers[x]) {
        if (seen[c] == stamp)
          continue;
        seen[c] = stamp;
        if (graph.tasks[c].actor == actor)
          closers.push_back(c);
        else
          stack.push_back(c);
      }
    }
    if (closers.empty())
      continue;
    opens_[t] = true;
    for (unsigned c : closers)
      closes_[c].push_back(t);
  }
}

unsigned RoundTrips::peak(const std::vector<std::vector<unsigned>>& perActor) const {
  unsigned peak = 0;
  std::vector<bool> isOpen(opens_.size(), false);
  for (const std::vector<unsigned>& tasks : perActor) {
    unsigned open = 0;
    for (unsigned t : tasks) {
      for (unsigned opener : closes_[t])
        if (isOpen[opener]) {
          isOpen[opener] = false;
          --open;
        }
      if (opens_[t]) {
        isOpen[t] = true;
        ++open;
      }
      peak = std::max(peak, open);
    }
  }
  return peak;
}

std::vector<CostCandidate> costCandidates(const ir::Graph& graph, const RoundTrips& roundTrips) {
  const std::vector<double> depth = depths(graph);
  std::vector<CostCandidate> candidates;
  auto maxCap = static_cast<unsigned>(std::min<std::size_t>(graph.actors.size(), 16));
  for (Rule rule : {Rule::Bind, Rule::Deepest})
    for (unsigned cap = 1; cap <= maxCap + 1; ++cap) {
      CostCandidate candidate =
          listSchedule(graph, roundTrips, depth, rule, cap == maxCap + 1 ? 0 : cap);
      bool seen = std::any_of(candidates.begin(), candidates.end(),
                              [&](const CostCandidate& c) { return c.start == candidate.start; });
      if (!seen)
        candidates.push_back(std::move(candidate));
    }
  return candidates;
}

void rankByTimes(const CostCandidate& candidate, OperationGraph& g) {
  const auto n = static_cast<unsigned>(g.ops.size());
  struct Key {
    double time;
    int tie; // at one time: shared-memory WRITEs, then READs and NCCL WRITEs, then COMPUTEs
    unsigned op;
    bool operator<(const Key& other) const {
      if (time != other.time)
        return time < other.time;
      if (tie != other.tie)
        return tie < other.tie;
      return op < other.op;
    }
  };
  std::vector<Key> keys(n);
  for (unsigned op = 0; op < n; ++op) {
    const OpNode& node = g.ops[op];
    switch (node.kind) {
    case Operation::Kind::Read:
      keys[op] = {candidate.start[node.task], 1, op};
      break;
    case Operation::Kind::Compute:
      keys[op] = {candidate.start[node.task], 2, op};
      break;
    case Operation::Kind::Write:
      keys[op] = {candidate.finish[node.task], node.group < 0 ? 0 : 1, op};
      break;
    }
  }
  // An NCCL WRITE waits for its last reader.
  for (const OpGroup& group : g.groups)
    if (group.kind == SyncGroup::Kind::Nccl && !group.members.empty()) {
      unsigned write = group.members.front();
      for (std::size_t m = 1; m < group.members.size(); ++m)
        keys[write].time = std::max(keys[write].time, keys[group.members[m]].time);
    }
  std::vector<Key> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  g.rank.assign(n, 0);
  for (unsigned r = 0; r < n; ++r)
    g.rank[sorted[r].op] = r;
  for (std::vector<unsigned>& ops : g.actorOps)
    std::sort(ops.begin(), ops.end(),
              [&](unsigned a, unsigned b) { return g.rank[a] < g.rank[b]; });
}

std::vector<std::vector<unsigned>> tasksPerActor(const ir::Graph& graph,
                                                 const TaskPriority& priority) {
  std::vector<std::vector<unsigned>> perActor(graph.actors.size());
  for (unsigned t : priority)
    perActor[graph.tasks[t].actor].push_back(t);
  return perActor;
}

} // namespace cg::schedule
