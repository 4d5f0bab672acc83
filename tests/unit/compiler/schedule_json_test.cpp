//===- schedule_json_test.cpp - Tests for `<graph>.schedule.json` ---------===//

#include "schedule/ScheduleJson.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace cg::schedule {
namespace {

using test::scheduleOf;

TEST(ScheduleJson, TheChainIsWrittenInFullInTheDocumentedLayout) {
  ir::Graph graph = test::chainGraph();
  EXPECT_EQ(renderScheduleJson(graph, scheduleOf(graph)),
            R"({
  "format": "cg-schedule",
  "version": 1,
  "graph": "chain",
  "loc": "echo.cg.cpp:10",
  "options": {
    "order": "bind",
    "overlapGpuCommunication": false,
    "maxInFlight": 10
  },
  "simulation": {
    "executions": 11,
    "makespan": 2.0,
    "busiest": 1.0,
    "peakInFlight": 0
  },
  "channels": [
    {
      "id": 0,
      "value": "input #0",
      "type": "std::string",
      "transport": "shm",
      "writer": "driver",
      "readers": [
        "a"
      ]
    },
    {
      "id": 1,
      "value": "a.echo",
      "type": "std::string",
      "transport": "shm",
      "writer": "a",
      "readers": [
        "b"
      ]
    },
    {
      "id": 2,
      "value": "b.echo",
      "type": "std::string",
      "transport": "shm",
      "writer": "b",
      "readers": [
        "driver"
      ]
    }
  ],
  "groups": [],
  "actors": [
    {
      "name": "a",
      "class": "::EchoActor",
      "operations": [
        {
          "number": 1,
          "step": 0,
          "kind": "READ",
          "task": 0,
          "call": "a.echo",
          "loc": "echo.cg.cpp:13",
          "channels": [
            0
          ],
          "start": 0.0,
          "finish": 0.0
        },
        {
          "number": 2,
          "step": 1,
          "kind": "COMPUTE",
          "task": 0,
          "call": "a.echo",
          "loc": "echo.cg.cpp:13",
          "channels": [],
          "start": 0.0,
          "finish": 1.0
        },
        {
          "number": 3,
          "step": 2,
          "kind": "WRITE",
          "task": 0,
          "call": "a.echo",
          "loc": "echo.cg.cpp:13",
          "channels": [
            1
          ],
          "start": 1.0,
          "finish": 1.0
        }
      ]
    },
    {
      "name": "b",
      "class": "::EchoActor",
      "operations": [
        {
          "number": 1,
          "step": 3,
          "kind": "READ",
          "task": 1,
          "call": "b.echo",
          "loc": "echo.cg.cpp:14",
          "channels": [
            1
          ],
          "start": 1.0,
          "finish": 1.0
        },
        {
          "number": 2,
          "step": 4,
          "kind": "COMPUTE",
          "task": 1,
          "call": "b.echo",
          "loc": "echo.cg.cpp:14",
          "channels": [],
          "start": 1.0,
          "finish": 2.0
        },
        {
          "number": 3,
          "step": 5,
          "kind": "WRITE",
          "task": 1,
          "call": "b.echo",
          "loc": "echo.cg.cpp:14",
          "channels": [
            2
          ],
          "start": 2.0,
          "finish": 2.0
        }
      ]
    }
  ],
  "driver": {
    "inputs": [
      0
    ],
    "outputs": [
      2
    ]
  },
  "steps": [
    [
      {
        "actor": "a",
        "operation": 1
      }
    ],
    [
      {
        "actor": "a",
        "operation": 2
      }
    ],
    [
      {
        "actor": "a",
        "operation": 3
      }
    ],
    [
      {
        "actor": "b",
        "operation": 1
      }
    ],
    [
      {
        "actor": "b",
        "operation": 2
      }
    ],
    [
      {
        "actor": "b",
        "operation": 3
      }
    ]
  ]
}
)");
}

TEST(ScheduleJson, GroupsAndMovedOperationsAreMarked) {
  ir::Graph graph = test::gpuGraph();
  ScheduleOptions options;
  options.overlapGpuCommunication = true;
  nlohmann::json j = nlohmann::json::parse(renderScheduleJson(graph, scheduleOf(graph, options)));
  EXPECT_EQ(j["options"]["overlapGpuCommunication"], true);
  EXPECT_EQ(j["groups"].dump(),
            R"([{"channel":1,"id":0,"kind":"nccl","members":[{"actor":"w0","operation":3},)"
            R"({"actor":"w1","operation":1}]},{"collective":0,"id":1,"kind":"allreduce",)"
            R"("members":[{"actor":"w0","operation":5},{"actor":"w1","operation":3}]},)"
            R"({"collective":1,"id":2,"kind":"allgather","members":[{"actor":"w1",)"
            R"("operation":4},{"actor":"w0","operation":6}]}])");
  EXPECT_EQ(j["actors"][1]["operations"][0]["group"], 0);
  EXPECT_FALSE(j["actors"][1]["operations"][0].contains("moved"));
  // A group's members share one step.
  EXPECT_EQ(j["actors"][0]["operations"][2]["step"], j["actors"][1]["operations"][0]["step"]);
}

TEST(ScheduleJson, TheSameScheduleGivesTheSameBytes) {
  ir::Graph graph = test::gpuGraph();
  EXPECT_EQ(renderScheduleJson(graph, scheduleOf(graph)),
            renderScheduleJson(graph, scheduleOf(graph)));
}

} // namespace
} // namespace cg::schedule
