//===- global_order_test.cpp - Tests for the global order and its proof ---===//
//
// Exact orders for hand-built graphs, NCCL and collectives included, and the
// diagnostics for graphs that have no deadlock-free order.
//
//===----------------------------------------------------------------------===//

#include "schedule/GlobalOrder.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"
#include "schedule/Simulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg::schedule {
namespace {

using test::actorNamed;
using test::GraphBuilder;
using test::opsOf;
using test::rejectionOf;
using test::scheduleOf;
using Strings = std::vector<std::string>;

constexpr ir::Transport kNccl = ir::Transport::Nccl;

/// Ray Compiled Graph's 1F1B example: two workers, two microbatches, NCCL
/// between the workers, bound as
///   w1: read_input, forward(b1), forward(b2), backward(b1), backward(b2)
///   w2: forward(b1), backward(b1), forward(b2), backward(b2).
ir::Graph oneFOneB() {
  GraphBuilder g("one_f_one_b", 10);
  unsigned x = g.input("int");
  unsigned w1 = g.actor("w1", 11, "::Worker");
  unsigned w2 = g.actor("w2", 12, "::Worker");
  unsigned in = g.bind(w1, "read_input", {x}, 13, "Tensor");
  unsigned f1 = g.bind(w1, "forward", {in}, 14, "Tensor");
  unsigned f2 = g.bind(w1, "forward", {in}, 15, "Tensor");
  g.transport(f1, kNccl).transport(f2, kNccl);
  unsigned b1 = g.bind(w2, "backward", {g.bind(w2, "forward", {f1}, 16, "Tensor")}, 17, "Tensor");
  g.transport(b1, kNccl);
  unsigned f2w2 = g.bind(w2, "forward", {f2}, 18, "Tensor");
  g.output(g.bind(w1, "backward", {b1}, 19, "Tensor"));
  unsigned b2 = g.bind(w2, "backward", {f2w2}, 20, "Tensor");
  g.transport(b2, kNccl);
  g.output(g.bind(w1, "backward", {b2}, 21, "Tensor"));
  return g.build();
}

TEST(GlobalOrder, OneFOneBReceivesTheSecondMicrobatchBeforeSendingTheFirstGradient) {
  ir::Graph graph = oneFOneB();
  Schedule s = scheduleOf(graph);

  // Channels: c0 input, c1 w1.forward#1, c2 w1.forward#2 (nccl), c3
  // w2.backward#1 (nccl), c4 w1.backward#1 (output), c5 w2.backward#2
  // (nccl), c6 w1.backward#2 (output).
  EXPECT_EQ(opsOf(graph, s, actorNamed(graph, "w1")),
            (Strings{"READ w1.read_input c0", "COMPUTE w1.read_input", "COMPUTE w1.forward#1",
                     "WRITE w1.forward#1 c1", "COMPUTE w1.forward#2", "WRITE w1.forward#2 c2",
                     "READ w1.backward#1 c3", "COMPUTE w1.backward#1", "WRITE w1.backward#1 c4",
                     "READ w1.backward#2 c5", "COMPUTE w1.backward#2", "WRITE w1.backward#2 c6"}));
  // w1 sends both forwards before it receives anything, so w2 must take
  // the second forward (READ c2) before it sends the first gradient (WRITE
  // c3), although it binds forward(b2) after backward(b1).
  EXPECT_EQ(opsOf(graph, s, actorNamed(graph, "w2")),
            (Strings{"READ w2.forward#1 c1", "COMPUTE w2.forward#1", "COMPUTE w2.backward#1",
                     "READ w2.forward#2 c2", "WRITE w2.backward#1 c3", "COMPUTE w2.forward#2",
                     "COMPUTE w2.backward#2", "WRITE w2.backward#2 c5"}));
}

TEST(GlobalOrder, OneFOneBInBindOrderPerTaskWouldDeadlockAndTheSimulatorSaysWhere) {
  ir::Graph graph = oneFOneB();
  Schedule s = scheduleOf(graph);
  // The naive schedule: w2 runs each task's READ, COMPUTE, WRITE together.
  std::vector<Operation>& w2 = s.actors[actorNamed(graph, "w2")].operations;
  std::swap(w2[3], w2[4]); // WRITE c3 before READ c2
  SimulationResult result = simulate(graph, s, {1, 1});
  EXPECT_FALSE(result.completed);
  EXPECT_EQ(result.blocked, (Strings{"actor 'w1' (execution 0) waits at operation 6, group g1",
                                     "actor 'w2' (execution 0) waits at operation 4, group g2",
                                     "the driver waits at READ c4"}));
}

TEST(GlobalOrder, StepsHoldEachSynchronousGroupOnceAndEveryOperationOnce) {
  ir::Graph graph = oneFOneB();
  Schedule s = scheduleOf(graph);
  std::vector<std::vector<bool>> seen(s.actors.size());
  for (const ActorSchedule& actor : s.actors)
    seen[actor.actor].assign(actor.operations.size(), false);
  std::vector<unsigned> lastIndex(s.actors.size(), 0);
  std::vector<bool> started(s.actors.size(), false);
  for (const std::vector<OpRef>& step : s.steps) {
    if (step.size() > 1) {
      int group = s.actors[step[0].actor].operations[step[0].index].group;
      ASSERT_GE(group, 0);
      EXPECT_EQ(step, s.groups[static_cast<unsigned>(group)].members);
    }
    for (const OpRef& ref : step) {
      EXPECT_FALSE(seen[ref.actor][ref.index]);
      seen[ref.actor][ref.index] = true;
      // Projected onto an actor, the steps give its list in order.
      if (started[ref.actor])
        EXPECT_EQ(ref.index, lastIndex[ref.actor] + 1);
      else
        EXPECT_EQ(ref.index, 0u);
      started[ref.actor] = true;
      lastIndex[ref.actor] = ref.index;
    }
  }
  for (const std::vector<bool>& actor : seen)
    for (bool op : actor)
      EXPECT_TRUE(op);
}

TEST(GlobalOrder, ThreeSendersToOneReceiverReceiveInBindOrderWithoutOverlap) {
  // The seed's overlap example without overlap: each receive just before
  // its compute.
  GraphBuilder g("overlap", 10);
  unsigned x = g.input("int");
  unsigned senders[3] = {g.actor("s0", 11, "::TorchTensorWorker"),
                         g.actor("s1", 12, "::TorchTensorWorker"),
                         g.actor("s2", 13, "::TorchTensorWorker")};
  unsigned r = g.actor("r", 14, "::TorchTensorWorker");
  unsigned sent[3];
  for (unsigned i = 0; i < 3; ++i) {
    sent[i] = g.bind(senders[i], "send", {x}, 15, "Tensor");
    g.transport(sent[i], kNccl);
  }
  for (unsigned i = 0; i < 3; ++i)
    g.output(g.bind(r, "recv_and_matmul", {sent[i]}, 16, "Result"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph);
  EXPECT_EQ(opsOf(graph, s, r),
            (Strings{"READ r.recv_and_matmul#1 c1", "COMPUTE r.recv_and_matmul#1",
                     "WRITE r.recv_and_matmul#1 c4", "READ r.recv_and_matmul#2 c2",
                     "COMPUTE r.recv_and_matmul#2", "WRITE r.recv_and_matmul#2 c5",
                     "READ r.recv_and_matmul#3 c3", "COMPUTE r.recv_and_matmul#3",
                     "WRITE r.recv_and_matmul#3 c6"}));
  for (unsigned i = 0; i < 3; ++i)
    EXPECT_EQ(opsOf(graph, s, senders[i]),
              (Strings{"READ s" + std::to_string(i) + ".send c0",
                       "COMPUTE s" + std::to_string(i) + ".send",
                       "WRITE s" + std::to_string(i) + ".send c" + std::to_string(i + 1)}));
}

TEST(GlobalOrder, TwoActorsSendingToEachOtherFirstNeedNoCycle) {
  // a and b each send a tensor to the other, then each consumes what it got.
  GraphBuilder g("exchange", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11, "::Worker");
  unsigned b = g.actor("b", 12, "::Worker");
  unsigned fromA = g.bind(a, "make", {x}, 13, "Tensor");
  unsigned fromB = g.bind(b, "make", {x}, 14, "Tensor");
  g.transport(fromA, kNccl).transport(fromB, kNccl);
  g.output(g.bind(b, "use", {fromA}, 15, "Tensor"));
  g.output(g.bind(a, "use", {fromB}, 16, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph);
  EXPECT_EQ(opsOf(graph, s, a), (Strings{"READ a.make c0", "COMPUTE a.make", "WRITE a.make c1",
                                         "READ a.use c2", "COMPUTE a.use", "WRITE a.use c4"}));
  // b's send pairs with a's receive, which a reaches only after its own
  // send: b receives first (rule 2), then sends.
  EXPECT_EQ(opsOf(graph, s, b), (Strings{"READ b.make c0", "COMPUTE b.make", "READ b.use c1",
                                         "WRITE b.make c2", "COMPUTE b.use", "WRITE b.use c3"}));
}

TEST(GlobalOrder, CollectivesRunInOneOrderOnEveryActor) {
  ir::Graph graph = test::gpuGraph();
  Schedule s = scheduleOf(graph);
  EXPECT_EQ(opsOf(graph, s, 0),
            (Strings{"READ w0.split c0", "COMPUTE w0.split", "WRITE w0.split c1", "COMPUTE w0.grad",
                     "COMPUTE w0.allreduce", "COMPUTE w0.allgather", "WRITE w0.allgather c3"}));
  EXPECT_EQ(opsOf(graph, s, 1),
            (Strings{"READ w1.grad c1", "COMPUTE w1.grad", "COMPUTE w1.allreduce",
                     "COMPUTE w1.allgather", "WRITE w1.allgather c2"}));
  EXPECT_EQ(s.groups, (std::vector<SyncGroup>{
                          {SyncGroup::Kind::Nccl, 1, {{0, 2}, {1, 0}}},
                          {SyncGroup::Kind::Collective, 0, {{0, 4}, {1, 2}}},
                          {SyncGroup::Kind::Collective, 1, {{1, 3}, {0, 5}}},
                      }));
}

/// Two collectives over actors a and b, bound so that a joins X before Y
/// and b joins Y before X: only possible in hand-written IR (the builder
/// binds all ranks of a collective at once).
ir::Graph collectivesInOppositeOrders() {
  GraphBuilder g("opposite", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11, "::Worker");
  unsigned b = g.actor("b", 12, "::Worker");
  unsigned va = g.bind(a, "make", {x}, 13, "Tensor");
  unsigned vb = g.bind(b, "make", {x}, 14, "Tensor");
  unsigned xa = g.bind(a, "allreduce", {va}, 15, "Tensor"); // X, rank 0
  unsigned yb = g.bind(b, "allreduce", {vb}, 16, "Tensor"); // Y, rank 0
  unsigned ya = g.bind(a, "allreduce", {xa}, 17, "Tensor"); // Y, rank 1
  unsigned xb = g.bind(b, "allreduce", {yb}, 18, "Tensor"); // X, rank 1
  g.output(ya).output(xb);
  ir::Graph graph = g.build();
  auto collective = [&](std::vector<unsigned> values, unsigned line) {
    ir::Collective c;
    c.kind = ir::Collective::Kind::AllReduce;
    c.reduceOp = "sum";
    c.loc = test::at(line);
    for (unsigned v : values) {
      unsigned t = graph.values[v].producer.index;
      graph.tasks[t].collective = static_cast<int>(graph.collectives.size());
      c.tasks.push_back(t);
    }
    graph.collectives.push_back(c);
  };
  collective({xa, xb}, 15);
  collective({yb, ya}, 16);
  return graph;
}

TEST(GlobalOrder, CollectivesJoinedInOppositeOrdersAreACycleNamedByTheirBinds) {
  EXPECT_EQ(rejectionOf(collectivesInOppositeOrders()),
            "examples/echo/echo.cg.cpp:17:3: error: graph 'opposite' has no deadlock-free "
            "schedule: its blocking operations wait for each other in a cycle\n"
            "examples/echo/echo.cg.cpp:17:3: note: actor 'a' runs 'a.allreduce#2' only after "
            "'a.allreduce#1'\n"
            "examples/echo/echo.cg.cpp:16:3: note: rank 0 of allreduce #1 on actor 'b' "
            "completes only together with rank 1 on actor 'a'\n"
            "examples/echo/echo.cg.cpp:18:3: note: actor 'b' runs 'b.allreduce#2' only after "
            "'b.allreduce#1'\n"
            "examples/echo/echo.cg.cpp:15:3: note: rank 0 of allreduce #0 on actor 'a' "
            "completes only together with rank 1 on actor 'b'\n");
}

TEST(GlobalOrder, ARankWaitingForWorkAfterItsPeerRankIsACycle) {
  // allreduce rank 0 on a (line 14), then a sends to b over shm (15, 16),
  // and b's rank 1 (17) waits for that.
  GraphBuilder g("interleaved", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11, "::Worker");
  unsigned b = g.actor("b", 12, "::Worker");
  unsigned va = g.bind(a, "make", {x}, 13, "Tensor");
  unsigned ra = g.bind(a, "allreduce", {va}, 14, "Tensor");
  unsigned sent = g.bind(a, "after", {ra}, 15, "Tensor");
  unsigned vb = g.bind(b, "use", {sent}, 16, "Tensor");
  unsigned rb = g.bind(b, "allreduce", {vb}, 17, "Tensor");
  g.output(rb);
  ir::Graph graph = g.build();
  ir::Collective c{ir::Collective::Kind::AllReduce,
                   "sum",
                   {graph.values[ra].producer.index, graph.values[rb].producer.index},
                   test::at(14)};
  graph.tasks[c.tasks[0]].collective = graph.tasks[c.tasks[1]].collective = 0;
  graph.collectives.push_back(c);
  EXPECT_EQ(rejectionOf(graph),
            "examples/echo/echo.cg.cpp:15:3: error: graph 'interleaved' has no deadlock-free "
            "schedule: its blocking operations wait for each other in a cycle\n"
            "examples/echo/echo.cg.cpp:15:3: note: actor 'a' runs 'a.after' only after "
            "'a.allreduce'\n"
            "examples/echo/echo.cg.cpp:16:3: note: 'b.use' waits for the result of 'a.after' "
            "(shm)\n"
            "examples/echo/echo.cg.cpp:17:3: note: actor 'b' runs 'b.allreduce' only after "
            "'b.use'\n"
            "examples/echo/echo.cg.cpp:14:3: note: rank 0 of allreduce #0 on actor 'a' "
            "completes only together with rank 1 on actor 'b'\n");
}

TEST(GlobalOrder, ACycleThroughAnNcclSendSaysWhoWaitsForWhom) {
  // As above, with a.after sent to b over nccl.
  GraphBuilder g("interleaved_nccl", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11, "::Worker");
  unsigned b = g.actor("b", 12, "::Worker");
  unsigned va = g.bind(a, "make", {x}, 13, "Tensor");
  unsigned ra = g.bind(a, "allreduce", {va}, 14, "Tensor");
  unsigned sent = g.bind(a, "after", {ra}, 15, "Tensor");
  g.transport(sent, kNccl);
  unsigned vb = g.bind(b, "use", {sent}, 16, "Tensor");
  unsigned rb = g.bind(b, "allreduce", {vb}, 17, "Tensor");
  g.output(rb);
  ir::Graph graph = g.build();
  ir::Collective c{ir::Collective::Kind::AllReduce,
                   "sum",
                   {graph.values[ra].producer.index, graph.values[rb].producer.index},
                   test::at(14)};
  graph.tasks[c.tasks[0]].collective = graph.tasks[c.tasks[1]].collective = 0;
  graph.collectives.push_back(c);
  EXPECT_EQ(rejectionOf(graph),
            "examples/echo/echo.cg.cpp:15:3: error: graph 'interleaved_nccl' has no "
            "deadlock-free schedule: its blocking operations wait for each other in a cycle\n"
            "examples/echo/echo.cg.cpp:15:3: note: actor 'a' runs 'a.after' only after "
            "'a.allreduce'\n"
            "examples/echo/echo.cg.cpp:16:3: note: 'b.use' on actor 'b' receives over nccl "
            "only when 'a.after' on actor 'a' sends\n"
            "examples/echo/echo.cg.cpp:17:3: note: actor 'b' runs 'b.allreduce' only after "
            "'b.use'\n"
            "examples/echo/echo.cg.cpp:14:3: note: rank 0 of allreduce #0 on actor 'a' "
            "completes only together with rank 1 on actor 'b'\n");
}

TEST(GlobalOrder, AnNcclEdgeWithinOneActorIsRejectedNamingBothBinds) {
  GraphBuilder g("self", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11, "::Worker");
  unsigned made = g.bind(a, "make", {x}, 12, "Tensor");
  g.transport(made, kNccl);
  g.output(g.bind(a, "use", {made}, 13, "Tensor"));
  EXPECT_EQ(rejectionOf(g.build()),
            "examples/echo/echo.cg.cpp:13:3: error: nccl edge within actor 'a': 'a.use' "
            "receives the result of 'a.make' from its own actor, so the send would wait for "
            "a receive that 'a' reaches only after it (a cycle)\n"
            "examples/echo/echo.cg.cpp:12:3: note: 'a.make' sends its result over nccl here; "
            "remove with_tensor_transport(cg::transport::nccl) or bind 'a.use' on another "
            "actor\n");
}

TEST(GlobalOrder, ACollectiveReadingItsRanksValueInPlaceIsNoSelfSend) {
  // gpuGraph's gradients are nccl values reduced by their own actors.
  ir::Graph graph = test::gpuGraph();
  EXPECT_TRUE(findSelfSends(graph).empty());
}

TEST(GlobalOrder, TheSameGraphAlwaysGivesTheSameSchedule) {
  ir::Graph graph = oneFOneB();
  EXPECT_EQ(renderScheduleText(graph, scheduleOf(graph)),
            renderScheduleText(graph, scheduleOf(graph)));
  EXPECT_EQ(scheduleOf(graph), scheduleOf(graph));
}

} // namespace
} // namespace cg::schedule
