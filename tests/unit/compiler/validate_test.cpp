//===- validate_test.cpp - Tests for the graph validator ------------------===//
//
// Each user error is checked with its exact message and location, since
// those are what the user sees; broken IR must surface as an internal error,
// never as a diagnostic blaming the user's code.
//
//===----------------------------------------------------------------------===//

#include "ir/Validate.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cg::ir {
namespace {

using test::at;
using test::GraphBuilder;

/// Diagnostics rendered as the tool prints them, which pins message,
/// location and notes in one readable string.
std::string formatted(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& diagnostic : diagnostics)
    out += formatDiagnostic(diagnostic);
  return out;
}

/// The internal error validate() throws for `graph`, or "<no error>".
std::string internalErrorFor(const Graph& graph) {
  try {
    validate(graph);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Validate, WellFormedGraphsHaveNoDiagnostics) {
  EXPECT_TRUE(validate(test::chainGraph()).empty());
  EXPECT_TRUE(validate(test::fanOutGraph()).empty());
  EXPECT_TRUE(validate(test::sameActorGraph()).empty());
  EXPECT_TRUE(validate(test::sharedResultGraph()).empty());
}

TEST(Validate, AGraphWithoutOutputIsReportedAtTheGraph) {
  GraphBuilder g("lonely", 10);
  unsigned x = g.input();
  g.bind(g.actor("a", 11), "echo", {x}, 12);
  Graph graph = g.build();

  std::vector<Diagnostic> diagnostics = validate(graph);
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].loc, at(10, 1));
  EXPECT_EQ(diagnostics[0].message,
            "graph 'lonely' has no output; call g.output(...)");
  EXPECT_TRUE(diagnostics[0].notes.empty());
  // The task's result is then unused too; both are reported, graph first.
  EXPECT_EQ(diagnostics[1].loc, at(12));
}

TEST(Validate, ADuplicateActorNameIsReportedAtTheSecondWithANoteAtTheFirst) {
  GraphBuilder g("dup", 10);
  unsigned x = g.input();
  unsigned first = g.actor("a", 11);
  unsigned second = g.actor("a", 12);
  unsigned v = g.bind(first, "echo", {x}, 13);
  g.output(g.bind(second, "echo", {v}, 14));

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:12:3: error: actor name 'a' is already "
            "used in graph 'dup'\n"
            "examples/echo/echo.cg.cpp:11:3: note: first declared here\n");
}

TEST(Validate, EveryRepeatOfAnActorNamePointsBackToTheFirst) {
  GraphBuilder g("dup3", 10);
  unsigned x = g.input();
  unsigned a1 = g.actor("a", 11);
  unsigned a2 = g.actor("a", 12);
  unsigned a3 = g.actor("a", 13);
  unsigned v1 = g.bind(a1, "echo", {x}, 14);
  unsigned v2 = g.bind(a2, "echo", {v1}, 15);
  g.output(g.bind(a3, "echo", {v2}, 16));

  std::vector<Diagnostic> diagnostics = validate(g.build());
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].loc, at(12));
  EXPECT_EQ(diagnostics[1].loc, at(13));
  for (const Diagnostic& diagnostic : diagnostics) {
    ASSERT_EQ(diagnostic.notes.size(), 1u);
    EXPECT_EQ(diagnostic.notes[0].loc, at(11));
  }
}

TEST(Validate, AnUnusedTaskResultIsReportedAtTheBindCall) {
  GraphBuilder g("dangling", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  g.bind(a, "echo", {x}, 13);
  g.output(g.bind(b, "echo", {x}, 14));

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:13:3: error: result of 'a.echo' is never "
            "used; pass it to another task or to g.output(...)\n");
}

TEST(Validate, AnUnusedInputIsReportedAtTheGraphByPosition) {
  GraphBuilder g("ignores", 10);
  unsigned x = g.input();
  g.input();
  g.output(g.bind(g.actor("a", 11), "echo", {x}, 12));

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:10:1: error: graph input #1 is never "
            "used\n");
}

TEST(Validate, AnInputReturnedDirectlyIsReportedOnce) {
  GraphBuilder g("passthrough", 10);
  unsigned x = g.input();
  unsigned y = g.input();
  g.output(g.bind(g.actor("a", 11), "echo", {x}, 12));
  g.output(y);

  // Input #1 is used by no task either, but the specific message says more.
  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:10:1: error: graph input #1 is returned "
            "as an output without passing through a task\n");
}

TEST(Validate, AnInputBothUsedAndReturnedIsStillAnError) {
  GraphBuilder g("also_returned", 10);
  unsigned x = g.input();
  g.output(g.bind(g.actor("a", 11), "echo", {x}, 12));
  g.output(x);

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:10:1: error: graph input #0 is returned "
            "as an output without passing through a task\n");
}

TEST(Validate, DiagnosticsWithoutAFileNameTheTool) {
  Diagnostic diagnostic{{}, "no graph found", {{{}, "see --help"}}};
  EXPECT_EQ(formatDiagnostic(diagnostic),
            "cgc: error: no graph found\ncgc: note: see --help\n");
}

TEST(Validate, AnActorIdOutOfRangeIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[1].actor = 2;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].actor is 2 but the graph has "
            "only 2 actors");
}

TEST(Validate, AnOutputIdOutOfRangeIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.outputs.push_back(10);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: outputs[1] is 10 but the graph has only 3 "
            "values");
}

TEST(Validate, AnInputIdOutOfRangeIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.inputs.push_back(3);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: inputs[1] is 3 but the graph has only 3 "
            "values");
}

TEST(Validate, AProducerThatDisagreesWithTheTasksResultIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[0].result = 2;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[1].producer is task #0 but "
            "tasks[0].result is value 2");
}

TEST(Validate, AProducerThatDisagreesWithTheInputsIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.values[1].producer = {Producer::Kind::Input, 0};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[1].producer is input #0 but "
            "inputs[0] is value 0");
}

TEST(Validate, AnArgumentBoundAfterItsTaskIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[0].args = {2};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[0].args[0] is value 2, the result of "
            "task #1, which is not bound before task #0");
}

TEST(Validate, ATaskReadingItsOwnResultIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[1].args = {2};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].args[0] is value 2, the result of "
            "task #1, which is not bound before task #1");
}

TEST(Validate, AnInputCreatedAfterItsConsumerIsAnInternalError) {
  // Values 0 and 1 are task results, value 2 an input created afterwards.
  Graph graph;
  graph.name = "late";
  graph.actors = {{"a", "::EchoActor", test::at(11)}};
  graph.inputs = {2};
  graph.values = {{{"int"}, {Producer::Kind::Task, 0}},
                  {{"int"}, {Producer::Kind::Task, 1}},
                  {{"int"}, {Producer::Kind::Input, 0}}};
  graph.tasks = {{0, "make", {}, 0, test::at(12)},
                 {0, "use", {2}, 1, test::at(13)}};
  graph.outputs = {1};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].args[0] is value 2, which is not "
            "created before the task's result value 1");
}

} // namespace
} // namespace cg::ir
