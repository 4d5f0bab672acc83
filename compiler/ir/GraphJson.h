//===- GraphJson.h - The graph IR as `<graph>.ir.json` -----------*- C++ -*-===//
//
// The JSON form of the IR is what cgc writes next to the generated code, so a
// user (or a test) can see exactly what the frontend understood, and what
// cgc can read back to schedule and generate code without re-parsing C++.
//
// Layout (keys always in this order; keys marked `?` are written only when
// they differ from their default, and read as that default when absent):
//
//   { "format": "cg-ir", "version": 2, "name": ..., "loc": LOC,
//     "inputs": [value ids],
//     "actors": [{"name", "className", "constructorArgs"?: [CONSTANT],
//                 "loc"}],
//     "tasks": [{"actor", "method", "args": [ARG], "results": [value ids],
//                "collective"?: collective id, "cost"?: number, "loc"}],
//     "values": [{"type", "producer": PRODUCER, "transport": "shm" | "nccl"}],
//     "collectives": [{"kind": "allreduce" | "allgather" | "reducescatter",
//                      "reduceOp": string ("" for allgather),
//                      "tasks": [task ids, in rank order], "loc"}],
//     "outputs": [value ids] }
//
// where LOC is {"file", "line", "column"}, CONSTANT is {"type", "expression"},
// ARG is {"value": value id} or {"constant": CONSTANT}, and PRODUCER is
// {"input": i}, {"task": t}, or {"task": t, "element": k} for element k of a
// std::tuple result that the graph unpacks. Defaults: no constructorArgs, no
// collective, cost 0 (unknown), no element.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <optional>
#include <string>
#include <string_view>

namespace cg::ir {

/// Serializes the graph: pretty-printed with a 2-space indent, keys in the
/// fixed order above, ending in a newline. The same graph always gives the
/// same bytes, so the file can be diffed and checked in as a golden.
std::string toJson(const Graph& graph);

/// Parses what toJson() wrote. Throws std::runtime_error("invalid cg-ir JSON:
/// ...") naming the offending field (e.g. "tasks[0].actor") when the text is
/// not JSON, a key is missing or unknown, a field has the wrong type, the
/// format or version is not ours, or the ids do not line up.
Graph graphFromJson(std::string_view text);

/// The fast path of graphFromJson(), alone: the graph (not yet checked for
/// consistency) when the text is plain JSON of the layout above, as toJson()
/// writes it; nullopt for anything else, which graphFromJson() then reads
/// with a full JSON parser to say what is wrong. Exposed for tests.
std::optional<Graph> graphFromPlainJson(std::string_view text);

} // namespace cg::ir
