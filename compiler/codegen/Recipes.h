//===- Recipes.h - Launch recipes for mpirun and srun ------------*- C++ -*-===//
//
// `cgc --emit=mpirun` and `--emit=srun` write, per graph, the exact command
// that runs it across hosts under a launcher users already have: OpenMPI's
// mpirun (MPMD, one app context per process) or SLURM's srun --multi-prog.
// Rank 0 is the user's driver program, which serves the rendezvous; ranks
// 1.. run the actor executable, one actor each, in the graph's actor order.
// The runtime does rendezvous and data movement only (see cg/placement.hpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>

namespace cg::codegen {

struct RecipeInput {
  std::string command;         // the cgc command line, for the header comment
  std::string actorExecutable; // the default of CG_ACTORS
  std::string graphId;         // the graph's file name stem (identifierFor)
};

/// `<graph>.mpirun.sh`: `sh <graph>.mpirun.sh <driver> [args...]` runs mpirun.
std::string mpirunRecipe(const ir::Graph& graph, const RecipeInput& input);

/// `<graph>.srun.sh`: writes the --multi-prog configuration and runs srun.
std::string srunRecipe(const ir::Graph& graph, const RecipeInput& input);

} // namespace cg::codegen
