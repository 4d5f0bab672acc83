//===- groups_test.cpp - Tests for the communicators of a schedule -------===//
//
// schedule.txt and the generated code both name and rank the synchronous
// groups through communicatorsOf(); these hold it to the ranks, names and
// memberships the runtime and the reader are told.
//
//===----------------------------------------------------------------------===//
#include "schedule/Groups.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg::schedule {
namespace {

using test::scheduleOf;

// gpuGraph(): an NCCL edge w0 -> w1 (channel c1), an allreduce over w0, w1
// and an allgather over w1, w0; the groups in Schedule::groups order.
TEST(Groups, EachGroupHasItsActorsByRankAndTheNameScheduleTxtGivesIt) {
  const ir::Graph graph = test::gpuGraph();
  const Communicators communicators = communicatorsOf(graph, scheduleOf(graph));
  ASSERT_EQ(communicators.groups.size(), 3u);
  EXPECT_EQ(communicators.groups[0].actors, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(communicators.groups[0].name, "nccl c1");
  EXPECT_EQ(communicators.groups[0].summary, "nccl c1: w0 -> w1");
  EXPECT_EQ(communicators.groups[1].actors, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(communicators.groups[1].name, "allreduce sum #0");
  EXPECT_EQ(communicators.groups[1].summary, "allreduce sum #0: w0, w1");
  EXPECT_EQ(communicators.groups[2].actors, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(communicators.groups[2].name, "allgather #1");
  EXPECT_EQ(communicators.groups[2].summary, "allgather #1: w1, w0");
}

TEST(Groups, EachActorKnowsItsRankInEveryGroupItIsIn) {
  const ir::Graph graph = test::gpuGraph();
  const Communicators communicators = communicatorsOf(graph, scheduleOf(graph));
  EXPECT_EQ(communicators.memberships, (std::vector<std::vector<Membership>>{
                                           {{0, 0}, {1, 0}, {2, 1}}, {{0, 1}, {1, 1}, {2, 0}}}));
  EXPECT_EQ(communicators.channelGroup, (std::vector<int>{-1, 0, -1, -1}));
  EXPECT_EQ(communicators.collectiveGroup, (std::vector<int>{1, 2}));
}

// Three readers of one NCCL value: the writer is rank 0, the readers follow
// in reader-slot order.
TEST(Groups, AnNcclEdgeRanksItsWriterFirstThenItsReadersBySlot) {
  test::GraphBuilder g("spread", 30);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 31);
  unsigned b = g.actor("b", 32);
  unsigned c = g.actor("c", 33);
  unsigned t = g.bind(c, "make", {x}, 34, "cg::Tensor");
  g.transport(t, ir::Transport::Nccl);
  g.output(g.bind(a, "use", {t}, 35, "int")).output(g.bind(b, "use", {t}, 36, "int"));
  const ir::Graph graph = g.build();
  const Communicators communicators = communicatorsOf(graph, scheduleOf(graph));
  ASSERT_EQ(communicators.groups.size(), 1u);
  EXPECT_EQ(communicators.groups[0].actors, (std::vector<unsigned>{2, 0, 1}));
  EXPECT_EQ(communicators.groups[0].summary, "nccl c1: c -> a, b");
  EXPECT_EQ(communicators.memberships,
            (std::vector<std::vector<Membership>>{{{0, 1}}, {{0, 2}}, {{0, 0}}}));
}

TEST(Groups, AGraphWithoutBlockingCommunicationHasNone) {
  const ir::Graph graph = test::chainGraph();
  const Communicators communicators = communicatorsOf(graph, scheduleOf(graph));
  EXPECT_TRUE(communicators.groups.empty());
  EXPECT_EQ(communicators.memberships, (std::vector<std::vector<Membership>>{{}, {}}));
  EXPECT_EQ(communicators.channelGroup, (std::vector<int>{-1, -1, -1}));
}

} // namespace
} // namespace cg::schedule
