//===- simulator_test.cpp - Tests for running schedules in simulation -----===//
//
// Times and waits on small schedules whose behaviour can be worked out by
// hand: pipelining with K executions in flight, rendezvous, collectives as
// barriers, and a deadlock reported with who waits for what.
//
//===----------------------------------------------------------------------===//

#include "schedule/Simulator.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg::schedule {
namespace {

using test::GraphBuilder;
using test::scheduleOf;

TEST(Simulator, OneExecutionOfAChainTakesTheSumOfItsCosts) {
  GraphBuilder g("chain", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  unsigned vb = g.bind(b, "echo", {va}, 14);
  g.cost(va, 2).cost(vb, 3).output(vb);
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph);
  SimulationResult result = simulate(graph, s, {1, 1});
  ASSERT_TRUE(result.completed);
  EXPECT_EQ(result.makespan, 5);
  // b's READ waits for a's WRITE at 2, then computes until 5.
  EXPECT_EQ(result.start[1], (std::vector<double>{2, 2, 5}));
  EXPECT_EQ(result.finish[1], (std::vector<double>{2, 5, 5}));
  EXPECT_EQ(s.simulation.makespan, 5);
  EXPECT_EQ(s.simulation.busiest, 3);
}

TEST(Simulator, KExecutionsInFlightPipelineAndOneInFlightDoesNot) {
  ir::Graph graph = test::chainGraph(); // costs unknown: 1 each
  Schedule s = scheduleOf(graph);
  // Ten executions: with ten in flight, b trails a by one step.
  EXPECT_EQ(simulate(graph, s, {10, 10, true}).makespan, 11);
  // With one, the driver waits for each output before the next input.
  EXPECT_EQ(simulate(graph, s, {10, 1, true}).makespan, 20);
  // Execution 0 alone takes 2 either way.
  EXPECT_EQ(simulate(graph, s, {10, 10}).firstExecution, 2);
  EXPECT_EQ(simulate(graph, s, {10, 1}).firstExecution, 2);
}

TEST(Simulator, ANcclSendCompletesWhenItsReceiverArrives) {
  GraphBuilder g("rendezvous", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned sent = g.bind(a, "send", {x}, 13, "Tensor");
  g.transport(sent, ir::Transport::Nccl);
  unsigned busy = g.bind(b, "busy", {x}, 14, "Tensor");
  g.cost(busy, 4);
  g.output(g.bind(b, "use", {busy, sent}, 15, "Tensor"));
  g.output(g.bind(a, "after", {x}, 16, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph);
  SimulationResult result = simulate(graph, s, {1, 1});
  ASSERT_TRUE(result.completed);
  // a reaches its WRITE (its third operation) at 1 but the send happens at
  // 4, when b reaches its receive after `busy`; a's `after` runs 4..5.
  EXPECT_EQ(test::opsOf(graph, s, 0)[2], "WRITE a.send c1");
  EXPECT_EQ(result.finish[0][1], 1);
  EXPECT_EQ(result.start[0][2], 4);
  EXPECT_EQ(result.start[0][3], 4);
  EXPECT_EQ(result.makespan, 5);
}

TEST(Simulator, CollectiveRanksStartTogetherAndTakeTheLongestCost) {
  ir::Graph graph = test::gpuGraph();
  Schedule s = scheduleOf(graph);
  SimulationResult result = simulate(graph, s, {1, 1});
  ASSERT_TRUE(result.completed);
  // w0: split 2.5, grad 1; w1: grad 12 after receiving at 2.5. The
  // allreduce starts when w1 is done (14.5) on both actors.
  EXPECT_EQ(result.start[0][4], 14.5);
  EXPECT_EQ(result.start[1][2], 14.5);
  EXPECT_EQ(result.finish[0][4], 15.5);
}

TEST(Simulator, ADeadlockSaysWhoWaitsForWhat) {
  GraphBuilder g("crossed", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "make", {x}, 13, "Tensor");
  unsigned vb = g.bind(b, "make", {x}, 14, "Tensor");
  g.output(g.bind(a, "use", {vb}, 15, "Tensor"));
  g.output(g.bind(b, "use", {va}, 16, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph);
  ASSERT_TRUE(simulate(graph, s, {3, 2}).completed);
  // Each actor reads the other's value before writing its own.
  for (ActorSchedule& actor : s.actors) {
    std::vector<Operation>& ops = actor.operations;
    ASSERT_EQ(test::opsOf(graph, s, actor.actor)[2].substr(0, 5), "WRITE");
    std::swap(ops[2], ops[3]);
  }
  SimulationResult result = simulate(graph, s, {3, 2});
  EXPECT_FALSE(result.completed);
  EXPECT_EQ(result.blocked,
            (std::vector<std::string>{"actor 'a' (execution 0) waits at operation 3, READ c2",
                                      "actor 'b' (execution 0) waits at operation 3, READ c1",
                                      "the driver waits at READ c3"}));
}

TEST(Simulator, UnknownCostsCountOne) {
  ir::Task task;
  EXPECT_EQ(costOf(task), 1);
  task.cost = 0.25;
  EXPECT_EQ(costOf(task), 0.25);
}

} // namespace
} // namespace cg::schedule
