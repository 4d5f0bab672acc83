//===- Validate.cpp - Semantic checks on the graph IR ---------------------===//
//
// Two kinds of problems are told apart here. A graph the user wrote that
// cannot run (a result nobody reads, two actors with one name) is reported as
// diagnostics at the user's source. An IR whose ids do not line up is
// something the frontend or the JSON reader should never produce; it is an
// internal error, thrown so that it cannot be mistaken for the user's fault.
//
//===----------------------------------------------------------------------===//

#include "ir/Validate.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg::ir {
namespace {

/// "1 value", "3 values": the consistency messages quote counts.
std::string countOf(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string describe(const Producer& producer) {
  return fmt::format("{} #{}",
                     producer.kind == Producer::Kind::Input ? "input" : "task",
                     producer.index);
}

std::string taskName(const Graph& graph, const Task& task) {
  return fmt::format("{}.{}", graph.actors[task.actor].name, task.method);
}

} // namespace

std::optional<std::string> findInconsistency(const Graph& graph) {
  const std::size_t numValues = graph.values.size();

  // Every value's producer must exist and name the value back; together with
  // the checks on inputs and tasks below this makes producers a bijection.
  for (std::size_t v = 0; v < numValues; ++v) {
    const Producer& producer = graph.values[v].producer;
    if (producer.kind == Producer::Kind::Input) {
      if (producer.index >= graph.inputs.size())
        return fmt::format("values[{}].producer is input #{} but the graph has "
                           "only {}",
                           v, producer.index,
                           countOf(graph.inputs.size(), "input"));
      if (graph.inputs[producer.index] != v)
        return fmt::format("values[{}].producer is input #{} but inputs[{}] is "
                           "value {}",
                           v, producer.index, producer.index,
                           graph.inputs[producer.index]);
    } else {
      if (producer.index >= graph.tasks.size())
        return fmt::format("values[{}].producer is task #{} but the graph has "
                           "only {}",
                           v, producer.index,
                           countOf(graph.tasks.size(), "task"));
      if (graph.tasks[producer.index].result != v)
        return fmt::format("values[{}].producer is task #{} but tasks[{}].result "
                           "is value {}",
                           v, producer.index, producer.index,
                           graph.tasks[producer.index].result);
    }
  }

  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    unsigned v = graph.inputs[i];
    if (v >= numValues)
      return fmt::format("inputs[{}] is {} but the graph has only {}", i, v,
                         countOf(numValues, "value"));
    const Producer expected{Producer::Kind::Input, static_cast<unsigned>(i)};
    if (graph.values[v].producer != expected)
      return fmt::format("inputs[{}] is value {} but values[{}].producer is {}",
                         i, v, v, describe(graph.values[v].producer));
  }

  for (std::size_t t = 0; t < graph.tasks.size(); ++t) {
    const Task& task = graph.tasks[t];
    if (task.actor >= graph.actors.size())
      return fmt::format("tasks[{}].actor is {} but the graph has only {}", t,
                         task.actor, countOf(graph.actors.size(), "actor"));
    if (task.result >= numValues)
      return fmt::format("tasks[{}].result is {} but the graph has only {}", t,
                         task.result, countOf(numValues, "value"));
    const Producer expected{Producer::Kind::Task, static_cast<unsigned>(t)};
    if (graph.values[task.result].producer != expected)
      return fmt::format("tasks[{}].result is value {} but values[{}].producer "
                         "is {}",
                         t, task.result, task.result,
                         describe(graph.values[task.result].producer));
    for (std::size_t j = 0; j < task.args.size(); ++j) {
      unsigned arg = task.args[j];
      if (arg >= numValues)
        return fmt::format("tasks[{}].args[{}] is {} but the graph has only {}",
                           t, j, arg, countOf(numValues, "value"));
      // The scheduler runs each actor's tasks in bind order and relies on
      // every argument being produced by an earlier task (or an input).
      const Producer& producer = graph.values[arg].producer;
      if (producer.kind == Producer::Kind::Task && producer.index >= t)
        return fmt::format("tasks[{}].args[{}] is value {}, the result of task "
                           "#{}, which is not bound before task #{}",
                           t, j, arg, producer.index, t);
      if (arg >= task.result)
        return fmt::format("tasks[{}].args[{}] is value {}, which is not created "
                           "before the task's result value {}",
                           t, j, arg, task.result);
    }
  }

  for (std::size_t k = 0; k < graph.outputs.size(); ++k)
    if (graph.outputs[k] >= numValues)
      return fmt::format("outputs[{}] is {} but the graph has only {}", k,
                         graph.outputs[k], countOf(numValues, "value"));

  return std::nullopt;
}

std::vector<Diagnostic> validate(const Graph& graph) {
  if (std::optional<std::string> problem = findInconsistency(graph))
    throw std::logic_error("internal compiler error: " + *problem);

  std::vector<Diagnostic> diagnostics;

  if (graph.outputs.empty())
    diagnostics.push_back(
        {graph.loc,
         fmt::format("graph '{}' has no output; call g.output(...)", graph.name),
         {}});

  // Actor names become process and file names in generated code, so a
  // duplicate would silently make two actors collide.
  std::map<std::string, unsigned, std::less<>> firstActorNamed;
  for (unsigned a = 0; a < graph.actors.size(); ++a) {
    const Actor& actor = graph.actors[a];
    auto [it, inserted] = firstActorNamed.emplace(actor.name, a);
    if (inserted)
      continue;
    diagnostics.push_back(
        {actor.loc,
         fmt::format("actor name '{}' is already used in graph '{}'", actor.name,
                     graph.name),
         {{graph.actors[it->second].loc, "first declared here"}}});
  }

  std::vector<bool> usedByTask(graph.values.size(), false);
  std::vector<bool> usedByOutput(graph.values.size(), false);
  for (const Task& task : graph.tasks)
    for (unsigned arg : task.args)
      usedByTask[arg] = true;
  for (unsigned v : graph.outputs)
    usedByOutput[v] = true;

  // A result nobody reads would still be computed and written every
  // execution; it is almost always a forgotten g.output(...) or wiring slip.
  for (const Task& task : graph.tasks)
    if (!usedByTask[task.result] && !usedByOutput[task.result])
      diagnostics.push_back(
          {task.loc,
           fmt::format("result of '{}' is never used; pass it to another task "
                       "or to g.output(...)",
                       taskName(graph, task)),
           {}});

  // Inputs have no source location of their own; the graph function is the
  // closest place to point at. An input that is also an output gets only the
  // more specific message, even when no task reads it.
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    unsigned v = graph.inputs[i];
    if (usedByOutput[v])
      diagnostics.push_back(
          {graph.loc,
           fmt::format("graph input #{} is returned as an output without "
                       "passing through a task",
                       i),
           {}});
    else if (!usedByTask[v])
      diagnostics.push_back(
          {graph.loc, fmt::format("graph input #{} is never used", i), {}});
  }

  return diagnostics;
}

} // namespace cg::ir
