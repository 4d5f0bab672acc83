//===- graph_json_test.cpp - Tests for the IR's JSON form -----------------===//
//
// `<graph>.ir.json` must round-trip exactly (cgc may schedule from it) and
// must be rejected, with the offending field named, whenever it is not
// something toJson() could have written.
//
//===----------------------------------------------------------------------===//

#include "GraphJsonReader.h"
#include "ir/GraphJson.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cg::ir {
namespace {

using test::chainGraph;
using test::constant;
using test::fanOutGraph;
using test::gpuGraph;
using test::GraphBuilder;
using test::sameActorGraph;
using test::tupleGraph;

/// The message graphFromJson() throws for `text`, or "<no error>".
std::string errorFor(std::string_view text) {
  try {
    graphFromJson(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<no error>";
}

/// The message for the chain graph's JSON after `edit` was applied to it.
std::string errorAfterEditing(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(toJson(chainGraph()));
  edit(j);
  return errorFor(j.dump());
}

/// The same for the graph using every IR feature (see test::gpuGraph()).
std::string errorAfterEditingGpu(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(toJson(gpuGraph()));
  edit(j);
  return errorFor(j.dump());
}

/// toJson(graph) as an ordered document, to look at parts of it.
nlohmann::ordered_json orderedJsonOf(const Graph& graph) {
  return nlohmann::ordered_json::parse(toJson(graph));
}

void expectRoundTrip(const Graph& graph) {
  std::string text = toJson(graph);
  Graph parsed = graphFromJson(text);
  EXPECT_EQ(parsed, graph);
  EXPECT_EQ(toJson(parsed), text);
}

TEST(GraphJson, ChainGraphSurvivesARoundTrip) { expectRoundTrip(chainGraph()); }

TEST(GraphJson, FanOutGraphWithThreeOutputsSurvivesARoundTrip) { expectRoundTrip(fanOutGraph()); }

TEST(GraphJson, TwoTasksOnOneActorWithALocalEdgeSurviveARoundTrip) {
  expectRoundTrip(sameActorGraph());
}

TEST(GraphJson, AnEmptyGraphSurvivesARoundTrip) { expectRoundTrip(GraphBuilder("empty").build()); }

TEST(GraphJson, AnUnpackedTupleAndAConstantArgumentSurviveARoundTrip) {
  expectRoundTrip(tupleGraph());
}

TEST(GraphJson, ConstantsTransportsCollectivesAndCostsSurviveARoundTrip) {
  expectRoundTrip(gpuGraph());
}

TEST(GraphJson, AwkwardCostsAndConstantsSurviveARoundTrip) {
  GraphBuilder g("awkward", 5);
  unsigned x = g.input("double");
  unsigned a =
      g.actor("a", 6, "::ns::Doubler", {constant("const char*", "\"quote \\\" and \\n\"")});
  unsigned v = g.bind(a, "f", {x, constant("double", "1e-300"), x}, 7, "double");
  g.cost(v, 0.1).output(v);
  Graph graph = g.build();
  expectRoundTrip(graph);
  graph.tasks[0].cost = 1e300;
  expectRoundTrip(graph);
  graph.tasks[0].cost = 3;
  expectRoundTrip(graph);
}

TEST(GraphJson, OutputIsPrettyStableAndEndsInANewline) {
  GraphBuilder g("single", 5);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 6, "::ns::Doubler");
  g.output(g.bind(a, "twice", {x}, 7, "long"));

  EXPECT_EQ(toJson(g.build()), R"({
  "format": "cg-ir",
  "version": 2,
  "name": "single",
  "loc": {
    "file": "examples/echo/echo.cg.cpp",
    "line": 5,
    "column": 1
  },
  "inputs": [
    0
  ],
  "actors": [
    {
      "name": "a",
      "className": "::ns::Doubler",
      "loc": {
        "file": "examples/echo/echo.cg.cpp",
        "line": 6,
        "column": 3
      }
    }
  ],
  "tasks": [
    {
      "actor": 0,
      "method": "twice",
      "args": [
        {
          "value": 0
        }
      ],
      "results": [
        1
      ],
      "loc": {
        "file": "examples/echo/echo.cg.cpp",
        "line": 7,
        "column": 3
      }
    }
  ],
  "values": [
    {
      "type": "int",
      "producer": {
        "input": 0
      },
      "transport": "shm"
    },
    {
      "type": "long",
      "producer": {
        "task": 0
      },
      "transport": "shm"
    }
  ],
  "collectives": [],
  "outputs": [
    1
  ]
}
)");
}

TEST(GraphJson, SerializingTheSameGraphTwiceGivesTheSameBytes) {
  EXPECT_EQ(toJson(fanOutGraph()), toJson(fanOutGraph()));
  EXPECT_EQ(toJson(gpuGraph()), toJson(gpuGraph()));
}

// The new fields, in their fixed key order; optional keys appear only when
// they differ from their default.
TEST(GraphJson, ActorConstructorArgumentsAreConstantsWrittenOnlyWhenPresent) {
  nlohmann::ordered_json j = orderedJsonOf(gpuGraph());
  EXPECT_EQ(j["actors"][0].dump(),
            R"({"name":"w0","className":"::Worker","constructorArgs":[)"
            R"({"type":"int","expression":"0"},)"
            R"j({"type":"std::string","expression":"std::string(\"model.bin\")"}],)j"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":61,"column":3}})");
  nlohmann::ordered_json chain = orderedJsonOf(chainGraph());
  EXPECT_FALSE(chain["actors"][0].contains("constructorArgs"));
}

TEST(GraphJson, ATaskWritesItsArgsResultsAndCostButNoCollectiveWhenItHasNone) {
  nlohmann::ordered_json j = orderedJsonOf(gpuGraph());
  EXPECT_EQ(j["tasks"][0].dump(),
            R"({"actor":0,"method":"split","args":[{"value":0},)"
            R"({"constant":{"type":"double","expression":"0.5"}}],)"
            R"("results":[1,2],"cost":2.5,)"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":63,"column":3}})");
  // No cost (0: unknown) and no collective: neither key.
  EXPECT_EQ(j["tasks"][1].dump(),
            R"({"actor":0,"method":"grad","args":[{"value":1}],"results":[3],)"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":64,"column":3}})");
  // An integral cost is still written as a number with a fraction.
  EXPECT_EQ(j["tasks"][2]["cost"].dump(), "12.0");
}

TEST(GraphJson, ACollectiveTaskNamesItsCollective) {
  nlohmann::ordered_json j = orderedJsonOf(gpuGraph());
  EXPECT_EQ(j["tasks"][4].dump(),
            R"({"actor":1,"method":"allreduce","args":[{"value":4}],)"
            R"("results":[6],"collective":0,)"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":66,"column":3}})");
}

TEST(GraphJson, AValueWritesItsTupleElementAndTransport) {
  nlohmann::ordered_json j = orderedJsonOf(gpuGraph());
  EXPECT_EQ(j["values"][0].dump(), R"({"type":"std::vector<float>","producer":{"input":0},)"
                                   R"("transport":"shm"})");
  EXPECT_EQ(j["values"][2].dump(),
            R"({"type":"std::vector<float>","producer":{"task":0,"element":1},)"
            R"("transport":"nccl"})");
  EXPECT_EQ(j["values"][3].dump(), R"({"type":"std::vector<float>","producer":{"task":1},)"
                                   R"("transport":"nccl"})");
}

TEST(GraphJson, CollectivesListTheirKindReduceOpAndRanks) {
  nlohmann::ordered_json j = orderedJsonOf(gpuGraph());
  EXPECT_EQ(j["collectives"].dump(),
            R"([{"kind":"allreduce","reduceOp":"sum","tasks":[3,4],)"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":66,"column":3}},)"
            R"({"kind":"allgather","reduceOp":"","tasks":[5,6],)"
            R"("loc":{"file":"examples/echo/echo.cg.cpp","line":67,"column":3}}])");
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "version", "name", "loc", "inputs", "actors",
                                            "tasks", "values", "collectives", "outputs"}));
}

TEST(GraphJson, TheReduceScatterKindIsWrittenAndReadBack) {
  GraphBuilder g("scatter", 5);
  unsigned x = g.input("std::vector<float>");
  unsigned a = g.actor("a", 6);
  unsigned b = g.actor("b", 7);
  std::vector<unsigned> parts =
      g.collective(ir::Collective::Kind::ReduceScatter, "max", {a, b}, {x, x}, 8);
  g.output(parts[0]).output(parts[1]);
  Graph graph = g.build();
  EXPECT_EQ(orderedJsonOf(graph)["collectives"][0]["kind"], "reducescatter");
  expectRoundTrip(graph);
}

TEST(GraphJson, OptionalKeysWrittenWithTheirDefaultAreAccepted) {
  nlohmann::json j = nlohmann::json::parse(toJson(chainGraph()));
  j["actors"][0]["constructorArgs"] = nlohmann::json::array();
  j["tasks"][0]["cost"] = 0;
  EXPECT_EQ(graphFromJson(j.dump()), chainGraph());
}

TEST(GraphJson, TextThatIsNotJsonIsRejectedWithItsPosition) {
  EXPECT_EQ(errorFor("{"), "invalid cg-ir JSON: parse error at line 1, column 2: syntax error "
                           "while parsing object key - unexpected end of input; expected "
                           "string literal");
}

TEST(GraphJson, ATopLevelArrayIsRejected) {
  EXPECT_EQ(errorFor("[]"), "invalid cg-ir JSON: top level: expected an object, got array");
}

TEST(GraphJson, AMissingFormatIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j.erase("format"); }),
            "invalid cg-ir JSON: top level: missing key 'format'");
}

TEST(GraphJson, AnotherFormatIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["format"] = "other"; }),
            "invalid cg-ir JSON: format: expected \"cg-ir\", got \"other\"");
}

TEST(GraphJson, AnotherVersionIsRejected) {
  // Version 1 files (one "result" per task, bare value ids as args) predate
  // constants, tuple elements, transports and collectives.
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["version"] = 1; }),
            "invalid cg-ir JSON: version: unsupported version 1; this cgc reads "
            "version 2");
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["version"] = 3; }),
            "invalid cg-ir JSON: version: unsupported version 3; this cgc reads "
            "version 2");
}

TEST(GraphJson, AMissingTopLevelKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j.erase("values"); }),
            "invalid cg-ir JSON: top level: missing key 'values'");
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j.erase("collectives"); }),
            "invalid cg-ir JSON: top level: missing key 'collectives'");
}

TEST(GraphJson, AnUnknownKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["extra"] = true; }),
            "invalid cg-ir JSON: top level: unknown key 'extra'");
}

TEST(GraphJson, AMissingTaskKeyIsRejectedWithItsPath) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][1].erase("method"); }),
            "invalid cg-ir JSON: tasks[1]: missing key 'method'");
}

TEST(GraphJson, AStringWhereAnIdBelongsIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["actor"] = "a"; }),
            "invalid cg-ir JSON: tasks[0].actor: expected a non-negative integer, got "
            "string");
}

TEST(GraphJson, ANegativeIdIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][1]["args"][0]["value"] = -1; }),
            "invalid cg-ir JSON: tasks[1].args[0].value: expected a non-negative "
            "integer, got -1");
}

TEST(GraphJson, ABareValueIdAsAnArgumentIsRejected) {
  // The version 1 spelling of an argument.
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][1]["args"][0] = 1; }),
            "invalid cg-ir JSON: tasks[1].args[0]: expected an object, got 1");
}

TEST(GraphJson, AnArgumentThatIsBothAValueAndAConstantIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["tasks"][1]["args"][0]["constant"] = {{"type", "int"}, {"expression", "1"}};
            }),
            "invalid cg-ir JSON: tasks[1].args[0]: expected exactly one key, "
            "'value' or 'constant'");
}

TEST(GraphJson, AnArgumentOfAnUnknownKindIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["tasks"][1]["args"][0] = {{"input", 0}};
            }),
            "invalid cg-ir JSON: tasks[1].args[0]: unknown key 'input'; "
            "expected 'value' or 'constant'");
}

TEST(GraphJson, AConstantWithoutAnExpressionIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) {
              j["tasks"][0]["args"][1]["constant"].erase("expression");
            }),
            "invalid cg-ir JSON: tasks[0].args[1].constant: missing key "
            "'expression'");
}

TEST(GraphJson, ANonStringConstantTypeIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu(
                [](nlohmann::json& j) { j["actors"][1]["constructorArgs"][0]["type"] = 4; }),
            "invalid cg-ir JSON: actors[1].constructorArgs[0].type: expected a "
            "string, got 4");
}

TEST(GraphJson, AnEmptyConstantExpressionIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu(
                [](nlohmann::json& j) { j["actors"][1]["constructorArgs"][1]["expression"] = ""; }),
            "invalid cg-ir JSON: actors[1].constructorArgs[1].expression is "
            "empty");
}

TEST(GraphJson, AVersionOneResultKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["tasks"][0].erase("results");
              j["tasks"][0]["result"] = 1;
            }),
            "invalid cg-ir JSON: tasks[0]: missing key 'results'");
}

TEST(GraphJson, ABareResultIdIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["results"] = 1; }),
            "invalid cg-ir JSON: tasks[0].results: expected an array, got 1");
}

TEST(GraphJson, ANonNumericCostIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) { j["tasks"][0]["cost"] = "high"; }),
            "invalid cg-ir JSON: tasks[0].cost: expected a number, got string");
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) { j["tasks"][0]["cost"] = true; }),
            "invalid cg-ir JSON: tasks[0].cost: expected a number, got true");
}

TEST(GraphJson, ANegativeCostIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) { j["tasks"][0]["cost"] = -2; }),
            "invalid cg-ir JSON: tasks[0].cost is -2 but a cost must be finite "
            "and not negative (0: unknown)");
}

TEST(GraphJson, ACostTooLargeForADoubleIsRejected) {
  std::string text = toJson(gpuGraph());
  std::size_t at = text.find("\"cost\": 2.5");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"cost\": 1e400");
  EXPECT_EQ(errorFor(text), "invalid cg-ir JSON: number overflow parsing '1e400'");
}

TEST(GraphJson, ANegativeCollectiveIdIsRejected) {
  // "No collective" is spelled by leaving the key out, never as -1.
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["collective"] = -1; }),
            "invalid cg-ir JSON: tasks[0].collective: expected a non-negative "
            "integer, got -1");
}

TEST(GraphJson, ACollectiveIdTooLargeForIntIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["collective"] = 3000000000u; }),
            "invalid cg-ir JSON: tasks[0].collective: integer 3000000000 is too "
            "large");
}

TEST(GraphJson, AnUnknownTaskKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["priority"] = 1; }),
            "invalid cg-ir JSON: tasks[0]: unknown key 'priority'");
}

TEST(GraphJson, AFractionalLineIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["actors"][0]["loc"]["line"] = 1.5; }),
            "invalid cg-ir JSON: actors[0].loc.line: expected a non-negative "
            "integer, got 1.5");
}

TEST(GraphJson, AnIdTooLargeForUnsignedIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["outputs"][0] = 5000000000u; }),
            "invalid cg-ir JSON: outputs[0]: integer 5000000000 is too large");
}

TEST(GraphJson, ANonStringNameIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["name"] = nullptr; }),
            "invalid cg-ir JSON: name: expected a string, got null");
}

TEST(GraphJson, ANonArrayListIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["actors"] = 3; }),
            "invalid cg-ir JSON: actors: expected an array, got 3");
}

TEST(GraphJson, AProducerWithTwoKindsIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["values"][1]["producer"]["input"] = 0; }),
            "invalid cg-ir JSON: values[1].producer: expected exactly one of "
            "'input' and 'task', got both");
}

TEST(GraphJson, AProducerOfAnUnknownKindIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][1]["producer"] = {{"constant", 0}};
            }),
            "invalid cg-ir JSON: values[1].producer: unknown key 'constant'; "
            "expected 'input' or 'task' (with 'element' for a task's tuple "
            "element)");
}

TEST(GraphJson, AProducerWithOnlyAnElementIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][1]["producer"] = {{"element", 0}};
            }),
            "invalid cg-ir JSON: values[1].producer: missing key 'input' or "
            "'task'");
}

TEST(GraphJson, AnInputWithAnElementIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["values"][0]["producer"]["element"] = 0; }),
            "invalid cg-ir JSON: values[0].producer: key 'element' is only "
            "allowed with 'task'");
}

TEST(GraphJson, ANegativeElementIsRejected) {
  // "Not an element" is spelled by leaving the key out, never as -1.
  EXPECT_EQ(
      errorAfterEditing([](nlohmann::json& j) { j["values"][1]["producer"]["element"] = -1; }),
      "invalid cg-ir JSON: values[1].producer.element: expected a "
      "non-negative integer, got -1");
}

TEST(GraphJson, AMissingTransportIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["values"][1].erase("transport"); }),
            "invalid cg-ir JSON: values[1]: missing key 'transport'");
}

TEST(GraphJson, AnUnknownTransportIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["values"][1]["transport"] = "SHM"; }),
            "invalid cg-ir JSON: values[1].transport: unknown transport \"SHM\"; "
            "expected \"shm\", \"nccl\", \"cpu\", \"cuda\" or \"cuda_ipc\"");
}

TEST(GraphJson, GpusAndDeviceTransportsSurviveARoundTripAndAreWrittenOnlyWhenSet) {
  Graph graph = chainGraph();
  graph.actors[0].gpus = 2;
  graph.values[1].transport = Transport::Cuda;
  graph.values[1].cudaDevice = 1;
  graph.values[2].transport = Transport::Cpu;
  expectRoundTrip(graph);
  nlohmann::ordered_json j = orderedJsonOf(graph);
  EXPECT_EQ(j["actors"][0]["gpus"].dump(), "2");
  EXPECT_FALSE(j["actors"][1].contains("gpus"));
  EXPECT_EQ(j["values"][1]["transport"].dump(), R"("cuda")");
  EXPECT_EQ(j["values"][1]["cudaDevice"].dump(), "1");
  EXPECT_EQ(j["values"][2]["transport"].dump(), R"("cpu")");
  EXPECT_FALSE(j["values"][2].contains("cudaDevice"));
}

TEST(GraphJson, ANegativeGpuCountIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["actors"][0]["gpus"] = -1; }),
            "invalid cg-ir JSON: actors[0].gpus: expected a non-negative integer, got -1");
}

TEST(GraphJson, AnUnknownCollectiveKindIsRejected) {
  EXPECT_EQ(
      errorAfterEditingGpu([](nlohmann::json& j) { j["collectives"][0]["kind"] = "broadcast"; }),
      "invalid cg-ir JSON: collectives[0].kind: unknown collective kind "
      "\"broadcast\"; expected \"allreduce\", \"allgather\" or "
      "\"reducescatter\"");
}

TEST(GraphJson, ACollectiveWithoutAReduceOpKeyIsRejected) {
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) { j["collectives"][1].erase("reduceOp"); }),
            "invalid cg-ir JSON: collectives[1]: missing key 'reduceOp'");
}

TEST(GraphJson, AnActorIdOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][1]["actor"] = 4; }),
            "invalid cg-ir JSON: tasks[1].actor is 4 but the graph has only 2 actors");
}

TEST(GraphJson, AnArgumentIdOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][1]["args"][0]["value"] = 7; }),
            "invalid cg-ir JSON: tasks[1].args[0].value is 7 but the graph has "
            "only 3 values");
}

TEST(GraphJson, AnOutputIdOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["outputs"][0] = 3; }),
            "invalid cg-ir JSON: outputs[0] is 3 but the graph has only 3 "
            "values");
}

TEST(GraphJson, AProducerTaskOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][2]["producer"] = {{"task", 9}};
            }),
            "invalid cg-ir JSON: values[2].producer is task #9 but the graph "
            "has only 2 tasks");
}

TEST(GraphJson, AValueWhoseProducerDisagreesWithTheTaskIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][2]["producer"] = {{"task", 0}};
            }),
            "invalid cg-ir JSON: values[2].producer is task #0 but "
            "tasks[0].results is [1]");
}

TEST(GraphJson, ATaskReadingALaterTasksResultIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["args"][0]["value"] = 2; }),
            "invalid cg-ir JSON: tasks[0].args[0].value is 2, the result of "
            "task #1, which is not bound before task #0");
}

TEST(GraphJson, AnElementThatDisagreesWithTheTasksResultsIsRejected) {
  EXPECT_EQ(
      errorAfterEditingGpu([](nlohmann::json& j) { j["values"][2]["producer"]["element"] = 0; }),
      "invalid cg-ir JSON: values[2].producer is element #0 of task #0 "
      "but tasks[0].results is [1, 2]");
}

TEST(GraphJson, AnUnpackedElementWithoutItsElementIndexIsRejected) {
  EXPECT_EQ(
      errorAfterEditingGpu([](nlohmann::json& j) { j["values"][1]["producer"].erase("element"); }),
      "invalid cg-ir JSON: values[1].producer is task #0 but "
      "tasks[0].results is [1, 2]");
}

TEST(GraphJson, ACollectiveIdOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["collective"] = 0; }),
            "invalid cg-ir JSON: tasks[0].collective is 0 but the graph has "
            "only 0 collectives");
}

TEST(GraphJson, ACollectiveListingATaskOutOfRangeIsRejected) {
  EXPECT_EQ(
      errorAfterEditingGpu([](nlohmann::json& j) { j["collectives"][0]["tasks"].push_back(7); }),
      "invalid cg-ir JSON: collectives[0].tasks[2] is 7 but the graph has "
      "only 7 tasks");
}

TEST(GraphJson, ACollectiveAndItsTaskThatDisagreeAreRejected) {
  EXPECT_EQ(errorAfterEditingGpu([](nlohmann::json& j) { j["tasks"][5]["collective"] = 0; }),
            "invalid cg-ir JSON: tasks[5].collective is 0 but "
            "collectives[0].tasks does not list task #5");
}

TEST(GraphJson, AnActorsHostSurvivesARoundTripAndIsWrittenOnlyWhenNotZero) {
  Graph graph = chainGraph();
  graph.actors[1].host = 3;
  expectRoundTrip(graph);
  std::string text = toJson(graph);
  EXPECT_EQ(text.find("\"host\""), text.rfind("\"host\"")); // b's only
  EXPECT_NE(text.find("\"host\": 3"), std::string::npos) << text;
}

// The fast path (graphFromPlainJson) reads plain text in one pass and leaves
// anything else to the full parser, which alone writes the messages above.

TEST(GraphJsonFastPath, ReadsEveryFixtureAsToJsonWroteIt) {
  for (const Graph& graph : {chainGraph(), fanOutGraph(), sameActorGraph(), tupleGraph(),
                             gpuGraph(), GraphBuilder("empty").build()}) {
    std::optional<Graph> read = graphFromPlainJson(toJson(graph));
    ASSERT_TRUE(read) << graph.name;
    EXPECT_EQ(*read, graph);
  }
}

TEST(GraphJsonFastPath, ReadsHostsGpusAndDeviceTransports) {
  Graph graph = chainGraph();
  graph.actors[0].gpus = 2;
  graph.actors[1].host = 3;
  graph.values[0].transport = Transport::Cuda;
  graph.values[0].cudaDevice = 1;
  graph.values[1].transport = Transport::Cpu;
  std::optional<Graph> read = graphFromPlainJson(toJson(graph));
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, graph);
}

TEST(GraphJsonFastPath, ReadsStringsWithEscapesOfOneCharacter) {
  GraphBuilder g("escapes", 5);
  unsigned x = g.input("double");
  unsigned a = g.actor("a", 6, "::ns::Doubler",
                       {constant("const char*", "\"quote \\\" slash / back \\\\ \\n\t\"")});
  g.output(g.bind(a, "f", {x}, 7, "double"));
  Graph graph = g.build();
  std::optional<Graph> read = graphFromPlainJson(toJson(graph));
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, graph);
}

TEST(GraphJsonFastPath, ReadsKeysInAnyOrderAndCompactText) {
  // nlohmann::json sorts keys and dump() writes no spaces.
  std::optional<Graph> read = graphFromPlainJson(nlohmann::json::parse(toJson(gpuGraph())).dump());
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, gpuGraph());
}

TEST(GraphJsonFastPath, ReadsCostsAndLargeIdsAsTheFullParserDoes) {
  for (const char* cost : {"0", "3", "0.1", "1E2", "2.5e-3", "1e300", "18446744073709551616"}) {
    nlohmann::json j = nlohmann::json::parse(toJson(chainGraph()));
    j["tasks"][0]["cost"] = 12345;
    std::string text = j.dump();
    text.replace(text.find("12345"), 5, cost);
    std::optional<Graph> read = graphFromPlainJson(text);
    ASSERT_TRUE(read) << cost;
    EXPECT_EQ(read->tasks[0].cost, nlohmann::json::parse(cost).get<double>()) << cost;
  }
  nlohmann::json j = nlohmann::json::parse(toJson(chainGraph()));
  j["loc"]["line"] = 4294967295u;
  std::optional<Graph> read = graphFromPlainJson(j.dump());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->loc.line, 4294967295u);
}

TEST(GraphJsonFastPath, LeavesAnythingUnusualToTheFullParser) {
  std::string text = nlohmann::json::parse(toJson(chainGraph())).dump();
  auto edited = [&](std::string_view from, std::string_view to) {
    std::string copy = text;
    std::size_t at = copy.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return copy.replace(at, from.size(), to);
  };
  for (const std::string& unusual :
       {edited("\"name\":\"chain\"", "\"name\":\"ch\\u0061in\""),  // a \u escape
        edited("\"name\":\"chain\"", "\"name\":\"ch\xc3\xa4in\""), // not ASCII
        edited("\"name\":\"chain\"", "\"name\":\"chain\",\"name\":\"chain\""),
        edited("\"line\":", "\"line\":0"), // a leading zero
        edited("\"actor\":0", "\"actor\":-0"), edited("\"actor\":0", "\"actor\":0.0"),
        edited("\"actor\":0", "\"actor\":4294967296"), edited("{\"value\":0}", "{}"),
        edited("\"version\":2", "\"version\":3"),
        edited("\"format\":\"cg-ir\"", "\"format\":\"other\""), text + "x", "\xef\xbb\xbf" + text,
        std::string("[]"), std::string()}) {
    EXPECT_FALSE(graphFromPlainJson(unusual)) << unusual;
  }
  nlohmann::json j = nlohmann::json::parse(toJson(chainGraph()));
  j["tasks"][0]["cost"] = -2;
  EXPECT_FALSE(graphFromPlainJson(j.dump()));
}

} // namespace
} // namespace cg::ir
