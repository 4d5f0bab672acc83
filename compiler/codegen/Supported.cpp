//===- Supported.cpp - What the generated code cannot carry (yet) ---------===//
//
// See Supported.h.
//
//===----------------------------------------------------------------------===//

#include "codegen/Supported.h"

#include "ir/Names.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace cg::codegen {

using ir::Collective;
using ir::Diagnostic;
using ir::Task;
using ir::Transport;
using ir::Value;

std::vector<ir::Diagnostic> unsupportedTransports(const ir::Graph& graph) {
  std::vector<Diagnostic> diagnostics;
  constexpr std::string_view kTensor = "cg::Tensor";
  // Why a value of another type cannot use its transport.
  auto onlyTensors = [](Transport transport) {
    if (transport == Transport::Nccl || transport == Transport::CudaIpc)
      return fmt::format("only cg::Tensor values travel over {}", toString(transport));
    return std::string("only cg::Tensor values are delivered on a device");
  };
  for (const Task& task : graph.tasks) {
    if (task.collective >= 0)
      continue;
    for (unsigned result : task.results) {
      const Value& value = graph.values[result];
      if (value.transport == Transport::Shm || value.type.spelling == kTensor)
        continue;
      const std::string what = value.producer.element == -1
                                   ? fmt::format("the result of '{}'", taskName(graph, task))
                                   : fmt::format("element #{} of the result of '{}'",
                                                 value.producer.element, taskName(graph, task));
      diagnostics.push_back(
          {task.loc,
           fmt::format("{} is a '{}', so it cannot use transport {}: {}", what, value.type.spelling,
                       toString(value.transport), onlyTensors(value.transport)),
           {}});
    }
  }
  // A graph input may be delivered on a device (nccl is refused elsewhere).
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& value = graph.values[graph.inputs[i]];
    if ((value.transport == Transport::Cpu || value.transport == Transport::Cuda) &&
        value.type.spelling != kTensor)
      diagnostics.push_back(
          {graph.loc,
           fmt::format("graph input #{} is a '{}', so it cannot use transport {}: {}", i,
                       value.type.spelling, toString(value.transport),
                       onlyTensors(value.transport)),
           {}});
  }
  for (const Collective& collective : graph.collectives) {
    if (collective.tasks.empty())
      continue;
    const Task& first = graph.tasks[collective.tasks.front()];
    const std::string& type = graph.values[first.results.front()].type.spelling;
    if (type != kTensor)
      diagnostics.push_back({collective.loc,
                             fmt::format("{} of '{}' values: a collective takes cg::Tensor values",
                                         toString(collective.kind), type),
                             {}});
  }
  std::stable_sort(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line < b.loc.line; });
  return diagnostics;
}

std::vector<ir::Diagnostic> unsupportedActorSets(const std::vector<ir::Graph>& graphs) {
  std::vector<Diagnostic> diagnostics;
  for (const ir::Graph& graph : graphs)
    if (!graph.actorSet.empty())
      diagnostics.push_back(
          {graph.loc,
           fmt::format("graph '{}' runs over actor set '{}': running several graphs over one "
                       "actor set is not supported yet; cgc --emit=ir,schedule checks the set "
                       "and writes its schedules",
                       graph.name, graph.actorSet),
           {}});
  return diagnostics;
}

} // namespace cg::codegen
