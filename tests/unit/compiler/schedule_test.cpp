//===- schedule_test.cpp - Tests for channels and operation lists ---------===//
//
// The schedule is the contract between the compiler and the runtime: which
// channels exist, who writes and reads each (reader slots), and the exact
// order of operations per actor. Tests therefore spell the expected schedule
// out in full rather than checking properties of it.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace cg::schedule {

// Readable failure output; found by GoogleTest through ADL.
void PrintTo(const Channel& channel, std::ostream* os) {
  *os << "{value " << channel.value << ", writer " << channel.writer << ", readers";
  for (int reader : channel.readers)
    *os << ' ' << reader;
  *os << '}';
}

void PrintTo(const Operation& op, std::ostream* os) {
  static const char* const kNames[] = {"READ", "COMPUTE", "WRITE"};
  *os << kNames[static_cast<int>(op.kind)] << " task " << op.task;
  for (unsigned channel : op.channels)
    *os << " c" << channel;
  if (op.group >= 0)
    *os << " g" << op.group;
  if (op.moved)
    *os << " moved";
}

namespace {

using test::constant;
using test::GraphBuilder;

Operation read(unsigned task, std::vector<unsigned> channels) {
  return {Operation::Kind::Read, task, std::move(channels)};
}
Operation compute(unsigned task) { return {Operation::Kind::Compute, task, {}}; }
Operation write(unsigned task, unsigned channel) {
  return {Operation::Kind::Write, task, {channel}};
}
Operation write(unsigned task, std::vector<unsigned> channels) {
  return {Operation::Kind::Write, task, std::move(channels)};
}

/// The schedule of a graph expected to have one; fails the test otherwise.
Schedule scheduleOf(const ir::Graph& graph) {
  auto result = buildSchedule(graph);
  if (auto* diagnostics = std::get_if<std::vector<ir::Diagnostic>>(&result)) {
    std::string text;
    for (const ir::Diagnostic& diagnostic : *diagnostics)
      text += ir::formatDiagnostic(diagnostic);
    ADD_FAILURE() << "unexpected diagnostics:\n" << text;
    return {};
  }
  return std::get<Schedule>(std::move(result));
}

TEST(Schedule, AChainPassesOneChannelFromEachProcessToTheNext) {
  Schedule schedule = scheduleOf(test::chainGraph());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {1, 0, {1}},
                                   {2, 1, {kDriver}},
                               }));
  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0}));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{2}));
  ASSERT_EQ(schedule.actors.size(), 2u);
  EXPECT_EQ(schedule.actors[0].actor, 0u);
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1)}));
  EXPECT_EQ(schedule.actors[1].actor, 1u);
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(1, {1}), compute(1), write(1, 2)}));
}

TEST(Schedule, AFannedOutInputIsOneChannelWithThreeReaders) {
  Schedule schedule = scheduleOf(test::fanOutGraph());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0, 1, 2}},
                                   {1, 0, {kDriver}},
                                   {2, 1, {kDriver}},
                                   {3, 2, {kDriver}},
                               }));
  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0}));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{1, 2, 3}));
  ASSERT_EQ(schedule.actors.size(), 3u);
  for (unsigned a = 0; a < 3; ++a) {
    EXPECT_EQ(schedule.actors[a].actor, a);
    EXPECT_EQ(schedule.actors[a].operations,
              (std::vector<Operation>{read(a, {0}), compute(a), write(a, a + 1)}));
  }
}

TEST(Schedule, AValuePassedWithinOneActorGetsNoChannelAndNoRead) {
  Schedule schedule = scheduleOf(test::sameActorGraph());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {2, 0, {kDriver}},
                               }));
  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0}));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{1}));
  ASSERT_EQ(schedule.actors.size(), 1u);
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), compute(1), write(1, 1)}));
}

TEST(Schedule, AValueReadByItsOwnActorAndAnotherIsWrittenOnceAndReadLocally) {
  Schedule schedule = scheduleOf(test::sharedResultGraph());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {1, 0, {1}},
                                   {2, 0, {kDriver}},
                                   {3, 1, {kDriver}},
                               }));
  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0}));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{2, 3}));
  ASSERT_EQ(schedule.actors.size(), 2u);
  EXPECT_EQ(
      schedule.actors[0].operations,
      (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1), compute(1), write(1, 2)}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(2, {1}), compute(2), write(2, 3)}));
}

TEST(Schedule, RepeatedOutputsShareOneChannelAndTheDriverReadsFirst) {
  GraphBuilder g("repeated", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  unsigned vb = g.bind(b, "echo", {va}, 14);
  g.output(vb).output(va).output(vb);
  Schedule schedule = scheduleOf(g.build());

  // a.echo goes both to b and to the driver: one channel, driver in slot 0.
  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {1, 0, {kDriver, 1}},
                                   {2, 1, {kDriver}},
                               }));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{2, 1, 2}));
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1)}));
}

TEST(Schedule, AnActorReadsEachChannelOncePerExecution) {
  GraphBuilder g("reuse", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  g.output(g.bind(b, "left", {va}, 14));
  g.output(g.bind(b, "right", {va, x, x}, 15));
  Schedule schedule = scheduleOf(g.build());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0, 1}},
                                   {1, 0, {1}},
                                   {2, 1, {kDriver}},
                                   {3, 1, {kDriver}},
                               }));
  // b.right reads only the input: a.echo was read for b.left already, and
  // the input is listed once although passed twice.
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(1, {1}), compute(1), write(1, 2), read(2, {0}), compute(2),
                                    write(2, 3)}));
}

TEST(Schedule, ATaskWithSeveralRemoteArgumentsReadsThemInParameterOrder) {
  GraphBuilder g("join", 10);
  unsigned x = g.input();
  unsigned y = g.input("int");
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  unsigned va = g.bind(a, "echo", {x}, 13);
  g.output(g.bind(b, "join", {y, va, x}, 14));
  Schedule schedule = scheduleOf(g.build());

  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(1, {1, 2, 0}), compute(1), write(1, 3)}));
}

TEST(Schedule, AConstantArgumentIsNeitherAChannelNorARead) {
  GraphBuilder g("scaled", 10);
  unsigned x = g.input("double");
  unsigned a = g.actor("a", 11, "::Scaler", {constant("double", "1.5")});
  unsigned b = g.actor("b", 12, "::Scaler");
  unsigned scaled = g.bind(a, "scale", {x, constant("double", "2.5")}, 13, "double");
  // b.make reads nothing but constants: it runs without any READ.
  unsigned made = g.bind(b, "make", {constant("int", "7")}, 14, "double");
  g.output(g.bind(b, "add", {made, constant("double", "0.5"), scaled}, 15, "double"));
  ir::Graph graph = g.build();
  Schedule schedule = scheduleOf(graph);

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {1, 0, {1}},
                                   {3, 1, {kDriver}},
                               }));
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1)}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{compute(1), read(2, {1}), compute(2), write(2, 2)}));
  // The text shows each constant as its C++ expression.
  std::string text = renderScheduleText(graph, schedule);
  EXPECT_NE(text.find("COMPUTE  a.scale(input #0, 2.5)"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPUTE  b.make(7)"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPUTE  b.add(b.make, 0.5, a.scale)"), std::string::npos) << text;
}

TEST(Schedule, EachElementOfAnUnpackedTupleHasItsOwnChannelToItsReader) {
  ir::Graph graph = test::tupleGraph();
  Schedule schedule = scheduleOf(graph);

  // a.split[0] goes to b, a.split[1] to c: two channels, each one reader,
  // written by a in one WRITE, in element order.
  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {1, 0, {1}},
                                   {2, 0, {2}},
                                   {3, 1, {kDriver}},
                                   {4, 2, {kDriver}},
                               }));
  EXPECT_EQ(schedule.inputChannels, (std::vector<unsigned>{0}));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{3, 4}));
  ASSERT_EQ(schedule.actors.size(), 3u);
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), write(0, {1, 2})}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(1, {1}), compute(1), write(1, 3)}));
  EXPECT_EQ(schedule.actors[2].operations,
            (std::vector<Operation>{read(2, {2}), compute(2), write(2, 4)}));

  EXPECT_EQ(renderScheduleText(graph, schedule),
            "# schedule of graph 'tuple' (echo.cg.cpp:50)\n"
            "# channels\n"
            "  c0  input #0    std::string  shm  driver -> a\n"
            "  c1  a.split[0]  std::string  shm  a -> b\n"
            "  c2  a.split[1]  int          shm  a -> c\n"
            "  c3  b.left      std::string  shm  b -> driver\n"
            "  c4  c.right     int          shm  c -> driver\n"
            "# actor a (::Splitter)\n"
            "  1  READ     c0 (input #0)\n"
            "  2  COMPUTE  a.split(input #0)       echo.cg.cpp:54\n"
            "  3  WRITE    c1, c2\n"
            "# actor b (::EchoActor)\n"
            "  1  READ     c1 (a.split[0])\n"
            "  2  COMPUTE  b.left(a.split[0])      echo.cg.cpp:55\n"
            "  3  WRITE    c3\n"
            "# actor c (::Scaler)\n"
            "  1  READ     c2 (a.split[1])\n"
            "  2  COMPUTE  c.right(a.split[1], 3)  echo.cg.cpp:56\n"
            "  3  WRITE    c4\n"
            "# driver\n"
            "  input #0   -> c0\n"
            "  output #0  <- c3 (b.left)\n"
            "  output #1  <- c4 (c.right)\n"
            "# checked by simulation: 11 executions, 10 in flight; one execution takes 2 "
            "cost units (unknown costs count 1)\n");
}

TEST(Schedule, ATupleElementKeptByItsActorIsNotWritten) {
  GraphBuilder g("half_local", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  std::vector<unsigned> parts = g.bindTuple(a, "split", {x}, 13, {"int", "int", "int"});
  unsigned local = g.bind(a, "local", {parts[0], parts[2]}, 14);
  unsigned remote = g.bind(b, "remote", {parts[1]}, 15);
  g.output(local).output(remote);
  Schedule schedule = scheduleOf(g.build());

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {2, 0, {1}},
                                   {4, 0, {kDriver}},
                                   {5, 1, {kDriver}},
                               }));
  EXPECT_EQ(
      schedule.actors[0].operations,
      (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1), compute(1), write(1, 2)}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{read(2, {1}), compute(2), write(2, 3)}));
}

TEST(Schedule, NcclChannelsAndCollectiveRanksFormSynchronousGroups) {
  // w0.split[1] goes to w1 over nccl: its WRITE and READ are one group. The
  // gradients are nccl values reduced where they are: no channel at all.
  // Each collective's ranks are one group, run in one order on both actors.
  ir::Graph graph = test::gpuGraph();
  Schedule schedule = scheduleOf(graph);

  EXPECT_EQ(schedule.channels, (std::vector<Channel>{
                                   {0, kDriver, {0}},
                                   {2, 0, {1}},
                                   {7, 1, {kDriver}},
                                   {8, 0, {kDriver}},
                               }));
  EXPECT_EQ(schedule.outputChannels, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}),
                                    compute(0),
                                    {Operation::Kind::Write, 0, {1}, 0},
                                    compute(1),
                                    {Operation::Kind::Compute, 3, {}, 1},
                                    {Operation::Kind::Compute, 6, {}, 2},
                                    write(6, 3)}));
  EXPECT_EQ(schedule.actors[1].operations,
            (std::vector<Operation>{{Operation::Kind::Read, 2, {1}, 0},
                                    compute(2),
                                    {Operation::Kind::Compute, 4, {}, 1},
                                    {Operation::Kind::Compute, 5, {}, 2},
                                    write(5, 2)}));
  EXPECT_EQ(schedule.groups, (std::vector<SyncGroup>{
                                 {SyncGroup::Kind::Nccl, 1, {{0, 2}, {1, 0}}},
                                 {SyncGroup::Kind::Collective, 0, {{0, 4}, {1, 2}}},
                                 {SyncGroup::Kind::Collective, 1, {{1, 3}, {0, 5}}},
                             }));
}

TEST(Schedule, TheTextShowsEachChannelsTransportAndEachCollectiveRank) {
  ir::Graph graph = test::gpuGraph();
  EXPECT_EQ(renderScheduleText(graph, scheduleOf(graph)),
            "# schedule of graph 'gpu' (echo.cg.cpp:60)\n"
            "# channels\n"
            "  c0  input #0      std::vector<float>  shm   driver -> w0\n"
            "  c1  w0.split[1]   std::vector<float>  nccl  w0 -> w1\n"
            "  c2  w1.allgather  std::vector<float>  shm   w1 -> driver\n"
            "  c3  w0.allgather  std::vector<float>  shm   w0 -> driver\n"
            "# synchronous groups (their operations complete together)\n"
            "  g0  nccl c1           w0 3 WRITE, w1 1 READ\n"
            "  g1  allreduce sum #0  w0 5 COMPUTE, w1 3 COMPUTE\n"
            "  g2  allgather #1      w1 4 COMPUTE, w0 6 COMPUTE\n"
            "# actor w0 (::Worker)\n"
            "  1  READ     c0 (input #0)\n"
            "  2  COMPUTE  w0.split(input #0, 0.5)     echo.cg.cpp:63\n"
            "  3  WRITE    c1                          [g0]\n"
            "  4  COMPUTE  w0.grad(w0.split[0])        echo.cg.cpp:64\n"
            "  5  COMPUTE  w0.allreduce(w0.grad)       echo.cg.cpp:66  "
            "[allreduce sum #0, rank 0 of 2]  [g1]\n"
            "  6  COMPUTE  w0.allgather(w0.allreduce)  echo.cg.cpp:67  "
            "[allgather #1, rank 1 of 2]  [g2]\n"
            "  7  WRITE    c3\n"
            "# actor w1 (::Worker)\n"
            "  1  READ     c1 (w0.split[1])            [g0]\n"
            "  2  COMPUTE  w1.grad(w0.split[1])        echo.cg.cpp:65\n"
            "  3  COMPUTE  w1.allreduce(w1.grad)       echo.cg.cpp:66  "
            "[allreduce sum #0, rank 1 of 2]  [g1]\n"
            "  4  COMPUTE  w1.allgather(w1.allreduce)  echo.cg.cpp:67  "
            "[allgather #1, rank 0 of 2]  [g2]\n"
            "  5  WRITE    c2\n"
            "# driver\n"
            "  input #0   -> c0\n"
            "  output #0  <- c2 (w1.allgather)\n"
            "  output #1  <- c3 (w0.allgather)\n"
            "# checked by simulation: 11 executions, 10 in flight; one execution takes 16.5 "
            "cost units (unknown costs count 1)\n");
}

TEST(Schedule, AnActorWithoutATaskIsReportedAtTheActor) {
  GraphBuilder g("idle", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  g.actor("spare", 12);
  g.output(g.bind(a, "echo", {x}, 13));

  auto result = buildSchedule(g.build());
  auto* diagnostics = std::get_if<std::vector<ir::Diagnostic>>(&result);
  ASSERT_NE(diagnostics, nullptr);
  ASSERT_EQ(diagnostics->size(), 1u);
  EXPECT_EQ(ir::formatDiagnostic((*diagnostics)[0]),
            "examples/echo/echo.cg.cpp:12:3: error: actor 'spare' has no task; "
            "remove it or bind a method\n");
}

TEST(Schedule, TheChainRendersAsAnAlignedText) {
  ir::Graph graph = test::chainGraph();
  EXPECT_EQ(renderScheduleText(graph, scheduleOf(graph)),
            "# schedule of graph 'chain' (echo.cg.cpp:10)\n"
            "# channels\n"
            "  c0  input #0  std::string  shm  driver -> a\n"
            "  c1  a.echo    std::string  shm  a -> b\n"
            "  c2  b.echo    std::string  shm  b -> driver\n"
            "# actor a (::EchoActor)\n"
            "  1  READ     c0 (input #0)\n"
            "  2  COMPUTE  a.echo(input #0)  echo.cg.cpp:13\n"
            "  3  WRITE    c1\n"
            "# actor b (::EchoActor)\n"
            "  1  READ     c1 (a.echo)\n"
            "  2  COMPUTE  b.echo(a.echo)    echo.cg.cpp:14\n"
            "  3  WRITE    c2\n"
            "# driver\n"
            "  input #0   -> c0\n"
            "  output #0  <- c2 (b.echo)\n"
            "# checked by simulation: 11 executions, 10 in flight; one execution takes 2 "
            "cost units (unknown costs count 1)\n");
}

TEST(Schedule, RepeatedBindsOfOneMethodAreNumberedInTheText) {
  GraphBuilder g("twice", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned first = g.bind(a, "step", {x}, 12);
  g.output(g.bind(a, "step", {first}, 13));
  ir::Graph graph = g.build();

  std::string text = renderScheduleText(graph, scheduleOf(graph));
  EXPECT_NE(text.find("COMPUTE  a.step#1(input #0)"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPUTE  a.step#2(a.step#1)"), std::string::npos) << text;
}

TEST(Schedule, RenderingIsDeterministic) {
  ir::Graph graph = test::fanOutGraph();
  Schedule schedule = scheduleOf(graph);
  EXPECT_EQ(renderScheduleText(graph, schedule), renderScheduleText(graph, schedule));
}

TEST(Schedule, ChannelsBetweenHostsAreTcpAndTcpEverywhereMakesThemAllTcp) {
  ir::Graph graph = test::chainGraph();
  graph.actors[1].host = 1; // b elsewhere: a -> b and b -> driver cross hosts
  Schedule schedule = scheduleOf(graph);
  ASSERT_EQ(schedule.channels.size(), 3u);
  EXPECT_EQ(channelTransport(graph, schedule.channels[0]), "shm");
  EXPECT_EQ(channelTransport(graph, schedule.channels[1]), "tcp");
  EXPECT_EQ(channelTransport(graph, schedule.channels[2]), "tcp");
  EXPECT_EQ(channelTransport(graph, schedule.channels[0], /*tcpEverywhere=*/true), "tcp");
}

} // namespace
} // namespace cg::schedule
