// graph/launch_decisions.cpp - The decisions cg::launch() makes before it
// starts anything (graph/launch.hpp): which options, executable, GPUs and
// hosts, which placements no transport can serve, and how actor processes
// share a GPU (NCCL host identities, the notice where MPS is missing).
#include "graph/launch.hpp"

#include "graph/runtime_state.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <cg/placement.hpp>

#include "os/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cg::detail {

void check_launch_options(const GraphSpec& spec, const LaunchOptions& options) {
  if (options.max_in_flight == 0)
    throw LaunchError("cg::LaunchOptions::max_in_flight must be at least 1");
  if (options.max_in_flight > spec.max_in_flight)
    throw LaunchError(describe(spec) + ": cg::LaunchOptions::max_in_flight is " +
                      std::to_string(options.max_in_flight) + ", more than the " +
                      std::to_string(spec.max_in_flight) +
                      " its schedule was checked free of deadlock with; compile it with cgc "
                      "--max-in-flight=" +
                      std::to_string(options.max_in_flight) + " or more");
  if (options.slot_bytes < kMinSlotBytes)
    throw LaunchError("cg::LaunchOptions::slot_bytes must be at least " +
                      std::to_string(kMinSlotBytes));
  if (!spec.communicators.empty() && options.communicator_bytes == 0)
    throw LaunchError("cg::LaunchOptions::communicator_bytes must be at least 1");
  if (options.partition_timeout < std::chrono::milliseconds(1) ||
      options.partition_timeout > std::chrono::hours(1))
    throw LaunchError("cg::LaunchOptions::partition_timeout must be from 1 ms to 1 hour");
}

std::string actor_executable(const GraphSpec& spec, bool starts_processes,
                             const LaunchOptions& options, std::string built) {
  std::string executable = options.actor_host.empty() ? std::move(built) : options.actor_host;
  if (starts_processes && options.actor_host.empty() && ::access(executable.c_str(), X_OK) != 0) {
    // The build was moved (a bundle, an installed program): the actor
    // executable travels beside the driver's.
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::string beside =
        (self.parent_path() / std::filesystem::path(executable).filename()).string();
    if (!error && ::access(beside.c_str(), X_OK) == 0)
      executable = beside;
  }
  if (starts_processes && ::access(executable.c_str(), X_OK) != 0)
    throw LaunchError("actor executable '" + executable + "' of " + describe(spec) +
                      " is missing or not executable; build it, or set "
                      "cg::LaunchOptions::actor_host");
  return executable;
}

std::vector<std::vector<std::string>> assign_cuda_devices(const GraphSpec& spec,
                                                          const LaunchOptions& options) {
  std::vector<std::vector<std::string>> assigned(spec.actors.size());
  std::optional<std::vector<std::string>> devices;
  std::size_t next = 0;
  for (std::size_t a = 0; a < spec.actors.size(); ++a) {
    const unsigned n = spec.actors[a].gpus;
    if (n == 0)
      continue;
    if (!devices)
      devices = launch_cuda_devices(options);
    const std::string asks = std::string("actor '") + spec.actors[a].name + "' asks for " +
                             std::to_string(n) + (n == 1 ? " GPU" : " GPUs") + " (.gpus(" +
                             std::to_string(n) + "))";
    if (devices->empty())
      throw LaunchError(describe(spec) + ": " + asks +
                        " and the driver has no CUDA device to give (set "
                        "cg::LaunchOptions::cuda_devices or CUDA_VISIBLE_DEVICES)");
    if (n > devices->size())
      throw LaunchError(describe(spec) + ": " + asks + ", more than the " +
                        std::to_string(devices->size()) + " the driver has (" +
                        join(*devices, ",") + ")");
    for (unsigned k = 0; k < n; ++k)
      assigned[a].push_back((*devices)[next++ % devices->size()]);
  }
  return assigned;
}

ActorPlacement place_actors(const GraphSpec& spec, const LaunchOptions& options) {
  const char* transport_env = std::getenv(transport_variable);
  if (transport_env && *transport_env && std::strcmp(transport_env, "tcp") != 0 &&
      std::strcmp(transport_env, "shm") != 0)
    throw LaunchError(std::string("the environment variable CG_TRANSPORT is '") + transport_env +
                      "'; it must be 'tcp' or 'shm' (or unset)");
  ActorPlacement placement;
  placement.tcp = options.tcp_everywhere || spec.tcp_everywhere ||
                  (transport_env && std::strcmp(transport_env, "tcp") == 0);
  // Started by mpirun/srun as rank 0, with the rendezvous address given:
  // the launcher starts every actor.
  placement.under_launcher =
      launcher_rank() == 0 && (!options.rendezvous.empty() || std::getenv(rendezvous_variable));
  const char* placement_env = std::getenv(placement_variable);
  placement.hosts = actor_hosts(
      spec, !options.placement.empty() ? options.placement : (placement_env ? placement_env : ""));
  for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor) {
    const bool local = !placement.tcp && !placement.under_launcher && placement.hosts[actor] == 0;
    placement.local.push_back(local);
    (local ? placement.local_count : placement.remote_count)++;
  }
  return placement;
}

void check_cuda_ipc_placement(const GraphSpec& spec, const ActorPlacement& placement) {
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    const ChannelSpec& channel = spec.channels[c];
    if (!channel.cuda_ipc)
      continue;
    std::vector<int> ends{channel.writer};
    ends.insert(ends.end(), channel.reader_actors.begin(), channel.reader_actors.end());
    for (int actor : ends) {
      if (actor < 0 || placement.local.at(static_cast<std::uint32_t>(actor)))
        continue;
      const auto index = static_cast<std::uint32_t>(actor);
      throw LaunchError(
          describe(spec) + ": channel " + std::to_string(c) + " carries a cuda_ipc tensor of '" +
          spec.actors[static_cast<std::uint32_t>(channel.writer)].name + "', but actor '" +
          spec.actors[index].name + "' " +
          (placement.tcp              ? std::string("is reached over TCP (TCP is forced)")
           : placement.under_launcher ? std::string("is started by the launcher")
                                      : "runs on host " + std::to_string(placement.hosts[index])) +
          ": CUDA IPC joins processes of the driver's host only; place them there or use "
          "transport nccl");
    }
  }
}

void check_communicator_placement(const GraphSpec& spec, const ActorPlacement& placement,
                                  const LaunchOptions& options) {
  if (options.communicator != CommunicatorKind::host)
    return;
  // The process an actor runs in: the driver's, its host's (a host command's
  // process runs all that host's actors), or one of its own (TCP forced, a
  // launcher's rank); and how the error says so.
  struct Process {
    std::int64_t id;
    std::string said;
  };
  const auto process_of = [&](std::uint32_t a) -> Process {
    if (placement.local[a])
      return {-1, "shares the driver's memory"};
    if (!placement.under_launcher && options.host_commands.count(placement.hosts[a]) != 0)
      return {placement.hosts[a],
              "runs in the process of host " + std::to_string(placement.hosts[a])};
    return {(std::int64_t{1} << 32) + a, "runs in a process of its own"};
  };
  for (std::uint32_t g = 0; g < spec.communicators.size(); ++g) {
    const std::span<const std::uint32_t> ranks = spec.communicators[g].actors;
    if (ranks.size() < 2)
      continue;
    const Process first = process_of(ranks.front());
    const auto apart = std::find_if(ranks.begin() + 1, ranks.end(),
                                    [&](std::uint32_t a) { return process_of(a).id != first.id; });
    if (apart == ranks.end())
      continue;
    std::string names;
    for (std::uint32_t a : ranks)
      names += (names.empty() ? "" : ", ") + std::string(spec.actors[a].name);
    throw LaunchError(describe(spec) + ": communicator group " + std::to_string(g) + " (actors " +
                      names + ") joins processes that share no memory ('" +
                      spec.actors[ranks.front()].name + "' " + first.said + ", '" +
                      spec.actors[*apart].name + "' " + process_of(*apart).said +
                      "): cg::CommunicatorKind::host moves tensors through shared memory; use "
                      "cg::CommunicatorKind::nccl, or place the group's actors together");
  }
}

bool nccl_ranks_share_gpus(const LaunchOptions& options) {
  if (options.nccl_ranks_share_gpus)
    return true;
  const char* value = std::getenv(nccl_share_gpus_variable);
  if (!value || !*value || std::strcmp(value, "0") == 0)
    return false;
  if (std::strcmp(value, "1") == 0)
    return true;
  throw LaunchError(std::string("the environment variable ") + nccl_share_gpus_variable + " is '" +
                    value + "'; it must be '1' or '0' (or unset)");
}

std::vector<std::string> working_gpus(const std::vector<std::vector<std::string>>& devices,
                                      const LaunchOptions& options) {
  std::string first = "0";
  if (options.cuda_devices || std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::vector<std::string> drivers = launch_cuda_devices(options);
    if (!drivers.empty())
      first = drivers.front();
  }
  std::vector<std::string> gpus;
  for (const std::vector<std::string>& own : devices)
    gpus.push_back(own.empty() ? first : own.front());
  return gpus;
}

namespace {

// The process an actor runs in, as far as the driver knows: the driver's
// own (threads mode), a host command's (all of its host's actors), or one
// of its own; and how an error says so.
struct ActorProcessOf {
  std::int64_t id;
  std::string said;
};

ActorProcessOf actor_process(const ActorPlacement& placement, Mode mode,
                             const LaunchOptions& options, std::uint32_t a) {
  if (placement.local[a] && mode == Mode::threads)
    return {-1, "in the driver's process (threads mode)"};
  if (!placement.local[a] && !placement.under_launcher &&
      options.host_commands.count(placement.hosts[a]) != 0)
    return {placement.hosts[a], "in the one process of host " + std::to_string(placement.hosts[a])};
  return {(std::int64_t{1} << 32) + a, ""};
}

} // namespace

std::vector<std::string> nccl_host_ids(const GraphSpec& spec, const ActorPlacement& placement,
                                       const std::vector<std::string>& gpus, Mode mode,
                                       const LaunchOptions& options, bool share,
                                       const std::string& host_name) {
  std::vector<std::string> ids(spec.actors.size());
  if (options.communicator != CommunicatorKind::nccl)
    return ids;
  for (std::uint32_t g = 0; g < spec.communicators.size(); ++g) {
    const std::span<const std::uint32_t> ranks = spec.communicators[g].actors;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      for (std::size_t j = i + 1; j < ranks.size(); ++j) {
        const std::uint32_t a = ranks[i], b = ranks[j];
        if (gpus[a] != gpus[b])
          continue;
        // Hosts of a placement may be one machine (host commands that start
        // processes here): with the option, ranks on GPUs of one name are
        // told apart whatever their hosts; without it, only ranks of one
        // host are known to share a GPU.
        if (placement.hosts[a] != placement.hosts[b] && !share)
          continue;
        const ActorProcessOf pa = actor_process(placement, mode, options, a);
        const std::string pair = describe(spec) + ": actors '" + spec.actors[a].name + "' and '" +
                                 spec.actors[b].name + "', ranks " + std::to_string(i) + " and " +
                                 std::to_string(j) + " of NCCL communicator group " +
                                 std::to_string(g) + ", both run on GPU " + gpus[a] + " of host " +
                                 std::to_string(placement.hosts[a]);
        if (pa.id == actor_process(placement, mode, options, b).id)
          throw LaunchError(
              pair + " " + pa.said +
              ": NCCL refuses two ranks of a group on one GPU unless their processes claim "
              "hosts of their own, and one process has one NCCL host identity; " +
              (pa.id < 0 ? "launch in processes mode (cg::LaunchOptions::mode, CG_MODE=processes), "
                           "or give each rank a GPU of its own"
                         : "place them on hosts of their own, or give each rank a GPU of its own"));
        if (!share)
          throw LaunchError(pair +
                            ": NCCL refuses two ranks of a group on one GPU; set "
                            "cg::LaunchOptions::nccl_ranks_share_gpus (or " +
                            nccl_share_gpus_variable +
                            "=1) to give each actor process an NCCL host identity of its own, or "
                            "give each rank a GPU of its own");
        for (std::uint32_t actor : {a, b}) {
          // The driver's own process keeps its host's identity: the other
          // rank's process has one of its own.
          const ActorProcessOf process = actor_process(placement, mode, options, actor);
          if (process.id >= 0)
            ids[actor] =
                host_name + "-cg-" +
                (process.id < (std::int64_t{1} << 32) ? "host" + std::to_string(process.id)
                                                      : std::string(spec.actors[actor].name));
        }
      }
    }
  }
  // A host command's process is one process: all of its actors have its identity.
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    for (std::uint32_t b = 0; b < spec.actors.size(); ++b)
      if (!ids[a].empty() && ids[b].empty() &&
          actor_process(placement, mode, options, a).id ==
              actor_process(placement, mode, options, b).id)
        ids[b] = ids[a];
  return ids;
}

bool mps_running(const char* pipe_directory) {
  const std::string directory =
      pipe_directory && *pipe_directory ? pipe_directory : "/tmp/nvidia-mps";
  std::error_code error;
  return std::filesystem::exists(directory + "/control", error);
}

std::string gpu_sharing_notice(const GraphSpec& spec, const ActorPlacement& placement,
                               const std::vector<std::string>& gpus, Mode mode,
                               const LaunchOptions& options, bool mps) {
  if (mps)
    return "";
  std::vector<bool> on_gpu(spec.actors.size(), false);
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    on_gpu[a] = spec.actors[a].gpus > 0;
  if (options.communicator == CommunicatorKind::nccl)
    for (const auto& group : spec.communicators)
      for (std::uint32_t a : group.actors)
        on_gpu[a] = true;
  for (const ChannelSpec& channel : spec.channels) {
    if (!channel.cuda_ipc)
      continue;
    if (channel.writer >= 0)
      on_gpu[static_cast<std::uint32_t>(channel.writer)] = true;
    for (int reader : channel.reader_actors)
      if (reader >= 0)
        on_gpu[static_cast<std::uint32_t>(reader)] = true;
  }
  // Actor processes the driver starts on its own host.
  const auto own_process_here = [&](std::uint32_t a) {
    if (placement.local[a])
      return mode == Mode::processes;
    return !placement.under_launcher && placement.hosts[a] == 0 &&
           options.host_commands.count(0) == 0;
  };
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
    if (!on_gpu[a] || !own_process_here(a))
      continue;
    std::vector<std::string> sharing;
    for (std::uint32_t b = 0; b < spec.actors.size(); ++b)
      if (on_gpu[b] && own_process_here(b) && gpus[b] == gpus[a])
        sharing.push_back("'" + std::string(spec.actors[b].name) + "'");
    if (sharing.size() < 2)
      continue;
    const std::string last = sharing.back();
    sharing.pop_back();
    return "cg: " + describe(spec) + ": actor processes " + join(sharing, ", ") + " and " + last +
           " share GPU " + gpus[a] +
           ", and NVIDIA MPS is not running: processes take turns on a GPU they share (a 16-byte "
           "tensor passed between two actors on an H100: 526 us p50 without MPS, 37 us under "
           "it); start MPS (nvidia-cuda-mps-control -d) or run the actors as threads "
           "(cg::LaunchOptions::mode, CG_MODE=threads)";
  }
  return "";
}

} // namespace cg::detail
