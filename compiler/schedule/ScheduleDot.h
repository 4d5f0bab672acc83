//===- ScheduleDot.h - The graph and its schedule for Graphviz ---*- C++ -*-===//
//
// `<graph>.dot` (render with `dot -Tsvg`; add_compiled_graph(... SVG) does)
// has two clusters:
//   tasks       one box per task (a hexagon for a collective's rank), named
//               with its actor's class and its source line; edges along data
//               labelled with the value, its C++ type and its transport (NCCL
//               in bold); the driver's inputs and outputs as ellipses; each
//               collective's ranks joined by a dashed line;
//   operations  (optional) one column per actor: its operations in order, each labelled
//               with its number, kind, task and global step; data edges from
//               WRITE to READ; the members of a synchronous group filled
//               with the group's colour; operations moved by overlap in red.
// Deterministic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <string>

namespace cg::schedule {

struct DotOptions {
  bool operations = true; // the operations cluster too (else the tasks alone)
};

std::string renderScheduleDot(const ir::Graph& graph, const Schedule& schedule,
                              const DotOptions& options = {});

} // namespace cg::schedule
