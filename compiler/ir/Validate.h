//===- Validate.h - Semantic checks on the graph IR --------------*- C++ -*-===//
//
// The frontend records whatever the user's graph function did; this pass
// decides whether that graph can be compiled (it has outputs, every result is
// used, actor names are unique...) and explains why not in the user's terms.
// The scheduler may assume a graph that passed validate().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace cg::ir {

/// Returns the problems in the user's graph, in a deterministic order (empty
/// when the graph is fine). Throws cg::InternalError ("internal compiler error:
/// ...") when the IR itself is inconsistent, which is a bug in cgc, not in the
/// user's code.
std::vector<Diagnostic> validate(const Graph& graph);

/// Describes the first broken structural invariant of the IR (an id out of
/// range, a value whose producer (task and tuple element) does not name it
/// back in the task's results, a task argument not created before the task,
/// an empty constant, a negative or non-finite cost, a collective and its
/// tasks not naming each other, one actor taking two ranks of a collective),
/// or returns std::nullopt when there is none.
/// Messages name fields the way `<graph>.ir.json` spells them, e.g.
/// "tasks[1].actor is 4 but the graph has only 2 actors", so that both the
/// validator (as an internal error) and the JSON reader (as malformed input)
/// can report them.
std::optional<std::string> findInconsistency(const Graph& graph);

} // namespace cg::ir
