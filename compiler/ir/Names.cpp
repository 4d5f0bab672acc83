//===- Names.cpp - How every artefact of cgc names tasks, values and places ===//
//
// See Names.h.
//
//===----------------------------------------------------------------------===//

#include "ir/Names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string_view>

namespace cg::ir {

namespace {

std::string_view basename(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string shortLoc(const SourceLoc& loc) {
  if (loc.file.empty())
    return {};
  return fmt::format("{}:{}", basename(loc.file), loc.line);
}

std::string exactLoc(const SourceLoc& loc) {
  return fmt::format("{}:{}:{}", basename(loc.file), loc.line, loc.column);
}

std::string taskName(const Graph& graph, const Task& task) {
  return fmt::format("{}.{}", graph.actors[task.actor].name, task.method);
}

std::vector<std::string> taskLabels(const Graph& graph) {
  std::vector<std::string> taskLabels;
  std::map<std::string, unsigned> uses;
  for (const Task& task : graph.tasks) {
    taskLabels.push_back(taskName(graph, task));
    ++uses[taskLabels.back()];
  }
  std::map<std::string, unsigned> seen;
  for (std::string& label : taskLabels)
    if (uses[label] > 1)
      label = fmt::format("{}#{}", label, ++seen[label]);
  return taskLabels;
}

std::vector<std::string> valueLabels(const Graph& graph, const std::vector<std::string>& tasks) {
  std::vector<std::string> labels;
  for (const Value& value : graph.values) {
    if (value.producer.kind == Producer::Kind::Input)
      labels.push_back(fmt::format("input #{}", value.producer.index));
    else if (value.producer.element == -1)
      labels.push_back(tasks[value.producer.index]);
    else
      labels.push_back(fmt::format("{}[{}]", tasks[value.producer.index], value.producer.element));
  }
  return labels;
}

std::string taskCall(const Graph& graph, unsigned t, const std::vector<std::string>& tasks,
                     const std::vector<std::string>& values) {
  std::vector<std::string_view> args;
  for (const Arg& arg : graph.tasks[t].args)
    args.push_back(arg.kind == Arg::Kind::Value ? std::string_view(values[arg.value])
                                                : std::string_view(arg.constant.expression));
  return fmt::format("{}({})", tasks[t], fmt::join(args, ", "));
}

std::string collectiveNote(const Graph& graph, unsigned t) {
  const Task& task = graph.tasks[t];
  if (task.collective < 0)
    return {};
  const Collective& collective = graph.collectives[static_cast<std::size_t>(task.collective)];
  auto rank = std::find(collective.tasks.begin(), collective.tasks.end(), t);
  std::string kind(toString(collective.kind));
  if (!collective.reduceOp.empty())
    kind += " " + collective.reduceOp;
  return fmt::format("[{} #{}, rank {} of {}]", kind, task.collective,
                     rank - collective.tasks.begin(), collective.tasks.size());
}

std::string endpointName(const Graph& graph, int endpoint) {
  return endpoint < 0 ? std::string("driver") : graph.actors[endpoint].name;
}

} // namespace cg::ir
