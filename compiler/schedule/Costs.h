//===- Costs.h - Per-method cost estimates from a JSON profile ---*- C++ -*-===//
//
// `cgc --costs=profile.json` gives the cost model (`--schedule=cost`) the run
// times of methods without touching the graph source: measured on a previous
// run, or estimated. It overrides `g.cost<&C::m>(c)` annotations.
//
//   { "format": "cg-costs", "version": 1,
//     "costs": { "Stage::forward": 1.0,    // every bind of Stage::forward
//                "s3.backward": 2.5 } }    // binds of backward on actor s3
//
// A key "<Class>::<method>" names a method of an actor class (the class as
// `<graph>.ir.json` spells it, without a leading "::"); "<actor>.<method>"
// names the binds of a method on one actor instance and wins over the class
// key. Costs are in any unit shared by the profile; keys that match nothing
// in a graph are ignored (one profile may serve several graphs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <map>
#include <string>
#include <string_view>

namespace cg::schedule {

struct CostProfile {
  std::map<std::string, double, std::less<>> costs; // key as written
};

/// Parses a profile. Throws std::runtime_error("invalid cost profile: ...")
/// naming the offending key when the text is not a profile or a cost is
/// negative or not a number.
CostProfile parseCostProfile(std::string_view text);

/// Sets the cost of every task the profile names (actor key first, then
/// class key); other tasks keep theirs.
void applyCostProfile(const CostProfile& profile, ir::Graph& graph);

} // namespace cg::schedule
