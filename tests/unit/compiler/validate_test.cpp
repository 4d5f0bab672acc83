//===- validate_test.cpp - Tests for the graph validator ------------------===//
//
// Each user error is checked with its exact message and location, since
// those are what the user sees; broken IR must surface as an internal error,
// never as a diagnostic blaming the user's code.
//
//===----------------------------------------------------------------------===//

#include "ir/Validate.h"
#include "support/InternalError.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg::ir {
namespace {

using test::at;
using test::constant;
using test::GraphBuilder;

/// A task argument that is the value `id`.
Arg valueArg(unsigned id) {
  Arg arg;
  arg.value = id;
  return arg;
}

/// Diagnostics rendered as the tool prints them, which pins message,
/// location and notes in one readable string.
std::string formatted(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& diagnostic : diagnostics)
    out += formatDiagnostic(diagnostic);
  return out;
}

/// The internal error validate() throws for `graph`, or "<no error>". Only
/// a cg::InternalError counts: cgc tells a bug of its own by that type.
std::string internalErrorFor(const Graph& graph) {
  try {
    validate(graph);
  } catch (const cg::InternalError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Validate, WellFormedGraphsHaveNoDiagnostics) {
  EXPECT_TRUE(validate(test::chainGraph()).empty());
  EXPECT_TRUE(validate(test::fanOutGraph()).empty());
  EXPECT_TRUE(validate(test::sameActorGraph()).empty());
  EXPECT_TRUE(validate(test::sharedResultGraph()).empty());
  EXPECT_TRUE(validate(test::tupleGraph()).empty());
  EXPECT_TRUE(validate(test::gpuGraph()).empty());
}

TEST(Validate, AGraphWithoutOutputIsReportedAtTheGraph) {
  GraphBuilder g("lonely", 10);
  unsigned x = g.input();
  g.bind(g.actor("a", 11), "echo", {x}, 12);
  Graph graph = g.build();

  std::vector<Diagnostic> diagnostics = validate(graph);
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].loc, at(10, 1));
  EXPECT_EQ(diagnostics[0].message, "graph 'lonely' has no output; call g.output(...)");
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

TEST(Validate, AnUnusedTupleElementIsReportedByItsIndexAtTheBindCall) {
  GraphBuilder g("half_used", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  std::vector<unsigned> parts = g.bindTuple(a, "split", {x}, 12, {"std::string", "int", "double"});
  g.output(parts[1]);

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:12:3: error: element #0 of the result of "
            "'a.split' is never used; pass it to another task or to "
            "g.output(...)\n"
            "examples/echo/echo.cg.cpp:12:3: error: element #2 of the result of "
            "'a.split' is never used; pass it to another task or to "
            "g.output(...)\n");
}

TEST(Validate, AConstantArgumentIsNotAUseOfAnyValue) {
  GraphBuilder g("constant_only", 10);
  g.input();
  unsigned a = g.actor("a", 11, "::Scaler", {constant("int", "0")});
  g.output(g.bind(a, "make", {constant("int", "42")}, 12, "int"));

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:10:1: error: graph input #0 is never "
            "used\n");
}

TEST(Validate, AnUnusedCollectiveResultIsReportedAtItsRank) {
  GraphBuilder g("reduced", 10);
  unsigned x = g.input("std::vector<float>");
  unsigned a = g.actor("a", 11);
  unsigned b = g.actor("b", 12);
  std::vector<unsigned> sums = g.collective(Collective::Kind::AllReduce, "sum", {a, b}, {x, x}, 13);
  g.output(sums[1]);

  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:13:3: error: result of 'a.allreduce' is "
            "never used; pass it to another task or to g.output(...)\n");
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
  EXPECT_EQ(formatDiagnostic(diagnostic), "cgc: error: no graph found\ncgc: note: see --help\n");
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
  graph.tasks[0].results = {2};
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: values[1].producer is task #0 but "
                                     "tasks[0].results is [2]");
}

TEST(Validate, AProducerThatDisagreesWithTheInputsIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.values[1].producer = {Producer::Kind::Input, 0};
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: values[1].producer is input #0 but "
                                     "inputs[0] is value 0");
}

TEST(Validate, AnArgumentBoundAfterItsTaskIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[0].args = {valueArg(2)};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[0].args[0].value is 2, the result of "
            "task #1, which is not bound before task #0");
}

TEST(Validate, ATaskReadingItsOwnResultIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[1].args = {valueArg(2)};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].args[0].value is 2, the result of "
            "task #1, which is not bound before task #1");
}

TEST(Validate, AnInputCreatedAfterItsConsumerIsAnInternalError) {
  // Values 0 and 1 are task results, value 2 an input created afterwards.
  GraphBuilder g("late", 10);
  unsigned a = g.actor("a", 11);
  unsigned made = g.bind(a, "make", {}, 12, "int");
  g.output(g.bind(a, "use", {made}, 13, "int"));
  Graph graph = g.build();
  graph.values.push_back({});
  graph.values.back().type.spelling = "int";
  graph.inputs = {2};
  graph.tasks[1].args = {valueArg(2)};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].args[0].value is 2, which is not "
            "created before the task's result value 1");
}

TEST(Validate, ATaskReadingAnElementOfItsOwnResultIsAnInternalError) {
  // Value 2 is element #1 of a.split's own result.
  Graph graph = test::tupleGraph();
  graph.tasks[0].args = {valueArg(2)};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[0].args[0].value is 2, element #1 of "
            "the result of task #0, which is not bound before task #0");
}

TEST(Validate, AnArgumentIdOutOfRangeIsAnInternalError) {
  Graph graph = test::tupleGraph();
  graph.tasks[2].args[1] = valueArg(5);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[2].args[1].value is 5 but the graph "
            "has only 5 values");
}

// Tuple elements: value k of an unpacked result is element k of the task's
// results, and names that element back.

TEST(Validate, AnElementThatDisagreesWithItsPositionIsAnInternalError) {
  Graph graph = test::tupleGraph();
  graph.values[2].producer.element = 0;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[2].producer is element #0 of task "
            "#0 but tasks[0].results is [1, 2]");
}

TEST(Validate, ResultsListedOutOfElementOrderAreAnInternalError) {
  Graph graph = test::tupleGraph();
  graph.tasks[0].results = {2, 1};
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[1].producer is element #0 of task "
            "#0 but tasks[0].results is [2, 1]");
}

TEST(Validate, AWholeResultAmongSeveralResultsIsAnInternalError) {
  Graph graph = test::tupleGraph();
  graph.values[1].producer.element = -1;
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: values[1].producer is task #0 but "
                                     "tasks[0].results is [1, 2]");
}

TEST(Validate, AnElementBeyondTheResultsIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.values[1].producer.element = 1;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[1].producer is element #1 of task "
            "#0 but tasks[0].results is [1]");
}

TEST(Validate, AnUnpackedOneElementTupleIsConsistent) {
  GraphBuilder g("single_element", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  g.output(g.bindTuple(a, "wrap", {x}, 12, {"int"})[0]);
  EXPECT_TRUE(validate(g.build()).empty());
}

TEST(Validate, ANegativeElementOtherThanNoneIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.values[1].producer.element = -2;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[1].producer.element is -2; expected "
            "-1 or an element index");
}

TEST(Validate, AnInputWithAnElementIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.values[0].producer.element = 0;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: values[0].producer is input #0 but has "
            "element 0; only a task's result has elements");
}

TEST(Validate, ATaskWithoutResultsIsAnInternalError) {
  Graph graph = test::chainGraph();
  Task extra;
  extra.method = "echo";
  extra.args = {valueArg(0)};
  graph.tasks.push_back(extra);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[2].results is empty; a task produces "
            "at least one value");
}

TEST(Validate, AResultIdOutOfRangeIsAnInternalError) {
  Graph graph = test::chainGraph();
  Task extra;
  extra.results = {3};
  graph.tasks.push_back(extra);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[2].results[0] is 3 but the graph has "
            "only 3 values");
}

TEST(Validate, ATaskClaimingAnotherTasksResultIsAnInternalError) {
  Graph graph = test::chainGraph();
  Task extra;
  extra.results = {1};
  graph.tasks.push_back(extra);
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: tasks[2].results[0] is value 1 but "
                                     "values[1].producer is task #0, not task #2");
}

// Constants and costs.

TEST(Validate, AnEmptyConstantIsAnInternalError) {
  Graph graph = test::tupleGraph();
  graph.tasks[2].args[1].constant.expression.clear();
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[2].args[1].constant.expression is "
            "empty");
  graph = test::gpuGraph();
  graph.actors[1].constructorArgs[0].type.spelling.clear();
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: actors[1].constructorArgs[0].type is "
            "empty");
}

TEST(Validate, ANegativeOrNonFiniteCostIsAnInternalError) {
  Graph graph = test::chainGraph();
  graph.tasks[1].cost = -1;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].cost is -1 but a cost must be "
            "finite and not negative (0: unknown)");
  graph.tasks[1].cost = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].cost is nan but a cost must be "
            "finite and not negative (0: unknown)");
  graph.tasks[1].cost = std::numeric_limits<double>::infinity();
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].cost is inf but a cost must be "
            "finite and not negative (0: unknown)");
}

// Collectives (test::gpuGraph(): collective 0 is an allreduce of tasks 3 on
// w0 and 4 on w1; collective 1 an allgather of tasks 5 on w1 and 6 on w0).

TEST(Validate, ACollectiveIdOutOfRangeIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.tasks[1].collective = 2;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].collective is 2 but the graph has "
            "only 2 collectives");
  graph.tasks[1].collective = -3;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: tasks[1].collective is -3; expected -1 or "
            "a collective id");
}

TEST(Validate, ATaskNamingACollectiveThatDoesNotListItIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.tasks[1].collective = 0;
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: tasks[1].collective is 0 but "
                                     "collectives[0].tasks does not list task #1");
}

TEST(Validate, ACollectiveListingATaskThatDoesNotNameItIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.collectives[0].tasks.push_back(2);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[0].tasks[2] is task #2 but "
            "tasks[2].collective is -1");
}

TEST(Validate, ACollectiveTaskOutOfRangeIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.collectives[1].tasks.push_back(9);
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[1].tasks[2] is 9 but the graph "
            "has only 7 tasks");
}

TEST(Validate, OneActorTakingTwoRanksOfACollectiveIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.tasks[4].actor = 0; // rank 1 of the allreduce moves onto w0
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[0].tasks[1] is task #4 on "
            "actor #0 ('w0'), which already takes part as rank 0 (task #3)");
}

TEST(Validate, OneTaskListedTwiceInACollectiveIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.collectives[1].tasks = {5, 5};
  graph.tasks[6].collective = -1;
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[1].tasks[1] is task #5 on "
            "actor #1 ('w1'), which already takes part as rank 0 (task #5)");
}

TEST(Validate, ACollectiveWithoutRanksIsAnInternalError) {
  Graph graph = test::gpuGraph();
  graph.collectives.push_back({});
  graph.collectives.back().reduceOp = "sum";
  EXPECT_EQ(internalErrorFor(graph), "internal compiler error: collectives[2].tasks is empty; a "
                                     "collective has at least one rank");
}

TEST(Validate, AReduceOpMustMatchTheCollectiveKind) {
  Graph graph = test::gpuGraph();
  graph.collectives[0].reduceOp.clear();
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[0].reduceOp is empty but an "
            "allreduce needs a reduce operation");
  graph = test::gpuGraph();
  graph.collectives[1].reduceOp = "sum";
  EXPECT_EQ(internalErrorFor(graph),
            "internal compiler error: collectives[1].reduceOp is \"sum\" but an "
            "allgather has no reduce operation");
}

TEST(Validate, AnNcclGraphInputIsReportedAtTheGraph) {
  GraphBuilder g("gpu_in", 10);
  unsigned x = g.input("Tensor", Transport::Nccl);
  unsigned a = g.actor("a", 11);
  g.output(g.bind(a, "echo", {x}, 12));
  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:10:1: error: graph input #0 cannot use transport "
            "nccl: the driver takes part in no NCCL group\n");
}

TEST(Validate, AnNcclGraphOutputIsReportedAtItsBind) {
  GraphBuilder g("gpu_out", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  std::vector<unsigned> parts = g.bindTuple(a, "split", {x}, 12, {"Tensor", "Tensor"});
  g.transport(parts[1], Transport::Nccl);
  g.output(parts[0]).output(parts[1]);
  EXPECT_EQ(formatted(validate(g.build())),
            "examples/echo/echo.cg.cpp:12:3: error: element #1 of the result of 'a.split' is "
            "a graph output, so it cannot use transport nccl: the driver takes part in no "
            "NCCL group\n");
}

TEST(Validate, DeviceTransportsOfTensorsAreAcceptedOnInputsAndResults) {
  GraphBuilder g("devices", 90);
  unsigned x = g.input("cg::Tensor", Transport::Cuda);
  unsigned a = g.actor("a", 91);
  unsigned b = g.actor("b", 92);
  unsigned va = g.bind(a, "make", {x}, 93, "cg::Tensor");
  g.transport(va, Transport::Cpu);
  g.output(g.bind(b, "use", {va}, 94, "cg::Tensor")).output(va);
  EXPECT_TRUE(validate(g.build()).empty());
}

} // namespace
} // namespace cg::ir
