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
  *os << "{value " << channel.value << ", writer " << channel.writer
      << ", readers";
  for (int reader : channel.readers)
    *os << ' ' << reader;
  *os << '}';
}

void PrintTo(const Operation& op, std::ostream* os) {
  static const char* const kNames[] = {"READ", "COMPUTE", "WRITE"};
  *os << kNames[static_cast<int>(op.kind)] << " task " << op.task;
  for (unsigned channel : op.channels)
    *os << " c" << channel;
}

namespace {

using test::GraphBuilder;

Operation read(unsigned task, std::vector<unsigned> channels) {
  return {Operation::Kind::Read, task, std::move(channels)};
}
Operation compute(unsigned task) { return {Operation::Kind::Compute, task, {}}; }
Operation write(unsigned task, unsigned channel) {
  return {Operation::Kind::Write, task, {channel}};
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
            (std::vector<Operation>{read(0, {0}), compute(0), compute(1),
                                    write(1, 1)}));
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
  EXPECT_EQ(schedule.actors[0].operations,
            (std::vector<Operation>{read(0, {0}), compute(0), write(0, 1),
                                    compute(1), write(1, 2)}));
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
            (std::vector<Operation>{read(1, {1}), compute(1), write(1, 2),
                                    read(2, {0}), compute(2), write(2, 3)}));
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
            (std::vector<Operation>{read(1, {1, 2, 0}), compute(1),
                                    write(1, 3)}));
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
            "  c0  input #0  std::string  driver -> a\n"
            "  c1  a.echo    std::string  a -> b\n"
            "  c2  b.echo    std::string  b -> driver\n"
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
            "  output #0  <- c2 (b.echo)\n");
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
  EXPECT_EQ(renderScheduleText(graph, schedule),
            renderScheduleText(graph, schedule));
}

} // namespace
} // namespace cg::schedule
