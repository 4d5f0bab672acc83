// graph/launch.hpp - The decisions cg::launch() makes before it starts anything, each testable
// alone.
//
// GraphRuntime's constructor (graph/launch.cpp) reads as its steps:
//   check the options -> choose the mode and actor executable -> give actors
//   their GPUs -> place actors on hosts -> write the segment -> open the
//   driver's ports -> bind CPUs -> start the actors -> watch them -> wait
//   until every actor is ready.
// The pure decisions among them are declared here (and defined in
// graph/launch_decisions.cpp) so the unit tests can ask them directly,
// without launching anything.
#pragma once

#include <cg/detail/graph_spec.hpp>
#include <cg/driver.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cg::detail {

/// Throws LaunchError for options no graph can be launched with
/// (max_in_flight 0, slot_bytes below kMinSlotBytes, communicator_bytes 0 in
/// a graph with communicators).
void check_launch_options(const GraphSpec& spec, const LaunchOptions& options);

/// The actor executable: LaunchOptions::actor_host, else `built` (the one
/// add_compiled_graph() built beside the driver), or, when `built` is gone
/// (the programs were moved: scripts/gpu-bundle), the file of that name in
/// the running program's directory. Where the driver starts actor processes
/// (`starts_processes`: processes mode, or actors reached over TCP in either
/// mode) it must exist and be executable, else a LaunchError says what to do.
std::string actor_executable(const GraphSpec& spec, bool starts_processes,
                             const LaunchOptions& options, std::string built);

/// Each actor's devices (LaunchOptions::cuda_devices, CUDA_VISIBLE_DEVICES):
/// the next gpus(n) of the driver's devices in the graph's actor order,
/// wrapping around. Throws LaunchError when an actor asks for more than the
/// driver has.
std::vector<std::vector<std::string>> assign_cuda_devices(const GraphSpec& spec,
                                                          const LaunchOptions& options);

/// Where each actor of a graph runs.
struct ActorPlacement {
  std::vector<std::uint32_t> hosts; // per actor: its logical host
  std::vector<bool> local;          // per actor: shares the driver's segment
  std::uint32_t local_count = 0;
  std::uint32_t remote_count = 0;
  bool tcp = false;            // every channel between processes is TCP
  bool under_launcher = false; // mpirun/srun started us and starts every actor
};

/// Places the actors: on their graph's or placement file's host
/// (LaunchOptions::placement, CG_PLACEMENT); they share the driver's segment
/// when on host 0, unless TCP is forced (LaunchOptions::tcp_everywhere,
/// cgc --transport=tcp, CG_TRANSPORT=tcp) or a launcher started us. Throws
/// LaunchError for a bad placement file or CG_TRANSPORT.
ActorPlacement place_actors(const GraphSpec& spec, const LaunchOptions& options);

/// Throws LaunchError when a cuda_ipc channel joins actors that do not both
/// share the driver's segment (another host, TCP forced, a launcher): device
/// memory is shared only between processes of one host, and a relay would
/// let the writer reuse a buffer before the reader copied it.
void check_cuda_ipc_placement(const GraphSpec& spec, const ActorPlacement& placement);

/// Throws LaunchError when a communicator group of host communicators
/// (CommunicatorKind::host, whose tensors move through shared memory) has
/// ranks in processes that share no memory: the driver's, another host's,
/// one of their own. NCCL groups may span hosts.
void check_communicator_placement(const GraphSpec& spec, const ActorPlacement& placement,
                                  const LaunchOptions& options);

/// Whether NCCL ranks may share a GPU (LaunchOptions::nccl_ranks_share_gpus,
/// else CG_NCCL_SHARE_GPUS: "1" yes, "0", empty or unset no). Throws
/// LaunchError for another value of the variable.
bool nccl_ranks_share_gpus(const LaunchOptions& options);
inline constexpr const char* nccl_share_gpus_variable = "CG_NCCL_SHARE_GPUS";

/// The GPU each actor works on (its cuda:0), as the driver's device list
/// names it: its first device from assign_cuda_devices, else the driver's
/// first (LaunchOptions::cuda_devices, CUDA_VISIBLE_DEVICES, else "0": CUDA
/// is not asked, so that a machine whose CUDA fails is told so later).
std::vector<std::string> working_gpus(const std::vector<std::vector<std::string>>& devices,
                                      const LaunchOptions& options);

/// Each actor's NCCL host identity (the NCCL_HOSTID of the process the
/// driver starts for it), "" where it keeps its host's. NCCL refuses two
/// ranks of a group on one GPU of one host ("Duplicate GPU detected") unless
/// their processes claim different hosts; so where ranks share a GPU (by
/// `gpus`, working_gpus) and `share` allows it, each of their processes gets
/// "<host_name>-cg-<actor>" (a host command's process, which runs all its
/// host's actors: "<host_name>-cg-host<i>"). Throws LaunchError, naming both
/// actors, their group and GPU, where two such ranks cannot be told apart:
/// `share` is off (saying how to turn it on), or they run in one process
/// (threads mode, one host command's process). Nothing for the host
/// communicator, which has no NCCL.
std::vector<std::string> nccl_host_ids(const GraphSpec& spec, const ActorPlacement& placement,
                                       const std::vector<std::string>& gpus, Mode mode,
                                       const LaunchOptions& options, bool share,
                                       const std::string& host_name);

/// Whether NVIDIA's Multi-Process Service runs for this machine: its
/// control daemon keeps a "control" pipe in its pipe directory
/// (`pipe_directory`: CUDA_MPS_PIPE_DIRECTORY, or null for the default
/// /tmp/nvidia-mps) while it runs, and removes it when it quits.
bool mps_running(const char* pipe_directory);

/// What launch() says once on stderr where two or more actor processes of
/// the driver's host work on one GPU (by `gpus`; an actor works on a GPU when
/// it asks for .gpus(n), is a rank of an NCCL group, or an end of a cuda_ipc
/// channel) and MPS is not running: their cost and the two ways out. "" otherwise.
std::string gpu_sharing_notice(const GraphSpec& spec, const ActorPlacement& placement,
                               const std::vector<std::string>& gpus, Mode mode,
                               const LaunchOptions& options, bool mps);

} // namespace cg::detail
