//===- ActorSet.h - Actors shared by several graphs ---------------*- C++ -*-===//
//
// A CG_ACTOR_SET function declares actors once (class, name, constructor
// arguments, GPUs, host); graphs marked CG_GRAPH_OVER(set) name them. The
// frontend evaluates a set as it evaluates a graph and hands the result here:
// actorSetOf() keeps its actors and rejects anything else it declared, and
// applyActorSet() makes each actor of a graph over the set the set's actor,
// or says at the graph's line why it cannot be.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <string>
#include <variant>
#include <vector>

namespace cg::ir {

struct ActorSet {
  std::string name; // the CG_ACTOR_SET function's name, qualified
  SourceLoc loc;    // the CG_ACTOR_SET function
  std::vector<Actor> actors;

  friend bool operator==(const ActorSet&, const ActorSet&) = default;
};

/// The set that `evaluated` (a CG_ACTOR_SET function run as a graph
/// function) declares, or why it is not one: it binds, reads an input or
/// writes an output, declares no actor, or names two actors alike.
std::variant<ActorSet, std::vector<Diagnostic>> actorSetOf(const Graph& evaluated);

/// Makes every actor of `graph` (a graph over `set`) the set's actor of its
/// name: the class must be the same, and constructor arguments, GPUs and host
/// given again must equal the set's; the set's are taken where the graph
/// gives none. Returns the mistakes, each at the graph's g.actor line with a
/// note at the set's.
std::vector<Diagnostic> applyActorSet(Graph& graph, const ActorSet& set);

/// Both for a source: the sets of `evaluatedSets`, each graph of `graphs`
/// over one made to use its actors; or every mistake found.
std::variant<std::vector<ActorSet>, std::vector<Diagnostic>>
applyActorSets(const std::vector<Graph>& evaluatedSets, std::vector<Graph>& graphs);

} // namespace cg::ir
