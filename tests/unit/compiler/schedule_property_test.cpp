//===- schedule_property_test.cpp - The scheduler on random graphs --------===//
//
// Over 3,000 random graphs (random actors, fan-in and fan-out, tuple results,
// shm and NCCL values, collectives whose ranks are bound together or, as
// only hand-written IR can, apart):
//   - every schedule the scheduler emits runs to completion in the
//     simulator, with several numbers of executions in flight;
//   - every graph it rejects really has no schedule: for the small ones, all
//     per-actor operation orders that respect each task's READ -> COMPUTE ->
//     WRITE and the actor's program order are simulated, and none
//     completes.
// The generator is seeded, so a failure names a case that reproduces.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"

#include "GraphFixtures.h"
#include "ir/Validate.h"
#include "schedule/GlobalOrder.h"
#include "schedule/OperationGraph.h"
#include "schedule/Simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace cg::schedule {
namespace {

using test::GraphBuilder;

struct Generated {
  ir::Graph graph;
  bool apartRanks = false; // some collective's ranks are not bound together
};

/// A random graph that passes ir::validate().
Generated randomGraph(std::mt19937& rng, unsigned maxActors, unsigned maxTasks) {
  auto uniform = [&](unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  GraphBuilder g("random", 1);
  const unsigned numActors = uniform(1, maxActors);
  std::vector<unsigned> actors;
  for (unsigned a = 0; a < numActors; ++a)
    actors.push_back(g.actor("a" + std::to_string(a), 2 + a));
  std::vector<unsigned> values;
  for (unsigned i = uniform(1, 2); i > 0; --i)
    values.push_back(g.input("int"));
  const unsigned numInputs = static_cast<unsigned>(values.size());
  const unsigned firstInput = values[0];
  std::vector<int> producerActor(values.size(), -1);
  std::vector<bool> nccl(values.size(), false);
  unsigned line = 20;

  auto addValue = [&](unsigned v, unsigned actor) {
    if (values.size() <= v) {
      values.resize(v + 1);
      producerActor.resize(v + 1, -1);
      nccl.resize(v + 1, false);
    }
    values[v] = v;
    producerActor[v] = static_cast<int>(actor);
    if (chance(0.3)) {
      g.transport(v, ir::Transport::Nccl);
      nccl[v] = true;
    }
  };
  // A value to read, recent ones likelier.
  auto pickValue = [&]() {
    unsigned back = std::min<unsigned>(std::geometric_distribution<unsigned>(0.3)(rng),
                                       static_cast<unsigned>(values.size()) - 1);
    return static_cast<unsigned>(values.size()) - 1 - back;
  };

  struct PendingRank {
    unsigned collective, rank, actor, value, dueAt;
  };
  std::vector<PendingRank> pending;
  struct CollectiveSpec {
    ir::Collective::Kind kind;
    std::vector<unsigned> rankValues; // the ranks' results, by rank
  };
  std::vector<CollectiveSpec> collectives;
  Generated out;

  auto bindRank = [&](const PendingRank& r) {
    unsigned v = g.bind(r.actor, "allreduce", {r.value}, line++, "Tensor");
    collectives[r.collective].rankValues[r.rank] = v;
    addValue(v, r.actor);
  };

  const unsigned numTasks = uniform(1, maxTasks);
  for (unsigned step = 0; step < numTasks; ++step) {
    for (std::size_t i = 0; i < pending.size();)
      if (pending[i].dueAt <= step) {
        bindRank(pending[i]);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    // A collective over actors that each produced a value.
    std::vector<unsigned> producers;
    for (unsigned a = 0; a < numActors; ++a)
      if (std::find(producerActor.begin(), producerActor.end(), static_cast<int>(a)) !=
          producerActor.end())
        producers.push_back(a);
    if (producers.size() >= 2 && chance(0.25)) {
      std::shuffle(producers.begin(), producers.end(), rng);
      producers.resize(
          uniform(2, static_cast<unsigned>(std::min<std::size_t>(producers.size(), 3))));
      auto c = static_cast<unsigned>(collectives.size());
      collectives.push_back(
          {ir::Collective::Kind::AllReduce, std::vector<unsigned>(producers.size())});
      bool apart = chance(0.5);
      out.apartRanks = out.apartRanks || apart;
      for (unsigned r = 0; r < producers.size(); ++r) {
        std::vector<unsigned> own;
        for (unsigned v = 0; v < values.size(); ++v)
          if (producerActor[v] == static_cast<int>(producers[r]))
            own.push_back(v);
        PendingRank rank{c, r, producers[r], own[uniform(0, static_cast<unsigned>(own.size()) - 1)],
                         apart && r > 0 ? step + uniform(1, 3) : step};
        if (rank.dueAt <= step)
          bindRank(rank);
        else
          pending.push_back(rank);
      }
      continue;
    }
    unsigned actor = actors[uniform(0, numActors - 1)];
    std::vector<test::ArgSpec> args;
    for (unsigned n = uniform(1, 3); n > 0; --n) {
      unsigned v = pickValue();
      // Mostly avoid sending to oneself, which is rejected outright.
      if (nccl[v] && producerActor[v] == static_cast<int>(actor) && !chance(0.05))
        v = firstInput;
      args.push_back(v);
    }
    if (chance(0.2))
      args.push_back(test::constant("int", "7"));
    if (chance(0.2)) {
      for (unsigned v : g.bindTuple(actor, "split", args, line++, {"Tensor", "Tensor"}))
        addValue(v, actor);
    } else {
      addValue(g.bind(actor, "work", args, line++, "Tensor"), actor);
    }
  }
  for (const PendingRank& r : pending)
    bindRank(r);

  ir::Graph graph = g.build();
  for (unsigned c = 0; c < collectives.size(); ++c) {
    ir::Collective collective{collectives[c].kind, "sum", {}, test::at(line++)};
    for (unsigned v : collectives[c].rankValues) {
      unsigned t = graph.values[v].producer.index;
      graph.tasks[t].collective = static_cast<int>(c);
      collective.tasks.push_back(t);
    }
    graph.collectives.push_back(collective);
  }
  // Every actor has a task, every input and result is used, no NCCL value
  // reaches the driver.
  std::vector<bool> used(graph.values.size(), false);
  std::vector<bool> hasTask(graph.actors.size(), false);
  for (const ir::Task& task : graph.tasks) {
    hasTask[task.actor] = true;
    for (const ir::Arg& arg : task.args)
      if (arg.kind == ir::Arg::Kind::Value)
        used[arg.value] = true;
  }
  for (unsigned a = 0; a < graph.actors.size(); ++a)
    if (!hasTask[a]) {
      ir::Task task{a, "idle",          {{ir::Arg::Kind::Value, graph.inputs[0], {}}}, {}, -1,
                    0, test::at(line++)};
      auto t = static_cast<unsigned>(graph.tasks.size());
      task.results.push_back(static_cast<unsigned>(graph.values.size()));
      graph.values.push_back({{"Tensor"}, {ir::Producer::Kind::Task, t, -1}, ir::Transport::Shm});
      graph.tasks.push_back(task);
      used[graph.inputs[0]] = true;
      used.push_back(false);
    }
  for (unsigned i = 0; i < numInputs; ++i)
    if (!used[graph.inputs[i]]) {
      graph.tasks.front().args.push_back({ir::Arg::Kind::Value, graph.inputs[i], {}});
      used[graph.inputs[i]] = true;
    }
  for (unsigned v = 0; v < graph.values.size(); ++v)
    if (!used[v] && graph.values[v].producer.kind == ir::Producer::Kind::Task) {
      graph.values[v].transport = ir::Transport::Shm;
      graph.outputs.push_back(v);
    }
  out.graph = std::move(graph);
  return out;
}

/// A schedule with each actor's operations in the given order, for the
/// simulator.
Schedule scheduleFromOrder(const ir::Graph& graph, const std::vector<Channel>& channels,
                           const std::vector<std::optional<unsigned>>& channelOf,
                           const OperationGraph& g,
                           const std::vector<std::vector<unsigned>>& perActor) {
  Schedule s;
  s.channels = channels;
  for (unsigned v : graph.inputs)
    s.inputChannels.push_back(*channelOf[v]);
  for (unsigned v : graph.outputs)
    s.outputChannels.push_back(*channelOf[v]);
  std::vector<OpRef> where(g.ops.size());
  for (unsigned a = 0; a < perActor.size(); ++a) {
    ActorSchedule actor{a, {}};
    for (unsigned op : perActor[a]) {
      where[op] = {a, static_cast<unsigned>(actor.operations.size())};
      actor.operations.push_back(
          {g.ops[op].kind, g.ops[op].task, g.ops[op].channels, g.ops[op].group, false});
    }
    s.actors.push_back(actor);
  }
  for (const OpGroup& group : g.groups) {
    SyncGroup out{group.kind, group.source, {}};
    for (unsigned op : group.members)
      out.members.push_back(where[op]);
    s.groups.push_back(out);
  }
  return s;
}

/// Every order of `ops` respecting the edges among them; empty when there
/// are more than `limit`.
std::vector<std::vector<unsigned>>
linearExtensions(const OperationGraph& g, const std::vector<unsigned>& ops, std::size_t limit) {
  std::vector<std::vector<unsigned>> out;
  std::vector<unsigned> order;
  std::vector<bool> taken(ops.size(), false);
  bool overflow = false;
  auto ready = [&](std::size_t i) {
    bool ok = true;
    g.forEachIn(ops[i], [&](const OpEdge& e) {
      auto at = std::find(ops.begin(), ops.end(), e.from);
      if (at != ops.end() && !taken[static_cast<std::size_t>(at - ops.begin())])
        ok = false;
    });
    return ok;
  };
  auto recurse = [&](auto& self) -> void {
    if (overflow)
      return;
    if (order.size() == ops.size()) {
      out.push_back(order);
      overflow = out.size() > limit;
      return;
    }
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (!taken[i] && ready(i)) {
        taken[i] = true;
        order.push_back(ops[i]);
        self(self);
        order.pop_back();
        taken[i] = false;
      }
  };
  recurse(recurse);
  if (overflow)
    out.clear();
  return out;
}

/// Whether some per-actor order of the graph's operations runs one
/// execution to completion; nullopt when there are too many to try.
std::optional<bool> anyOrderRuns(const ir::Graph& graph) {
  std::vector<Channel> channels;
  auto channelOf = assignChannels(graph, channels);
  OperationGraph g = buildOperationGraph(graph, channels, channelOf, bindOrder(graph));
  std::vector<std::vector<std::vector<unsigned>>> choices;
  std::size_t combinations = 1;
  for (const std::vector<unsigned>& ops : g.actorOps) {
    choices.push_back(linearExtensions(g, ops, 1000));
    if (choices.back().empty())
      return std::nullopt;
    combinations *= choices.back().size();
    if (combinations > 20000)
      return std::nullopt;
  }
  std::vector<std::size_t> pick(choices.size(), 0);
  while (true) {
    std::vector<std::vector<unsigned>> perActor;
    for (std::size_t a = 0; a < choices.size(); ++a)
      perActor.push_back(choices[a][pick[a]]);
    if (simulate(graph, scheduleFromOrder(graph, channels, channelOf, g, perActor), {1, 1})
            .completed)
      return true;
    std::size_t a = 0;
    while (a < pick.size() && ++pick[a] == choices[a].size())
      pick[a++] = 0;
    if (a == pick.size())
      return false;
  }
}

std::string describe(const ir::Graph& graph) {
  std::string text;
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    const ir::Task& task = graph.tasks[t];
    text +=
        "  t" + std::to_string(t) + " on a" + std::to_string(task.actor) + " " + task.method + "(";
    for (const ir::Arg& arg : task.args)
      if (arg.kind == ir::Arg::Kind::Value)
        text += "v" + std::to_string(arg.value) + " ";
    text += ") ->";
    for (unsigned r : task.results)
      text += " v" + std::to_string(r) +
              (graph.values[r].transport == ir::Transport::Nccl ? "(nccl)" : "");
    if (task.collective >= 0)
      text += " [collective " + std::to_string(task.collective) + "]";
    text += "\n";
  }
  return text;
}

TEST(ScheduleProperty, EmittedSchedulesRunAndRejectedGraphsHaveNoOrder) {
  unsigned emitted = 0, rejectedCycles = 0, rejectedSelfSends = 0, bruteForced = 0,
           bruteForcedRuns = 0;
  for (unsigned seed = 1; seed <= 3000; ++seed) {
    std::mt19937 rng(seed);
    bool small = seed % 3 != 0;
    Generated generated = randomGraph(rng, small ? 3 : 6, small ? 6 : 30);
    const ir::Graph& graph = generated.graph;
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + describe(graph));
    ASSERT_TRUE(ir::validate(graph).empty());

    ScheduleOptions options;
    options.overlapGpuCommunication = seed % 2 == 0;
    options.maxInFlight = 1 + seed % 4;
    if (seed % 7 == 0)
      options.order = ScheduleOptions::Order::Cost;
    auto result = buildSchedule(graph, options);

    if (auto* schedule = std::get_if<Schedule>(&result)) {
      ++emitted;
      for (SimulationOptions run : {SimulationOptions{4, 1}, SimulationOptions{6, 3}})
        EXPECT_TRUE(simulate(graph, *schedule, run).completed);
      // Every task computes exactly once, after its READs, before its
      // WRITEs.
      std::vector<unsigned> computes(graph.tasks.size(), 0);
      for (const ActorSchedule& actor : schedule->actors) {
        std::vector<bool> computed(graph.tasks.size(), false);
        for (const Operation& op : actor.operations) {
          EXPECT_EQ(graph.tasks[op.task].actor, actor.actor);
          if (op.kind == Operation::Kind::Compute) {
            ++computes[op.task];
            computed[op.task] = true;
          } else {
            EXPECT_EQ(computed[op.task], op.kind == Operation::Kind::Write);
          }
        }
      }
      for (unsigned count : computes)
        EXPECT_EQ(count, 1u);
      // The brute force finds an order too (ours is one of those it tries),
      // or it could not tell rejected graphs apart.
      if (small && options.order == ScheduleOptions::Order::Bind && seed % 10 == 1)
        if (std::optional<bool> runs = anyOrderRuns(graph)) {
          ++bruteForcedRuns;
          EXPECT_TRUE(*runs);
        }
      continue;
    }

    const auto& diagnostics = std::get<std::vector<ir::Diagnostic>>(result);
    ASSERT_FALSE(diagnostics.empty());
    if (diagnostics[0].message.rfind("nccl edge within actor", 0) == 0) {
      // A send to oneself: an NCCL value read by a plain task of its own
      // actor, which the channel model cannot even express.
      ++rejectedSelfSends;
      EXPECT_FALSE(findSelfSends(graph).empty());
      continue;
    }
    ++rejectedCycles;
    EXPECT_NE(diagnostics[0].message.find("has no deadlock-free schedule"), std::string::npos);
    EXPECT_TRUE(generated.apartRanks); // nothing else can form a cycle
    if (std::optional<bool> runs = anyOrderRuns(graph)) {
      ++bruteForced;
      EXPECT_FALSE(*runs);
    }
  }
  std::cout << "[ stats    ] " << emitted << " emitted, " << rejectedCycles
            << " rejected for a cycle (" << bruteForced << " checked by brute force), "
            << rejectedSelfSends << " rejected for a send to their own actor; " << bruteForcedRuns
            << " emitted ones also found by brute force\n";
  EXPECT_GE(emitted, 1000u);
  EXPECT_GE(bruteForced, 20u);
  EXPECT_GE(bruteForcedRuns, 100u);
}

} // namespace
} // namespace cg::schedule
