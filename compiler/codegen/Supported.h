//===- Supported.h - What the generated code cannot carry (yet) ---*- C++ -*-===//
//
// The scheduler and the inspectable artefacts handle every valid graph; the
// generated programs carry fewer: values over NCCL or on a device must be
// cg::Tensor, and no graph may run over an actor set. A limit of codegen, so it is checked here, by
// `cgc --emit=cpp`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <vector>

namespace cg::codegen {

/// What the generated code cannot carry: a plain task's result that uses
/// transport nccl and is not a cg::Tensor (its elements go through a
/// communicator), and a collective of other values (once, not per rank),
/// each at its bind or call, in source order. `cgc --emit=cpp` reports
/// these; the scheduler and the inspectable artefacts handle such graphs.
std::vector<ir::Diagnostic> unsupportedTransports(const ir::Graph& graph);

/// An error at each graph over an actor set (CG_GRAPH_OVER), in order: the
/// runtime does not launch a set yet, so `cgc --emit=cpp` (and what runs
/// one: python, mpirun, srun) refuses it; the IR and schedules are written.
std::vector<ir::Diagnostic> unsupportedActorSets(const std::vector<ir::Graph>& graphs);

} // namespace cg::codegen
