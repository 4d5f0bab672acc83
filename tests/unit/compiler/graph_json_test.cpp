//===- graph_json_test.cpp - Tests for the IR's JSON form -----------------===//
//
// `<graph>.ir.json` must round-trip exactly (cgc may schedule from it) and
// must be rejected, with the offending field named, whenever it is not
// something toJson() could have written.
//
//===----------------------------------------------------------------------===//

#include "ir/GraphJson.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cg::ir {
namespace {

using test::chainGraph;
using test::fanOutGraph;
using test::GraphBuilder;
using test::sameActorGraph;

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

void expectRoundTrip(const Graph& graph) {
  std::string text = toJson(graph);
  Graph parsed = graphFromJson(text);
  EXPECT_EQ(parsed, graph);
  EXPECT_EQ(toJson(parsed), text);
}

TEST(GraphJson, ChainGraphSurvivesARoundTrip) { expectRoundTrip(chainGraph()); }

TEST(GraphJson, FanOutGraphWithThreeOutputsSurvivesARoundTrip) {
  expectRoundTrip(fanOutGraph());
}

TEST(GraphJson, TwoTasksOnOneActorWithALocalEdgeSurviveARoundTrip) {
  expectRoundTrip(sameActorGraph());
}

TEST(GraphJson, AnEmptyGraphSurvivesARoundTrip) {
  expectRoundTrip(GraphBuilder("empty").build());
}

TEST(GraphJson, OutputIsPrettyStableAndEndsInANewline) {
  GraphBuilder g("single", 5);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 6, "::ns::Doubler");
  g.output(g.bind(a, "twice", {x}, 7, "long"));

  EXPECT_EQ(toJson(g.build()), R"({
  "format": "cg-ir",
  "version": 1,
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
        0
      ],
      "result": 1,
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
      }
    },
    {
      "type": "long",
      "producer": {
        "task": 0
      }
    }
  ],
  "outputs": [
    1
  ]
}
)");
}

TEST(GraphJson, SerializingTheSameGraphTwiceGivesTheSameBytes) {
  EXPECT_EQ(toJson(fanOutGraph()), toJson(fanOutGraph()));
}

TEST(GraphJson, TextThatIsNotJsonIsRejectedWithItsPosition) {
  EXPECT_EQ(errorFor("{"),
            "invalid cg-ir JSON: parse error at line 1, column 2: syntax error "
            "while parsing object key - unexpected end of input; expected "
            "string literal");
}

TEST(GraphJson, ATopLevelArrayIsRejected) {
  EXPECT_EQ(errorFor("[]"),
            "invalid cg-ir JSON: top level: expected an object, got array");
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
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["version"] = 2; }),
            "invalid cg-ir JSON: version: unsupported version 2; this cgc reads "
            "version 1");
}

TEST(GraphJson, AMissingTopLevelKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j.erase("values"); }),
            "invalid cg-ir JSON: top level: missing key 'values'");
}

TEST(GraphJson, AnUnknownKeyIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) { j["extra"] = true; }),
            "invalid cg-ir JSON: top level: unknown key 'extra'");
}

TEST(GraphJson, AMissingTaskKeyIsRejectedWithItsPath) {
  EXPECT_EQ(
      errorAfterEditing([](nlohmann::json& j) { j["tasks"][1].erase("method"); }),
      "invalid cg-ir JSON: tasks[1]: missing key 'method'");
}

TEST(GraphJson, AStringWhereAnIdBelongsIsRejected) {
  EXPECT_EQ(
      errorAfterEditing([](nlohmann::json& j) { j["tasks"][0]["actor"] = "a"; }),
      "invalid cg-ir JSON: tasks[0].actor: expected a non-negative integer, got "
      "string");
}

TEST(GraphJson, ANegativeIdIsRejected) {
  EXPECT_EQ(errorAfterEditing(
                [](nlohmann::json& j) { j["tasks"][1]["args"][0] = -1; }),
            "invalid cg-ir JSON: tasks[1].args[0]: expected a non-negative "
            "integer, got -1");
}

TEST(GraphJson, AFractionalLineIsRejected) {
  EXPECT_EQ(errorAfterEditing(
                [](nlohmann::json& j) { j["actors"][0]["loc"]["line"] = 1.5; }),
            "invalid cg-ir JSON: actors[0].loc.line: expected a non-negative "
            "integer, got 1.5");
}

TEST(GraphJson, AnIdTooLargeForUnsignedIsRejected) {
  EXPECT_EQ(errorAfterEditing(
                [](nlohmann::json& j) { j["outputs"][0] = 5000000000u; }),
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
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][1]["producer"]["input"] = 0;
            }),
            "invalid cg-ir JSON: values[1].producer: expected exactly one key, "
            "'input' or 'task'");
}

TEST(GraphJson, AProducerOfAnUnknownKindIsRejected) {
  EXPECT_EQ(errorAfterEditing([](nlohmann::json& j) {
              j["values"][1]["producer"] = {{"constant", 0}};
            }),
            "invalid cg-ir JSON: values[1].producer: unknown key 'constant'; "
            "expected 'input' or 'task'");
}

TEST(GraphJson, AnActorIdOutOfRangeIsRejected) {
  EXPECT_EQ(
      errorAfterEditing([](nlohmann::json& j) { j["tasks"][1]["actor"] = 4; }),
      "invalid cg-ir JSON: tasks[1].actor is 4 but the graph has only 2 actors");
}

TEST(GraphJson, AnArgumentIdOutOfRangeIsRejected) {
  EXPECT_EQ(errorAfterEditing(
                [](nlohmann::json& j) { j["tasks"][1]["args"][0] = 7; }),
            "invalid cg-ir JSON: tasks[1].args[0] is 7 but the graph has only 3 "
            "values");
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
            "tasks[0].result is value 1");
}

TEST(GraphJson, ATaskReadingALaterTasksResultIsRejected) {
  EXPECT_EQ(errorAfterEditing(
                [](nlohmann::json& j) { j["tasks"][0]["args"][0] = 2; }),
            "invalid cg-ir JSON: tasks[0].args[0] is value 2, the result of "
            "task #1, which is not bound before task #0");
}

} // namespace
} // namespace cg::ir
