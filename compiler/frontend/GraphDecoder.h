//===- GraphDecoder.h - Constant-evaluated records to graph IR ---*- C++ -*-===//
//
// `cg::detail::encode<&graph, R, T>()` (runtime/include/cg/builder.hpp) yields
// an array of records whose tags point at template variables instantiated for
// the actor classes, value types and bound methods. This decoder reads that
// APValue back, maps each tag to its declaration and builds the ir::Graph,
// checking what only the AST can tell (CG_ACTOR, public methods, types that
// can be sent), and noting the aggregates whose codecs cgc must generate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Serializers.h"
#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include "clang/AST/APValue.h"
#include "clang/AST/ASTContext.h"

#include <cstdint>
#include <variant>
#include <vector>

namespace cg::frontend {

struct GraphFunction {
  std::string name; // qualified, without a leading '::'
  ir::SourceLoc loc;
  bool actorSet = false; // a CG_ACTOR_SET function, evaluated as a graph is
  std::string over;      // CG_GRAPH_OVER(set): the set's qualified name
};

/// How many records and characters of text a graph made, and whether they
/// fit the arrays of the encode<> that was evaluated (else: evaluate again
/// with these sizes).
struct EncodedSizes {
  uint64_t records = 0;
  uint64_t text = 0;
  bool fit = false;
};
EncodedSizes encodedSizes(const clang::APValue& encoded);

/// The graph in `encoded` (whose records fit), or the problems found in it.
std::variant<ir::Graph, std::vector<ir::Diagnostic>> decodeGraph(const clang::APValue& records,
                                                                 const GraphFunction& function,
                                                                 SerializerPlanner& serializers);

} // namespace cg::frontend
