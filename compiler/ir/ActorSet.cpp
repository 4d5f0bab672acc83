//===- ActorSet.cpp - Actors shared by several graphs ---------------------===//
//
// A set is evaluated by the same builder as a graph, so what it may not say
// (binds, inputs, outputs) is refused here rather than by a builder of its
// own. A graph over a set repeats the actors it uses by name; whatever it
// gives beyond the name must agree with the set, since one process is built
// once for every graph that uses it.
//
//===----------------------------------------------------------------------===//
#include "ir/ActorSet.h"
#include "support/InternalError.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cg::ir {
namespace {

std::string argumentList(const std::vector<Constant>& args) {
  std::vector<std::string> expressions;
  for (const Constant& arg : args)
    expressions.push_back(arg.expression);
  return fmt::format("({})", fmt::join(expressions, ", "));
}

} // namespace

std::variant<ActorSet, std::vector<Diagnostic>> actorSetOf(const Graph& evaluated) {
  std::vector<Diagnostic> problems;
  const std::string declaresOnly =
      fmt::format("actor set '{}' declares actors only; bind, read inputs and write outputs in "
                  "a graph over it, CG_GRAPH_OVER({})",
                  evaluated.name, evaluated.name);
  if (!evaluated.tasks.empty())
    problems.push_back({evaluated.tasks.front().loc, declaresOnly, {}});
  else if (!evaluated.inputs.empty() || !evaluated.outputs.empty())
    problems.push_back({evaluated.loc, declaresOnly, {}});
  if (evaluated.actors.empty())
    problems.push_back(
        {evaluated.loc, fmt::format("actor set '{}' declares no actor", evaluated.name), {}});
  std::map<std::string, const Actor*> byName;
  for (const Actor& actor : evaluated.actors) {
    if (actor.needsArguments)
      problems.push_back({actor.loc,
                          fmt::format("class '{}' cannot be built without arguments: give them, "
                                      "g.actor<{}>(\"{}\", args...)",
                                      actor.className, actor.className, actor.name),
                          {}});
    auto [it, inserted] = byName.emplace(actor.name, &actor);
    if (!inserted)
      problems.push_back({actor.loc,
                          fmt::format("actor name '{}' is already used in actor set '{}'",
                                      actor.name, evaluated.name),
                          {{it->second->loc, "first declared here"}}});
  }
  if (!problems.empty())
    return problems;
  return ActorSet{evaluated.name, evaluated.loc, evaluated.actors};
}

std::vector<Diagnostic> applyActorSet(Graph& graph, const ActorSet& set) {
  std::vector<Diagnostic> problems;
  for (Actor& actor : graph.actors) {
    const Actor* declared = nullptr;
    for (const Actor& candidate : set.actors)
      if (candidate.name == actor.name)
        declared = &candidate;
    if (!declared) {
      problems.push_back({actor.loc,
                          fmt::format("graph '{}' runs over actor set '{}', which has no actor "
                                      "named '{}'",
                                      graph.name, set.name, actor.name),
                          {{set.loc, fmt::format("actor set '{}' is declared here", set.name)}}});
      continue;
    }
    const Note there{declared->loc, fmt::format("'{}' is declared here", actor.name)};
    if (declared->className != actor.className) {
      problems.push_back(
          {actor.loc,
           fmt::format("actor '{}' is a '{}' in actor set '{}'; graph '{}' makes "
                       "it a '{}'",
                       actor.name, declared->className, set.name, graph.name, actor.className),
           {there}});
      continue;
    }
    if (!actor.constructorArgs.empty() && actor.constructorArgs != declared->constructorArgs) {
      problems.push_back(
          {actor.loc,
           fmt::format("actor '{}' is built with {} in actor set '{}'; graph '{}' gives {}",
                       actor.name, argumentList(declared->constructorArgs), set.name, graph.name,
                       argumentList(actor.constructorArgs)),
           {there}});
      continue;
    }
    if (actor.gpus != 0 && actor.gpus != declared->gpus) {
      problems.push_back(
          {actor.loc,
           fmt::format("actor '{}' has .gpus({}) in actor set '{}'; graph '{}' gives .gpus({})",
                       actor.name, declared->gpus, set.name, graph.name, actor.gpus),
           {there}});
      continue;
    }
    if (actor.host != 0 && actor.host != declared->host) {
      problems.push_back(
          {actor.loc,
           fmt::format("actor '{}' is on .host({}) in actor set '{}'; graph '{}' gives .host({})",
                       actor.name, declared->host, set.name, graph.name, actor.host),
           {there}});
      continue;
    }
    // The graph's own line stays, for its diagnostics and generated comments.
    actor.needsArguments = false;
    actor.constructorArgs = declared->constructorArgs;
    actor.gpus = declared->gpus;
    actor.host = declared->host;
  }
  return problems;
}

std::variant<std::vector<ActorSet>, std::vector<Diagnostic>>
applyActorSets(const std::vector<Graph>& evaluatedSets, std::vector<Graph>& graphs) {
  std::vector<ActorSet> sets;
  std::vector<Diagnostic> problems;
  for (const Graph& evaluated : evaluatedSets) {
    auto set = actorSetOf(evaluated);
    if (auto* declared = std::get_if<ActorSet>(&set))
      sets.push_back(std::move(*declared));
    else
      for (Diagnostic& problem : std::get<std::vector<Diagnostic>>(set))
        problems.push_back(std::move(problem));
  }
  if (!problems.empty())
    return problems;
  for (Graph& graph : graphs) {
    if (graph.actorSet.empty())
      continue;
    auto set = std::find_if(sets.begin(), sets.end(),
                            [&](const ActorSet& s) { return s.name == graph.actorSet; });
    if (set == sets.end())
      internalError("graph '" + graph.name + "' runs over '" + graph.actorSet +
                    "', which was not evaluated");
    for (Diagnostic& problem : applyActorSet(graph, *set))
      problems.push_back(std::move(problem));
  }
  if (!problems.empty())
    return problems;
  return sets;
}

} // namespace cg::ir
