//===- operation_graph_test.cpp - Tests for the operation graph -----------===//
//
// The operations each task becomes, the three kinds of edges, and the
// synchronous groups, spelled out for small graphs.
//
//===----------------------------------------------------------------------===//

#include "schedule/OperationGraph.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace cg::schedule {
namespace {

using test::GraphBuilder;

/// "R0", "C1", "W2": kind and task of each op; the edges as "R0->C0 task".
std::vector<std::string> opNames(const OperationGraph& g) {
  std::vector<std::string> names;
  for (const OpNode& op : g.ops)
    names.push_back(std::string(1, "RCW"[static_cast<int>(op.kind)]) + std::to_string(op.task));
  return names;
}

std::vector<std::string> edgeNames(const OperationGraph& g) {
  static const char* const kKinds[] = {"task", "program", "data", "sequence"};
  std::vector<std::string> names = opNames(g), edges;
  for (const OpEdge& e : g.edges)
    edges.push_back(names[e.from] + "->" + names[e.to] + " " + kKinds[static_cast<int>(e.kind)]);
  return edges;
}

OperationGraph operationGraphOf(const ir::Graph& graph) {
  std::vector<Channel> channels;
  auto channelOf = assignChannels(graph, channels);
  return buildOperationGraph(graph, channels, channelOf, bindOrder(graph));
}

TEST(OperationGraph, EachTaskReadsComputesAndWritesWithDataEdgesBetweenActors) {
  OperationGraph g = operationGraphOf(test::chainGraph());
  EXPECT_EQ(opNames(g), (std::vector<std::string>{"R0", "C0", "W0", "R1", "C1", "W1"}));
  EXPECT_EQ(edgeNames(g), (std::vector<std::string>{"R0->C0 task", "C0->W0 task", "R1->C1 task",
                                                    "C1->W1 task", "W0->R1 data"}));
  EXPECT_TRUE(g.groups.empty());
  EXPECT_EQ(g.actorOps, (std::vector<std::vector<unsigned>>{{0, 1, 2}, {3, 4, 5}}));
}

TEST(OperationGraph, ComputesOfOneActorFollowProgramOrderAndLocalValuesNeedNoOperation) {
  OperationGraph g = operationGraphOf(test::sameActorGraph());
  EXPECT_EQ(opNames(g), (std::vector<std::string>{"R0", "C0", "C1", "W1"}));
  EXPECT_EQ(edgeNames(g),
            (std::vector<std::string>{"R0->C0 task", "C0->C1 program", "C1->W1 task"}));
}

TEST(OperationGraph, EveryNcclChannelIsItsOwnOperationAndGroup) {
  // a.split returns (x, y): x over nccl to b, y over shm to b; b reads both.
  GraphBuilder g("mixed", 10);
  unsigned in = g.input("int");
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  std::vector<unsigned> parts = g.bindTuple(a, "split", {in}, 13, {"Tensor", "Tensor"});
  g.transport(parts[0], ir::Transport::Nccl);
  g.output(g.bind(b, "join", {parts[0], parts[1]}, 14));
  OperationGraph og = operationGraphOf(g.build());
  // a: READ input, COMPUTE, WRITE c2 (shm), WRITE c1 (nccl); b: READ c2
  // (shm), READ c1 (nccl), COMPUTE, WRITE.
  EXPECT_EQ(opNames(og),
            (std::vector<std::string>{"R0", "C0", "W0", "W0", "R1", "R1", "C1", "W1"}));
  EXPECT_EQ(og.ops[2].channels, (std::vector<unsigned>{2}));
  EXPECT_EQ(og.ops[3].channels, (std::vector<unsigned>{1}));
  EXPECT_EQ(og.ops[4].channels, (std::vector<unsigned>{2}));
  EXPECT_EQ(og.ops[5].channels, (std::vector<unsigned>{1}));
  ASSERT_EQ(og.groups.size(), 1u);
  EXPECT_EQ(og.groups[0].kind, SyncGroup::Kind::Nccl);
  EXPECT_EQ(og.groups[0].source, 1u);
  EXPECT_EQ(og.groups[0].members, (std::vector<unsigned>{3, 5}));
  EXPECT_EQ(og.ops[3].group, 0);
  EXPECT_EQ(og.ops[5].group, 0);
  EXPECT_EQ(og.ops[2].group, -1);
}

TEST(OperationGraph, AllRanksOfACollectiveAreOneGroupInRankOrder) {
  OperationGraph g = operationGraphOf(test::gpuGraph());
  ASSERT_EQ(g.groups.size(), 3u);
  std::vector<std::string> names = opNames(g);
  EXPECT_EQ(g.groups[1].kind, SyncGroup::Kind::Collective);
  EXPECT_EQ(names[g.groups[1].members[0]], "C3");
  EXPECT_EQ(names[g.groups[1].members[1]], "C4");
  // allgather #1 has rank 0 on w1 (task 5) and rank 1 on w0 (task 6).
  EXPECT_EQ(names[g.groups[2].members[0]], "C5");
  EXPECT_EQ(names[g.groups[2].members[1]], "C6");
}

TEST(OperationGraph, AnActorReadsAChannelOnceForItsFirstTaskThatNeedsIt) {
  GraphBuilder g("reuse", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  g.output(g.bind(b, "left", {va}, 14));
  g.output(g.bind(b, "right", {va, x}, 15));
  OperationGraph og = operationGraphOf(g.build());
  EXPECT_EQ(opNames(og),
            (std::vector<std::string>{"R0", "C0", "W0", "R1", "C1", "W1", "R2", "C2", "W2"}));
  EXPECT_EQ(og.ops[3].channels, (std::vector<unsigned>{1}));
  EXPECT_EQ(og.ops[6].channels, (std::vector<unsigned>{0}));
}

TEST(OperationGraph, SelfSendsAreFoundForPlainTasksOnly) {
  GraphBuilder g("self", 10);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 11);
  unsigned v = g.bind(a, "make", {x}, 12, "Tensor");
  g.transport(v, ir::Transport::Nccl);
  g.output(g.bind(a, "use", {v, v}, 13));
  std::vector<ir::Diagnostic> found = findSelfSends(g.build());
  ASSERT_EQ(found.size(), 1u); // once, although passed twice
  EXPECT_EQ(found[0].loc.line, 13u);
  ASSERT_EQ(found[0].notes.size(), 1u);
  EXPECT_EQ(found[0].notes[0].loc.line, 12u);
}

} // namespace
} // namespace cg::schedule
