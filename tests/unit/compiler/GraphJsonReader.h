//===- GraphJsonReader.h - Reading <graph>.ir.json back, for tests -*- C++ -*-===//
//
// cgc writes the IR as JSON (ir/GraphJson.h) and never reads it; the tests
// do, to build graphs from golden files, to check the writer round-trips,
// and the scheduler benchmark, to feed 100,000-task graphs to the scheduler
// alone. So the reader lives with them, not in the product.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <optional>
#include <string_view>

namespace cg::ir {

/// Parses what toJson() wrote. Throws std::runtime_error("invalid cg-ir JSON:
/// ...") naming the offending field (e.g. "tasks[0].actor") when the text is
/// not JSON, a key is missing or unknown, a field has the wrong type, the
/// format or version is not ours, or the ids do not line up.
Graph graphFromJson(std::string_view text);

/// The fast path of graphFromJson(), alone: the graph (not yet checked for
/// consistency) when the text is plain JSON of the layout above, as toJson()
/// writes it; nullopt for anything else, which graphFromJson() then reads
/// with a full JSON parser to say what is wrong.
std::optional<Graph> graphFromPlainJson(std::string_view text);

} // namespace cg::ir
