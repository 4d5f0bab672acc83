//===- overlap_test.cpp - Tests for hoisting NCCL receives ----------------===//
//
// The seed's example (three senders, one receiver, NCCL) and the limits of
// the rule: receives never pass blocking operations, nor work their send
// waits for.
//
//===----------------------------------------------------------------------===//

#include "schedule/Overlap.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg::schedule {
namespace {

using test::GraphBuilder;
using test::opsOf;
using test::scheduleOf;
using Strings = std::vector<std::string>;

constexpr ir::Transport kNccl = ir::Transport::Nccl;

ScheduleOptions overlap() {
  ScheduleOptions options;
  options.overlapGpuCommunication = true;
  return options;
}

/// Ray's overlap example: three senders each send a tensor over NCCL to one
/// receiver, which multiplies each one; the results go to the driver.
ir::Graph threeSendersOneReceiver(ir::Transport transport = kNccl) {
  GraphBuilder g("overlap", 10);
  unsigned x = g.input("int");
  unsigned senders[3] = {g.actor("s0", 11, "::TorchTensorWorker"),
                         g.actor("s1", 12, "::TorchTensorWorker"),
                         g.actor("s2", 13, "::TorchTensorWorker")};
  unsigned r = g.actor("r", 14, "::TorchTensorWorker");
  unsigned sent[3];
  for (unsigned i = 0; i < 3; ++i) {
    sent[i] = g.bind(senders[i], "send", {x}, 15, "Tensor");
    g.transport(sent[i], transport);
  }
  for (unsigned i = 0; i < 3; ++i)
    g.output(g.bind(r, "recv_and_matmul", {sent[i]}, 16, "Result"));
  return g.build();
}

// The receiver's three READs before its first matmul, nothing else moved.
void expectAllThreeReceivesFirst(ir::Transport transport) {
  ir::Graph graph = threeSendersOneReceiver(transport);
  Schedule s = scheduleOf(graph, overlap());
  EXPECT_EQ(opsOf(graph, s, 3),
            (Strings{"READ r.recv_and_matmul#1 c1", "READ r.recv_and_matmul#2 c2 [moved]",
                     "READ r.recv_and_matmul#3 c3 [moved]", "COMPUTE r.recv_and_matmul#1",
                     "WRITE r.recv_and_matmul#1 c4", "COMPUTE r.recv_and_matmul#2",
                     "WRITE r.recv_and_matmul#2 c5", "COMPUTE r.recv_and_matmul#3",
                     "WRITE r.recv_and_matmul#3 c6"}));
  // The senders have nothing to move.
  for (unsigned i = 0; i < 3; ++i)
    for (const Operation& op : s.actors[i].operations)
      EXPECT_FALSE(op.moved);
  // The global order still places each send with its receive.
  for (const std::vector<OpRef>& step : s.steps) {
    if (step.size() > 1) {
      EXPECT_EQ(s.actors[step[0].actor].operations[step[0].index].kind, Operation::Kind::Write);
    }
  }
}

TEST(Overlap, TheReceiverTakesAllThreeTensorsBeforeItsFirstMatmul) {
  expectAllThreeReceivesFirst(kNccl);
}

// Over CUDA IPC (one GPU, as the seed's example runs here) the same move.
TEST(Overlap, CudaIpcReceivesAreHoistedAsNcclOnesAre) {
  expectAllThreeReceivesFirst(ir::Transport::CudaIpc);
}

// Host-memory reads stay where they are: there is no transfer to overlap.
TEST(Overlap, SharedMemoryReceivesDoNotMove) {
  ir::Graph graph = threeSendersOneReceiver(ir::Transport::Shm);
  Schedule s = scheduleOf(graph, overlap());
  for (const ActorSchedule& actor : s.actors)
    for (const Operation& op : actor.operations)
      EXPECT_FALSE(op.moved);
}

TEST(Overlap, TheTextMarksMovedReceives) {
  ir::Graph graph = threeSendersOneReceiver();
  std::string text = renderScheduleText(graph, scheduleOf(graph, overlap()));
  EXPECT_NE(text.find("  2  READ     c2 (s1.send)                  [g1]  [moved]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# built with --overlap-gpu-communication\n"), std::string::npos) << text;
}

TEST(Overlap, WithoutTheOptionNothingMoves) {
  ir::Graph graph = threeSendersOneReceiver();
  Schedule s = scheduleOf(graph);
  for (const ActorSchedule& actor : s.actors)
    for (const Operation& op : actor.operations)
      EXPECT_FALSE(op.moved);
}

TEST(Overlap, AReceiveNeverPassesAnotherBlockingOperation) {
  // r reads a shared-memory input for its first task; the nccl receive of
  // the second task stops below that READ.
  GraphBuilder g("blocking", 10);
  unsigned x = g.input("int");
  unsigned s0 = g.actor("s0", 11, "::Worker");
  unsigned r = g.actor("r", 12, "::Worker");
  unsigned sent = g.bind(s0, "send", {x}, 13, "Tensor");
  g.transport(sent, kNccl);
  unsigned first = g.bind(r, "first", {x}, 14, "Tensor");
  g.output(g.bind(r, "second", {first, sent}, 15, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph, overlap());
  EXPECT_EQ(opsOf(graph, s, r),
            (Strings{"READ r.first c0", "READ r.second c1 [moved]", "COMPUTE r.first",
                     "COMPUTE r.second", "WRITE r.second c2"}));
}

TEST(Overlap, AReceiveStaysBehindWorkItsSendWaitsFor) {
  // r computes `prepare` and sends it (shm) to s0, whose result comes back
  // over nccl: the receive must not pass `prepare` or its WRITE, or r would
  // wait for a send that waits for r.
  GraphBuilder g("round_trip", 10);
  unsigned x = g.input("int");
  unsigned s0 = g.actor("s0", 11, "::Worker");
  unsigned r = g.actor("r", 12, "::Worker");
  unsigned prepared = g.bind(r, "prepare", {x}, 13, "Tensor");
  unsigned back = g.bind(s0, "work", {prepared}, 14, "Tensor");
  g.transport(back, kNccl);
  unsigned other = g.bind(r, "other", {x}, 15, "Tensor");
  g.output(g.bind(r, "finish", {back, other}, 16, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph, overlap());
  // It passes `other` (independent), and stops at the WRITE of `prepare`.
  EXPECT_EQ(opsOf(graph, s, r),
            (Strings{"READ r.prepare c0", "COMPUTE r.prepare", "WRITE r.prepare c1",
                     "READ r.finish c2 [moved]", "COMPUTE r.other", "COMPUTE r.finish",
                     "WRITE r.finish c3"}));
}

TEST(Overlap, OneFOneBHoistsTheSecondForwardAheadOfTheFirstBackward) {
  GraphBuilder g("one_f_one_b", 10);
  unsigned x = g.input("int");
  unsigned w1 = g.actor("w1", 11, "::Worker");
  unsigned w2 = g.actor("w2", 12, "::Worker");
  unsigned f1 = g.bind(w1, "forward", {x}, 13, "Tensor");
  unsigned f2 = g.bind(w1, "forward", {x}, 14, "Tensor");
  g.transport(f1, kNccl).transport(f2, kNccl);
  unsigned a1 = g.bind(w2, "forward", {f1}, 15, "Tensor");
  unsigned a2 = g.bind(w2, "forward", {f2}, 16, "Tensor");
  g.output(g.bind(w2, "backward", {a1}, 17, "Tensor"));
  g.output(g.bind(w2, "backward", {a2}, 18, "Tensor"));
  ir::Graph graph = g.build();
  Schedule s = scheduleOf(graph, overlap());
  EXPECT_EQ(opsOf(graph, s, w2),
            (Strings{"READ w2.forward#1 c1", "READ w2.forward#2 c2 [moved]", "COMPUTE w2.forward#1",
                     "COMPUTE w2.forward#2", "COMPUTE w2.backward#1", "WRITE w2.backward#1 c3",
                     "COMPUTE w2.backward#2", "WRITE w2.backward#2 c4"}));
}

} // namespace
} // namespace cg::schedule
