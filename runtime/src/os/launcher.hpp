// os/launcher.hpp - what an external launcher (mpirun, srun) tells a process (internal).
//
// Under a launcher every actor executable is started by it, on some host, with
// a rank in its environment; the rank says which actor the process is to be.
//
//   if (std::optional<int> rank = cg::detail::launcher_rank()) become_actor(*rank);
#pragma once

#include <optional>

namespace cg::detail {

// The environment variables launcher_rank() reads, in this order: Open MPI's,
// the PMI rank (MPICH, Intel MPI, Slurm's PMI) and Slurm's task rank.
inline constexpr const char* launcher_rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                                          "SLURM_PROCID"};

// The rank from the first of launcher_rank_variables that is set; nullopt when
// none is, or when the first one set is not a decimal integer in 0..INT_MAX
// (a malformed rank is not silently replaced by another launcher's).
std::optional<int> launcher_rank();

} // namespace cg::detail
