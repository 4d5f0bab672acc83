//===- ScheduleJson.h - The schedule as `<graph>.schedule.json` --*- C++ -*-===//
//
// The same facts as `<graph>.schedule.txt`, for tools: per actor its
// numbered operations (with the global step, the group, whether overlap
// moved it, and when it runs in one simulated execution), the channels, the
// synchronous groups and the global order. Layout (keys in this order):
//
//   { "format": "cg-schedule", "version": 1, "graph": name, "loc": "file:line",
//     "options": {"order": "bind" | "cost", "overlapGpuCommunication": bool,
//                 "maxInFlight": K},
//     "simulation": {"executions", "makespan", "busiest", "peakInFlight"},
//     "channels": [{"id", "value", "type", "transport", "writer", "readers"}],
//     "groups": [{"id", "kind": "nccl" | "allreduce" | ..., "channel" or
//                 "collective", "members": [{"actor", "operation"}]}],
//     "actors": [{"name", "class", "operations": [{"number", "step", "kind",
//                 "task", "call", "loc", "channels", "group"?, "moved"?,
//                 "start", "finish"}]}],
//     "driver": {"inputs": [channel ids], "outputs": [channel ids]},
//     "steps": [[{"actor", "operation"}]] }
//
// Operation numbers count from 1 as in the text; "group" and "moved" appear
// only when set. Deterministic, ending in a newline.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <string>

namespace cg::schedule {

/// `tcpEverywhere`: see channelTransport().
std::string renderScheduleJson(const ir::Graph& graph, const Schedule& schedule,
                               bool tcpEverywhere = false);

} // namespace cg::schedule
