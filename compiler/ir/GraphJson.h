//===- GraphJson.h - The graph IR as `<graph>.ir.json` -----------*- C++ -*-===//
//
// The JSON form of the IR is what cgc writes next to the generated code, so a
// user (or a test) can see exactly what the frontend understood. cgc only
// writes it; the tests read it back (tests/unit/compiler/GraphJsonReader.h)
// to build graphs and check the writer.
//
// Layout (keys always in this order; keys marked `?` are written only when
// they differ from their default, and read as that default when absent):
//
//   { "format": "cg-ir", "version": 2, "name": ..., "loc": LOC,
//     "inputs": [value ids],
//     "actors": [{"name", "className", "constructorArgs"?: [CONSTANT],
//                 "loc", "host"?: logical host, "gpus"?: count}],
//     "tasks": [{"actor", "method", "args": [ARG], "results": [value ids],
//                "collective"?: collective id, "cost"?: number, "loc"}],
//     "values": [{"type", "producer": PRODUCER,
//                 "transport": "shm" | "nccl" | "cpu" | "cuda" | "cuda_ipc",
//                 "cudaDevice"?: device index}],
//     "collectives": [{"kind": "allreduce" | "allgather" | "reducescatter",
//                      "reduceOp": string ("" for allgather),
//                      "tasks": [task ids, in rank order], "loc"}],
//     "outputs": [value ids] }
//
// where LOC is {"file", "line", "column"} (cgc writes the file relative to
// the graph source's directory), CONSTANT is {"type", "expression"},
// ARG is {"value": value id} or {"constant": CONSTANT}, and PRODUCER is
// {"input": i}, {"task": t}, or {"task": t, "element": k} for element k of a
// std::tuple result that the graph unpacks. Defaults: no constructorArgs, no
// collective, cost 0 (unknown), no element, host 0, no GPUs, cuda device 0.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>
#include <string_view>

namespace cg::ir {

/// The "format" and "version" every file starts with.
inline constexpr std::string_view kJsonFormat = "cg-ir";
inline constexpr unsigned kJsonVersion = 2;

/// Serializes the graph: pretty-printed with a 2-space indent, keys in the
/// fixed order above, ending in a newline. The same graph always gives the
/// same bytes, so the file can be diffed and checked in as a golden.
std::string toJson(const Graph& graph);

} // namespace cg::ir
