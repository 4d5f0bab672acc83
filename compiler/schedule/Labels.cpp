//===- Labels.cpp - How the schedule artefacts name things ----------------===//
//
// One set of names for the text, JSON and Graphviz renderings, so that a
// task, value or channel reads the same in all three.
//
//===----------------------------------------------------------------------===//

#include "schedule/Labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cg::schedule {

using ir::Graph;
using ir::Producer;

namespace {

std::string_view basename(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string shortLoc(const ir::SourceLoc& loc) {
  if (loc.file.empty())
    return {};
  return fmt::format("{}:{}", basename(loc.file), loc.line);
}

std::vector<std::string> taskLabels(const Graph& graph) {
  std::vector<std::string> taskLabels;
  std::map<std::string, unsigned> uses;
  for (const ir::Task& task : graph.tasks) {
    taskLabels.push_back(
        fmt::format("{}.{}", graph.actors[task.actor].name, task.method));
    ++uses[taskLabels.back()];
  }
  std::map<std::string, unsigned> seen;
  for (std::string& label : taskLabels)
    if (uses[label] > 1)
      label = fmt::format("{}#{}", label, ++seen[label]);
  return taskLabels;
}

std::vector<std::string> valueLabels(const Graph& graph,
                                     const std::vector<std::string>& tasks) {
  std::vector<std::string> labels;
  for (const ir::Value& value : graph.values) {
    if (value.producer.kind == Producer::Kind::Input)
      labels.push_back(fmt::format("input #{}", value.producer.index));
    else if (value.producer.element == -1)
      labels.push_back(tasks[value.producer.index]);
    else
      labels.push_back(fmt::format("{}[{}]", tasks[value.producer.index],
                                   value.producer.element));
  }
  return labels;
}

std::string collectiveNote(const Graph& graph, unsigned t) {
  const ir::Task& task = graph.tasks[t];
  if (task.collective < 0)
    return {};
  const ir::Collective& collective =
      graph.collectives[static_cast<std::size_t>(task.collective)];
  auto rank = std::find(collective.tasks.begin(), collective.tasks.end(), t);
  std::string kind(ir::toString(collective.kind));
  if (!collective.reduceOp.empty())
    kind += " " + collective.reduceOp;
  return fmt::format("[{} #{}, rank {} of {}]", kind, task.collective,
                     rank - collective.tasks.begin(), collective.tasks.size());
}

std::string endpointName(const Graph& graph, int endpoint) {
  return endpoint == kDriver ? std::string("driver")
                             : graph.actors[endpoint].name;
}

std::string_view kindName(Operation::Kind kind) {
  switch (kind) {
  case Operation::Kind::Read:
    return "READ";
  case Operation::Kind::Compute:
    return "COMPUTE";
  case Operation::Kind::Write:
    return "WRITE";
  }
  return "?";
}

} // namespace cg::schedule
