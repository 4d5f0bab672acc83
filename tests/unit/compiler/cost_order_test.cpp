//===- cost_order_test.cpp - Tests for cost-model ordering ----------------===//
//
// The acceptance case: a pipeline-parallel training step with p = 4 stages
// and m = 8 microbatches, bound as "all forwards, then all backwards", is
// scheduled with a bubble no worse than 1F1B's (p - 1) / m and at most p
// microbatches' activations in flight on any stage.
//
//===----------------------------------------------------------------------===//

#include "schedule/CostOrder.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"
#include "schedule/Simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cg::schedule {
namespace {

using test::GraphBuilder;
using test::opsOf;
using test::scheduleOf;
using Strings = std::vector<std::string>;

constexpr double kForward = 1.0, kBackward = 2.0;

/// Stage s runs forward(mb) on what stage s-1 sent, the last stage turns its
/// forward into a gradient, and backward(mb) runs from the last stage back
/// to stage 0, whose backward results are the outputs. Bound plainly: every
/// forward of every microbatch, then every backward.
ir::Graph pipeline(unsigned stages, unsigned microbatches, ir::Transport transport) {
  GraphBuilder g("train_step", 10);
  unsigned batch = g.input("Batch");
  std::vector<unsigned> actors;
  for (unsigned s = 0; s < stages; ++s)
    actors.push_back(g.actor("stage" + std::to_string(s), 11 + s, "::Stage"));
  std::vector<unsigned> last(microbatches);
  for (unsigned mb = 0; mb < microbatches; ++mb) {
    unsigned v = batch;
    for (unsigned s = 0; s < stages; ++s) {
      std::vector<test::ArgSpec> args{v};
      if (s == 0)
        args.push_back(test::constant("int", std::to_string(mb)));
      v = g.bind(actors[s], "forward", args, 20, "Tensor");
      g.cost(v, kForward);
      if (s + 1 < stages)
        g.transport(v, transport);
    }
    last[mb] = v;
  }
  for (unsigned mb = 0; mb < microbatches; ++mb) {
    unsigned v = last[mb];
    for (unsigned s = stages; s-- > 0;) {
      v = g.bind(actors[s], "backward", {v}, 30, "Tensor");
      g.cost(v, kBackward);
      if (s > 0)
        g.transport(v, transport);
    }
    g.output(v);
  }
  return g.build();
}

ScheduleOptions byCost() {
  ScheduleOptions options;
  options.order = ScheduleOptions::Order::Cost;
  return options;
}

/// Per stage: the most microbatches whose forward ran and backward has not.
unsigned activationsInFlight(const ir::Graph& graph, const Schedule& s) {
  unsigned peak = 0;
  for (const ActorSchedule& actor : s.actors) {
    int open = 0;
    for (const Operation& op : actor.operations) {
      if (op.kind != Operation::Kind::Compute)
        continue;
      open += graph.tasks[op.task].method == "forward" ? 1 : -1;
      peak = std::max(peak, static_cast<unsigned>(open));
    }
  }
  return peak;
}

/// (makespan - ideal) / ideal, ideal being one stage's work alone.
double bubbleFraction(const Schedule& s, unsigned microbatches) {
  double ideal = microbatches * (kForward + kBackward);
  return (s.simulation.makespan - ideal) / ideal;
}

TEST(CostOrder, PipelineOfFourStagesAndEightMicrobatchesGets1F1BOverShm) {
  constexpr unsigned p = 4, m = 8;
  ir::Graph graph = pipeline(p, m, ir::Transport::Shm);

  Schedule plain = scheduleOf(graph);
  EXPECT_EQ(activationsInFlight(graph, plain), m); // GPipe: all of them

  Schedule s = scheduleOf(graph, byCost());
  EXPECT_LE(bubbleFraction(s, m), (p - 1.0) / m);
  EXPECT_LE(activationsInFlight(graph, s), p);
  EXPECT_EQ(s.simulation.peakInFlight, activationsInFlight(graph, s) - 0u);
  // Re-simulated from scratch, the same makespan.
  EXPECT_EQ(simulate(graph, s, {1, 1}).makespan, s.simulation.makespan);
}

TEST(CostOrder, PipelineOfFourStagesAndEightMicrobatchesGets1F1BOverNccl) {
  constexpr unsigned p = 4, m = 8;
  ir::Graph graph = pipeline(p, m, ir::Transport::Nccl);
  Schedule s = scheduleOf(graph, byCost());
  EXPECT_LE(bubbleFraction(s, m), (p - 1.0) / m);
  EXPECT_LE(activationsInFlight(graph, s), p);
}

TEST(CostOrder, TheFirstStageWarmsUpThenAlternatesForwardAndBackward) {
  ir::Graph graph = pipeline(4, 8, ir::Transport::Shm);
  Schedule s = scheduleOf(graph, byCost());
  std::string computes;
  for (const Operation& op : s.actors[0].operations)
    if (op.kind == Operation::Kind::Compute)
      computes += graph.tasks[op.task].method == "forward" ? 'F' : 'B';
  EXPECT_EQ(computes, "FFFFBFBFBFBFBBBB");
}

TEST(CostOrder, WithoutRoundTripsTheBindOrderStays) {
  // A chain has nothing to gain: the cost order is the bind order.
  ir::Graph graph = test::chainGraph();
  EXPECT_EQ(scheduleOf(graph, byCost()).actors, scheduleOf(graph).actors);
}

TEST(CostOrder, RoundTripsAreTasksWhoseResultComesBackToTheirActor) {
  ir::Graph graph = pipeline(2, 1, ir::Transport::Shm);
  // Tasks: 0 stage0.forward, 1 stage1.forward, 2 stage1.backward,
  // 3 stage0.backward.
  RoundTrips trips(graph);
  EXPECT_TRUE(trips.opens(0));
  EXPECT_FALSE(trips.opens(1)); // its result stays on stage1
  EXPECT_EQ(trips.closes(3), (std::vector<unsigned>{0}));
  EXPECT_EQ(trips.peak({{0, 3}, {1, 2}}), 1u);
}

TEST(CostOrder, TheTextSaysHowTheScheduleWasBuiltAndWhatItKeepsInFlight) {
  ir::Graph graph = pipeline(2, 2, ir::Transport::Shm);
  std::string text = renderScheduleText(graph, scheduleOf(graph, byCost()));
  EXPECT_NE(text.find("# built with --schedule=cost\n"), std::string::npos) << text;
  EXPECT_NE(text.find(", at most 2 round trips in flight per actor\n"), std::string::npos) << text;
}

} // namespace
} // namespace cg::schedule
