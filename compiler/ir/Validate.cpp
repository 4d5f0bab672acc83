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
#include "ir/Names.h"
#include "support/InternalError.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cg::ir {
namespace {

/// "1 value", "3 values": the consistency messages quote counts.
std::string countOf(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

/// "input #0", "task #2", "element #1 of task #2".
std::string describe(const Producer& producer) {
  if (producer.kind == Producer::Kind::Input)
    return producer.element == -1
               ? fmt::format("input #{}", producer.index)
               : fmt::format("input #{} with element {}", producer.index, producer.element);
  return producer.element == -1
             ? fmt::format("task #{}", producer.index)
             : fmt::format("element #{} of task #{}", producer.element, producer.index);
}

/// "the result of task #1", "element #0 of the result of task #1".
std::string describeResult(const Producer& producer) {
  return producer.element == -1 ? fmt::format("the result of task #{}", producer.index)
                                : fmt::format("element #{} of the result of task #{}",
                                              producer.element, producer.index);
}

/// The element `producer` must have to be results[k] of its task: a task with
/// one result value that is not a tuple element has element -1; otherwise the
/// graph unpacked a std::tuple and results[k] is element k.
int expectedElement(const Graph& graph, const Task& task, std::size_t k) {
  if (task.results.size() == 1 && graph.values[task.results[0]].producer.element == -1)
    return -1;
  return static_cast<int>(k);
}

std::optional<std::string> constantProblem(const Constant& constant, std::string_view path) {
  if (constant.type.spelling.empty())
    return fmt::format("{}.type is empty", path);
  if (constant.expression.empty())
    return fmt::format("{}.expression is empty", path);
  return std::nullopt;
}

bool isKnown(Transport transport) {
  return transport == Transport::Shm || transport == Transport::Nccl ||
         transport == Transport::Cpu || transport == Transport::Cuda ||
         transport == Transport::CudaIpc;
}

} // namespace

std::optional<std::string> findInconsistency(const Graph& graph) {
  const std::size_t numValues = graph.values.size();

  // Every value's producer must exist and name the value back; together with
  // the checks on inputs and tasks below this makes producers a bijection
  // onto the inputs and the tasks' result values (tuple elements included).
  for (std::size_t v = 0; v < numValues; ++v) {
    const Value& value = graph.values[v];
    const Producer& producer = value.producer;
    if (!isKnown(value.transport))
      return fmt::format("values[{}].transport is {}, which is no transport", v,
                         static_cast<int>(value.transport));
    if (producer.kind == Producer::Kind::Input) {
      if (producer.element != -1)
        return fmt::format("values[{}].producer is input #{} but has element "
                           "{}; only a task's result has elements",
                           v, producer.index, producer.element);
      if (producer.index >= graph.inputs.size())
        return fmt::format("values[{}].producer is input #{} but the graph has "
                           "only {}",
                           v, producer.index, countOf(graph.inputs.size(), "input"));
      if (graph.inputs[producer.index] != v)
        return fmt::format("values[{}].producer is input #{} but inputs[{}] is "
                           "value {}",
                           v, producer.index, producer.index, graph.inputs[producer.index]);
    } else {
      if (producer.element < -1)
        return fmt::format("values[{}].producer.element is {}; expected -1 or "
                           "an element index",
                           v, producer.element);
      if (producer.index >= graph.tasks.size())
        return fmt::format("values[{}].producer is task #{} but the graph has "
                           "only {}",
                           v, producer.index, countOf(graph.tasks.size(), "task"));
      const std::vector<unsigned>& results = graph.tasks[producer.index].results;
      bool namedBack = producer.element == -1
                           ? results.size() == 1 && results[0] == v
                           : static_cast<std::size_t>(producer.element) < results.size() &&
                                 results[static_cast<std::size_t>(producer.element)] == v;
      if (!namedBack)
        return fmt::format("values[{}].producer is {} but tasks[{}].results is "
                           "[{}]",
                           v, describe(producer), producer.index, fmt::join(results, ", "));
    }
  }

  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    unsigned v = graph.inputs[i];
    if (v >= numValues)
      return fmt::format("inputs[{}] is {} but the graph has only {}", i, v,
                         countOf(numValues, "value"));
    const Producer expected{Producer::Kind::Input, static_cast<unsigned>(i)};
    if (graph.values[v].producer != expected)
      return fmt::format("inputs[{}] is value {} but values[{}].producer is {}", i, v, v,
                         describe(graph.values[v].producer));
  }

  for (std::size_t a = 0; a < graph.actors.size(); ++a) {
    const Actor& actor = graph.actors[a];
    for (std::size_t j = 0; j < actor.constructorArgs.size(); ++j)
      if (std::optional<std::string> problem = constantProblem(
              actor.constructorArgs[j], fmt::format("actors[{}].constructorArgs[{}]", a, j)))
        return problem;
  }

  for (std::size_t t = 0; t < graph.tasks.size(); ++t) {
    const Task& task = graph.tasks[t];
    if (task.actor >= graph.actors.size())
      return fmt::format("tasks[{}].actor is {} but the graph has only {}", t, task.actor,
                         countOf(graph.actors.size(), "actor"));
    if (task.collective < -1)
      return fmt::format("tasks[{}].collective is {}; expected -1 or a "
                         "collective id",
                         t, task.collective);
    if (task.collective >= 0) {
      auto c = static_cast<std::size_t>(task.collective);
      if (c >= graph.collectives.size())
        return fmt::format("tasks[{}].collective is {} but the graph has only {}", t, c,
                           countOf(graph.collectives.size(), "collective"));
      const std::vector<unsigned>& ranks = graph.collectives[c].tasks;
      if (std::find(ranks.begin(), ranks.end(), t) == ranks.end())
        return fmt::format("tasks[{}].collective is {} but collectives[{}].tasks "
                           "does not list task #{}",
                           t, c, c, t);
    }
    // NaN fails both comparisons, so it is caught here too.
    if (!(task.cost >= 0 && task.cost <= std::numeric_limits<double>::max()))
      return fmt::format("tasks[{}].cost is {} but a cost must be finite and not "
                         "negative (0: unknown)",
                         t, task.cost);

    if (task.results.empty())
      return fmt::format("tasks[{}].results is empty; a task produces at least "
                         "one value",
                         t);
    for (std::size_t k = 0; k < task.results.size(); ++k)
      if (task.results[k] >= numValues)
        return fmt::format("tasks[{}].results[{}] is {} but the graph has only {}", t, k,
                           task.results[k], countOf(numValues, "value"));
    for (std::size_t k = 0; k < task.results.size(); ++k) {
      unsigned result = task.results[k];
      const Producer expected{Producer::Kind::Task, static_cast<unsigned>(t),
                              expectedElement(graph, task, k)};
      if (graph.values[result].producer != expected)
        return fmt::format("tasks[{}].results[{}] is value {} but values[{}]."
                           "producer is {}, not {}",
                           t, k, result, result, describe(graph.values[result].producer),
                           describe(expected));
    }
    const unsigned firstResult = *std::min_element(task.results.begin(), task.results.end());

    for (std::size_t j = 0; j < task.args.size(); ++j) {
      const Arg& arg = task.args[j];
      if (arg.kind == Arg::Kind::Constant) {
        if (std::optional<std::string> problem =
                constantProblem(arg.constant, fmt::format("tasks[{}].args[{}].constant", t, j)))
          return problem;
        continue;
      }
      unsigned value = arg.value;
      if (value >= numValues)
        return fmt::format("tasks[{}].args[{}].value is {} but the graph has "
                           "only {}",
                           t, j, value, countOf(numValues, "value"));
      // The scheduler runs each actor's tasks in bind order and relies on
      // every argument being produced by an earlier task (or an input).
      const Producer& producer = graph.values[value].producer;
      if (producer.kind == Producer::Kind::Task && producer.index >= t)
        return fmt::format("tasks[{}].args[{}].value is {}, {}, which is not "
                           "bound before task #{}",
                           t, j, value, describeResult(producer), t);
      if (value >= firstResult)
        return fmt::format("tasks[{}].args[{}].value is {}, which is not created "
                           "before the task's result value {}",
                           t, j, value, firstResult);
    }
  }

  // Each collective lists its tasks, one per rank; each of those tasks names
  // the collective back, and every rank is a different actor (one process
  // cannot take part in one collective twice).
  for (std::size_t c = 0; c < graph.collectives.size(); ++c) {
    const Collective& collective = graph.collectives[c];
    std::string_view kind = toString(collective.kind);
    if (kind.empty())
      return fmt::format("collectives[{}].kind is {}, which is no collective "
                         "kind",
                         c, static_cast<int>(collective.kind));
    if (collective.kind == Collective::Kind::AllGather && !collective.reduceOp.empty())
      return fmt::format("collectives[{}].reduceOp is \"{}\" but an {} has no "
                         "reduce operation",
                         c, collective.reduceOp, kind);
    if (collective.kind != Collective::Kind::AllGather && collective.reduceOp.empty())
      return fmt::format("collectives[{}].reduceOp is empty but an {} needs a "
                         "reduce operation",
                         c, kind);
    if (collective.tasks.empty())
      return fmt::format("collectives[{}].tasks is empty; a collective has at "
                         "least one rank",
                         c);
    for (std::size_t r = 0; r < collective.tasks.size(); ++r) {
      unsigned t = collective.tasks[r];
      if (t >= graph.tasks.size())
        return fmt::format("collectives[{}].tasks[{}] is {} but the graph has "
                           "only {}",
                           c, r, t, countOf(graph.tasks.size(), "task"));
      if (graph.tasks[t].collective != static_cast<int>(c))
        return fmt::format("collectives[{}].tasks[{}] is task #{} but "
                           "tasks[{}].collective is {}",
                           c, r, t, t, graph.tasks[t].collective);
      for (std::size_t earlier = 0; earlier < r; ++earlier) {
        unsigned other = collective.tasks[earlier];
        if (graph.tasks[other].actor == graph.tasks[t].actor)
          return fmt::format("collectives[{}].tasks[{}] is task #{} on actor "
                             "#{} ('{}'), which already takes part as rank {} "
                             "(task #{})",
                             c, r, t, graph.tasks[t].actor, graph.actors[graph.tasks[t].actor].name,
                             earlier, other);
      }
    }
  }

  for (std::size_t k = 0; k < graph.outputs.size(); ++k)
    if (graph.outputs[k] >= numValues)
      return fmt::format("outputs[{}] is {} but the graph has only {}", k, graph.outputs[k],
                         countOf(numValues, "value"));

  return std::nullopt;
}

std::vector<Diagnostic> validate(const Graph& graph) {
  if (std::optional<std::string> problem = findInconsistency(graph))
    internalError(*problem);

  std::vector<Diagnostic> diagnostics;

  if (graph.outputs.empty())
    diagnostics.push_back(
        {graph.loc, fmt::format("graph '{}' has no output; call g.output(...)", graph.name), {}});

  // Only a graph over an actor set may leave out arguments its class needs:
  // the set gives them (applyActorSet() has filled them in by now).
  for (const Actor& actor : graph.actors)
    if (actor.needsArguments)
      diagnostics.push_back(
          {actor.loc,
           fmt::format("class '{}' cannot be built without arguments: give them, "
                       "g.actor<{}>(\"{}\", args...), or name an actor of an actor set in a "
                       "graph over it",
                       actor.className, actor.className, actor.name),
           {}});

  // Actor names become process and file names in generated code, so a
  // duplicate would silently make two actors collide.
  std::map<std::string, unsigned, std::less<>> firstActorNamed;
  for (unsigned a = 0; a < graph.actors.size(); ++a) {
    const Actor& actor = graph.actors[a];
    auto [it, inserted] = firstActorNamed.emplace(actor.name, a);
    if (inserted)
      continue;
    const SourceLoc& first = graph.actors[it->second].loc;
    if (first == actor.loc) {
      // One line made both: a loop, or a helper called twice. One error for
      // all the repeats of that line.
      if (std::any_of(diagnostics.begin(), diagnostics.end(),
                      [&](const Diagnostic& d) { return d.loc == actor.loc; }))
        continue;
      diagnostics.push_back(
          {actor.loc,
           fmt::format("actor name '{}' is made again by this line in graph '{}'; give each actor "
                       "a name of its own, in a loop with cg::indexed_name(\"{}\", i)",
                       actor.name, graph.name, actor.name),
           {}});
      continue;
    }
    diagnostics.push_back(
        {actor.loc,
         fmt::format("actor name '{}' is already used in graph '{}'", actor.name, graph.name),
         {{first, "first declared here"}}});
  }

  std::vector<bool> usedByTask(graph.values.size(), false);
  std::vector<bool> usedByOutput(graph.values.size(), false);
  for (const Task& task : graph.tasks)
    for (const Arg& arg : task.args)
      if (arg.kind == Arg::Kind::Value)
        usedByTask[arg.value] = true;
  for (unsigned v : graph.outputs)
    usedByOutput[v] = true;

  // A result nobody reads would still be computed and written every
  // execution; it is almost always a forgotten g.output(...) or wiring slip.
  // Each element of an unpacked std::tuple result is a value of its own and
  // is reported on its own, by element index.
  for (const Task& task : graph.tasks)
    for (unsigned result : task.results) {
      if (usedByTask[result] || usedByOutput[result])
        continue;
      int element = graph.values[result].producer.element;
      std::string what = element == -1 ? fmt::format("result of '{}'", taskName(graph, task))
                                       : fmt::format("element #{} of the result of '{}'", element,
                                                     taskName(graph, task));
      diagnostics.push_back({task.loc,
                             fmt::format("{} is never used; pass it to another task or to "
                                         "g.output(...)",
                                         what),
                             {}});
    }

  // NCCL and CUDA IPC are between GPU actors: the driver, which writes the
  // inputs and reads the outputs through host memory, takes part in no NCCL
  // group and maps no CUDA IPC buffer.
  auto driverHasNo = [](Transport transport) {
    return transport == Transport::Nccl ? "the driver takes part in no NCCL group"
                                        : "the driver reads and writes host memory only; deliver "
                                          "it with cg::device::cuda or cg::device::cpu instead";
  };
  for (std::size_t v = 0; v < graph.values.size(); ++v) {
    const Value& value = graph.values[v];
    if (value.transport != Transport::Nccl && value.transport != Transport::CudaIpc)
      continue;
    if (value.producer.kind == Producer::Kind::Input) {
      diagnostics.push_back(
          {graph.loc,
           fmt::format("graph input #{} cannot use transport {}: {}", value.producer.index,
                       toString(value.transport), driverHasNo(value.transport)),
           {}});
    } else if (usedByOutput[v]) {
      const Task& task = graph.tasks[value.producer.index];
      diagnostics.push_back(
          {task.loc,
           fmt::format("{} is a graph output, so it cannot use transport {}: {}",
                       value.producer.element == -1
                           ? fmt::format("the result of '{}'", taskName(graph, task))
                           : fmt::format("element #{} of the result of '{}'",
                                         value.producer.element, taskName(graph, task)),
                       toString(value.transport), driverHasNo(value.transport)),
           {}});
    }
  }

  // CUDA IPC shares device memory between the processes of one host.
  for (const Task& task : graph.tasks)
    for (const Arg& arg : task.args) {
      if (arg.kind != Arg::Kind::Value || graph.values[arg.value].transport != Transport::CudaIpc)
        continue;
      const Producer& producer = graph.values[arg.value].producer;
      if (producer.kind != Producer::Kind::Task)
        continue;
      const Task& writer = graph.tasks[producer.index];
      const unsigned from = graph.actors[writer.actor].host, to = graph.actors[task.actor].host;
      if (from != to)
        diagnostics.push_back(
            {task.loc,
             fmt::format("'{}' reads the result of '{}' over cuda_ipc, but they run on hosts {} "
                         "and {}: CUDA IPC connects actors of one host; use transport nccl "
                         "between hosts",
                         taskName(graph, task), taskName(graph, writer), to, from),
             {}});
    }

  // Inputs have no source location of their own; the graph function is the
  // closest place to point at. An input that is also an output gets only the
  // more specific message, even when no task reads it.
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    unsigned v = graph.inputs[i];
    if (usedByOutput[v])
      diagnostics.push_back({graph.loc,
                             fmt::format("graph input #{} is returned as an output without "
                                         "passing through a task",
                                         i),
                             {}});
    else if (!usedByTask[v])
      diagnostics.push_back({graph.loc, fmt::format("graph input #{} is never used", i), {}});
  }

  return diagnostics;
}

} // namespace cg::ir
