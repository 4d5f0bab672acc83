// launch.cpp - Launching a compiled graph: GraphRuntime's constructor and its steps.
//
// Launch: check the options, place the actors, write the graph's segment
// (anonymous shared memory: graph/segment.hpp) with its channels, start one
// actor process per local actor, each inheriting the segment's descriptor
// (or, in threads mode, one thread each over our mapping), wait until all
// are attached, then close our descriptor: from then on the memory is
// reachable only through the processes' mappings, and it has no name
// anywhere, so no crash of anyone can leave it behind. Actors that share no
// memory with the driver (other hosts, a launcher's ranks, TCP forced) are
// reached through a rendezvous server and relays (net/scale_out.hpp).
// A step that fails throws LaunchError and leaves nothing running.
#include "graph/launch.hpp"

#include <cg/actor.hpp>
#include <cg/cpu_binding.hpp>
#include <cg/device.hpp>
#include <cg/placement.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include "graph/runtime_state.hpp"
#include "os/launcher.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace cg {

std::vector<std::string> launch_cuda_devices(const LaunchOptions& options) {
  if (options.cuda_devices)
    return *options.cuda_devices;
  std::vector<std::string> devices;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string list(visible);
    for (std::size_t start = 0; start <= list.size();) {
      std::size_t end = std::min(list.find(',', start), list.size());
      std::string item = list.substr(start, end - start);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (!item.empty())
        devices.push_back(item);
      start = end + 1;
    }
    return devices;
  }
  for (int i = 0, n = cuda_device_count(); i < n; ++i)
    devices.push_back(std::to_string(i));
  return devices;
}

Mode launch_mode(const LaunchOptions& options) {
  if (options.mode)
    return *options.mode;
  const char* name = std::getenv("CG_MODE");
  if (!name || !*name || std::strcmp(name, "processes") == 0)
    return Mode::processes;
  if (std::strcmp(name, "threads") == 0)
    return Mode::threads;
  throw LaunchError(std::string("the environment variable CG_MODE is '") + name +
                    "'; it must be 'processes' or 'threads' (or unset)");
}

} // namespace cg

namespace cg::detail {
namespace {

// The executions a profile's rings keep (LaunchOptions::profile_executions).
std::uint32_t profile_depth(const LaunchOptions& options) {
  if (options.profile_executions != 0)
    return options.profile_executions;
  const char* text = std::getenv(profile_executions_variable);
  if (!text || !*text)
    return default_profile_executions;
  std::uint32_t executions = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, executions);
  if (error != std::errc{} || stop != end || executions == 0)
    throw LaunchError(std::string("the environment variable ") + profile_executions_variable +
                      " is '" + text + "'; it must be a number of executions from 1 to " +
                      std::to_string(std::numeric_limits<std::uint32_t>::max()) + " (or unset)");
  return executions;
}

// The NCCL unique id of every communicator group, or why they cannot be made.
std::vector<NcclIdBytes> make_nccl_ids(const GraphSpec& spec) {
  const std::string refused = describe(spec) + ": cg::CommunicatorKind::nccl needs a CUDA device, ";
  if (!built_with_cuda())
    throw LaunchError(refused + "and this runtime was built without CUDA (configure with "
                                "-DCG_WITH_CUDA=ON, or use cg::CommunicatorKind::host)");
  if (cuda_device_count() == 0)
    throw LaunchError(refused + "and this machine has none (use cg::CommunicatorKind::host)");
  std::vector<NcclIdBytes> ids(spec.communicators.size());
#if defined(CG_HAVE_CUDA)
  static_assert(sizeof(NcclUniqueId::bytes) == kNcclIdBytes);
  try {
    for (auto& id : ids)
      id = NcclCommunicator::make_unique_id().bytes;
  } catch (const std::exception& e) {
    throw LaunchError(describe(spec) + ": cannot make the NCCL unique ids of its " +
                      std::to_string(ids.size()) + " communicator groups: " + e.what());
  }
#endif
  return ids;
}

// The executable `name` names: itself if it has a '/', else found on PATH.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    std::string candidate = dirs.substr(start, colon - start) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = colon + 1;
  }
  return name;
}

// LaunchOptions::actor_logs, else CG_ACTOR_LOGS: made if missing.
std::string actor_log_directory(const GraphSpec& spec, const LaunchOptions& options) {
  std::string directory = options.actor_logs;
  if (const char* from_env = std::getenv("CG_ACTOR_LOGS"); directory.empty() && from_env)
    directory = from_env;
  if (directory.empty())
    return directory;
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error || !std::filesystem::is_directory(directory))
    throw LaunchError("cannot make the actor log directory '" + directory + "' of " +
                      describe(spec) + ": " +
                      (error ? error.message() : std::string("it is not a directory")));
  return directory;
}

} // namespace

// CG_LOG's first line: what is being launched, and how.
std::string GraphRuntime::Impl::describe_launch(const ActorPlacement& placement) const {
  const Impl& s = *this;
  std::string out = std::string("launching in ") +
                    (s.mode == Mode::threads ? "threads" : "processes") +
                    " mode: " + std::to_string(spec.actors.size()) + " actors";
  if (placement.remote_count > 0)
    out += " (" + std::to_string(placement.remote_count) + " in processes of their own" +
           (placement.tcp ? ", TCP forced" : "") + ")";
  out += ", " + std::to_string(spec.channels.size()) + " channels of " +
         std::to_string(s.options.max_in_flight) + " slots of " +
         std::to_string(s.options.slot_bytes) + " bytes; segment of " +
         std::to_string(s.segment.size()) + " bytes";
  if (!spec.communicators.empty())
    out += "; " + std::to_string(spec.communicators.size()) + " communicator groups (" +
           (s.options.communicator == CommunicatorKind::nccl ? "NCCL" : "host") + ")";
  return out;
}

// CG_LOG: the actors as started, where they run.
std::string GraphRuntime::Impl::describe_started() const {
  const Impl& s = *this;
  std::vector<std::string> local;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
    if (!s.local[a])
      continue;
    std::string where;
    if (s.mode == Mode::processes)
      for (std::size_t c = 0; c < s.child_names.size(); ++c)
        if (s.child_names[c] == spec.actors[a].name)
          where = "pid " + std::to_string(s.actors[c].pid());
    if (s.actor_cpus[a] >= 0)
      where += (where.empty() ? "" : ", ") + std::string("CPU ") + std::to_string(s.actor_cpus[a]);
    local.push_back(std::string(spec.actors[a].name) + (where.empty() ? "" : " (" + where + ")"));
  }
  std::string out = "started " + std::to_string(local.size()) + " actor " +
                    (s.mode == Mode::threads ? "threads" : "processes") + ": " + join(local, ", ");
  if (s.remote_count > 0)
    out += "; waiting for " + std::to_string(s.remote_count) +
           " actors in processes of their own at the rendezvous " +
           to_string(s.server.address_for_actors());
  if (!s.actor_logs.empty())
    out += "; their output goes to " + s.actor_logs + "/" + spec.name + ".<actor>.log";
  return out;
}

// CG_LOG=debug: each channel, its ends and what carries it.
void GraphRuntime::Impl::describe_channels() const {
  const Impl& s = *this;
  const auto who = [&](int actor) {
    return actor < 0 ? std::string("driver") : std::string(spec.actors[actor].name);
  };
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    std::vector<std::string> readers;
    for (int reader : spec.channels[c].reader_actors)
      readers.push_back(who(reader));
    const char* value = c < spec.names.channels.size() ? spec.names.channels[c] : "";
    s.log.say(LogLevel::debug, "channel " + std::to_string(c) + " (" + value +
                                   "): " + who(spec.channels[c].writer) + " -> " +
                                   join(readers, ", ") + " over " + s.transports[c] +
                                   (spec.channels[c].cuda_ipc ? " (CUDA IPC)" : ""));
  }
}

void check_launch_options(const GraphSpec& spec, const LaunchOptions& options) {
  if (options.max_in_flight == 0)
    throw LaunchError("cg::LaunchOptions::max_in_flight must be at least 1");
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

GraphRuntime::GraphRuntime(const GraphSpec& spec, std::string actor_host,
                           const LaunchOptions& options,
                           std::vector<std::optional<std::vector<std::byte>>> constructor_args)
    : spec_(spec), impl_(std::make_unique<Impl>(spec)) {
  Impl& s = *impl_;
  s.log = LaunchLog(spec.name, log_level_from_environment());
  check_launch_options(spec, options);
  s.options = options;
  s.mode = launch_mode(options);
  s.actor_logs = actor_log_directory(spec, options);
  s.assign_gpus();
  const ActorPlacement placement = place_actors(spec, options);
  // Threads mode starts processes too: for actors reached over TCP.
  actor_host = actor_executable(
      spec, s.mode == Mode::processes || (placement.remote_count > 0 && !placement.under_launcher),
      options, std::move(actor_host));
  check_cuda_ipc_placement(spec, placement);
  check_communicator_placement(spec, placement, options);
  s.create_segment(constructor_args);
  if (s.log.info())
    s.log.say(LogLevel::info, s.describe_launch(placement));
  // Actors in processes of their own get theirs through the rendezvous.
  for (std::uint32_t actor = 0; actor < constructor_args.size(); ++actor)
    if (constructor_args[actor] && actor < placement.local.size() && !placement.local[actor])
      s.remote_constructor_args[spec.actors[actor].name] = *constructor_args[actor];
  s.open_driver_ports();
  s.place(placement);
  s.place_on_cpus();
  try {
    s.start_actors(actor_host, placement);
  } catch (const std::exception& e) {
    teardown();
    throw LaunchError(std::string("cannot start the actors of ") + describe(spec) + ": " +
                      e.what());
  }
  if (s.log.info())
    s.log.say(LogLevel::info, s.describe_started());
  s.start_monitor();
  try {
    s.wait_until_ready();
  } catch (const std::exception& e) {
    s.log.say(LogLevel::info, std::string("failed: ") + e.what());
    teardown();
    throw;
  }
  s.log.say(LogLevel::info,
            "ready: every actor has started" +
                std::string(spec.communicators.empty() ? "" : " and warmed its communicators"));
  if (s.log.debug())
    s.describe_channels();
  // Every actor has mapped the segment: nobody else may.
  s.segment.unlink();
}

// Each actor's devices; in threads mode (one process) also its first
// device's position in the driver's list.
void GraphRuntime::Impl::assign_gpus() {
  cuda_devices = assign_cuda_devices(spec, options);
  cuda_ordinals.assign(spec.actors.size(), 0);
  if (mode == Mode::threads && std::any_of(cuda_devices.begin(), cuda_devices.end(),
                                           [](const auto& d) { return !d.empty(); })) {
    std::vector<std::string> all = launch_cuda_devices(options);
    for (std::size_t a = 0; a < spec.actors.size(); ++a)
      if (!cuda_devices[a].empty())
        cuda_ordinals[a] = static_cast<int>(
            std::find(all.begin(), all.end(), cuda_devices[a].front()) - all.begin());
  }
}

// The segment with its channels, groups, constructor arguments given to
// launch() and NCCL ids (graph/segment.hpp).
void GraphRuntime::Impl::create_segment(
    std::span<const std::optional<std::vector<std::byte>>> constructor_args) {
  if (!spec.communicators.empty() && options.communicator == CommunicatorKind::nccl)
    nccl_ids = make_nccl_ids(spec);
  const bool any_constructor_args = std::any_of(constructor_args.begin(), constructor_args.end(),
                                                [](const auto& args) { return args.has_value(); });
  if (any_constructor_args && constructor_args.size() != spec.actors.size())
    throw LaunchError("constructor arguments for " + std::to_string(constructor_args.size()) +
                      " actors given to " + describe(spec) + ", which has " +
                      std::to_string(spec.actors.size()));
  SegmentContents contents{.slots = options.max_in_flight,
                           .slot_bytes = options.slot_bytes,
                           .communicator_bytes = options.communicator_bytes,
                           .nccl_ids = nccl_ids};
  profile_path = options.profile;
  if (const char* from_env = std::getenv(profile_variable); profile_path.empty() && from_env)
    profile_path = from_env;
  // One file per graph of a program that launches several.
  for (std::size_t at; (at = profile_path.find("{graph}")) != std::string::npos;)
    profile_path.replace(at, 7, spec.name);
  if (!profile_path.empty() || options.record_profile)
    contents.profile_executions = profile_depth(options);
  profile_executions = contents.profile_executions;
  if (any_constructor_args)
    contents.constructor_args = constructor_args;
  try {
    segment = SharedSegment::create_anonymous(std::string("cg.") + spec.name,
                                              segment_bytes(spec, contents));
  } catch (const std::exception& e) {
    std::string why = "cannot create the channels of " + describe(spec) + ": " + e.what();
    if (contents.profile_executions != 0) {
      SegmentContents unprofiled = contents;
      unprofiled.profile_executions = 0;
      why += "; the profile's rings of " + std::to_string(contents.profile_executions) +
             " executions take " +
             size_text(segment_bytes(spec, contents) - segment_bytes(spec, unprofiled)) +
             " of it (fewer: LaunchOptions::profile_executions or " + profile_executions_variable +
             ")";
    }
    throw LaunchError(why);
  }
  try {
    WrittenSegment written =
        write_segment({static_cast<std::byte*>(segment.data()), segment.size()}, spec, contents);
    header = written.header;
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
      records.push_back(actor_record(
          {static_cast<const std::byte*>(segment.data()), segment.size()}, *header, a));
    channels = std::move(written.channels);
    groups = std::move(written.groups);
    const std::span<std::byte> memory{static_cast<std::byte*>(segment.data()), segment.size()};
    profile = ProfileRecorder(
        profile_ring(memory, *header, ProfileParticipant::driver(spec.actors.size())));
    collector_profile = ProfileRecorder(
        profile_ring(memory, *header, ProfileParticipant::collector(spec.actors.size())));
  } catch (const std::exception& e) {
    throw LaunchError(e.what());
  }
}

// The driver's writers of the input channels and readers of the output
// channels (one reader per distinct channel, however many outputs it carries).
void GraphRuntime::Impl::open_driver_ports() {
  for (std::uint32_t channel : spec.input_channels)
    inputs.emplace_back(channels.at(channel));
  input_in_place.assign(inputs.size(), false);
  for (std::uint32_t channel : spec.output_channels) {
    auto it = std::find(result_channels.begin(), result_channels.end(), channel);
    if (it == result_channels.end()) {
      result_channels.push_back(channel);
      result_readers.emplace_back(
          channels.at(channel), static_cast<std::uint32_t>(spec.channels[channel].driver_reader()));
      it = result_channels.end() - 1;
    }
    output_source.push_back(static_cast<std::size_t>(it - result_channels.begin()));
  }
}

void GraphRuntime::Impl::place(const ActorPlacement& placement) {
  local = placement.local;
  local_count = placement.local_count;
  remote_count = placement.remote_count;
  transports.assign(spec.channels.size(), "shm");
}

// LaunchOptions::cpu_binding and spin_when_cpus_suffice: the launching thread
// now, the actors as they start (each binds itself: an actor thread in
// run_actor_thread, an actor process from CG_ACTOR_CPU and CG_ACTOR_SPIN,
// before it makes threads of its own).
void GraphRuntime::Impl::place_on_cpus() {
  actor_cpus.assign(spec.actors.size(), -1);
  const bool bind = launch_cpu_binding(options.cpu_binding) == CpuBinding::cores;
  if (!bind && !options.spin_when_cpus_suffice)
    return;
  const std::vector<int> allowed = cpus_of(0);
  std::vector<int> plan = plan_cpu_binding(1 + local_count, allowed);
  if (plan.empty())
    return; // more of us than CPUs: binding would make us share, spinning would delay the sharer
  own_cpus = options.spin_when_cpus_suffice;
  if (bind) {
    if (!set_cpus(0, {plan[0]}))
      throw LaunchError("cannot bind the launching thread of " + describe(spec) + " to CPU " +
                        std::to_string(plan[0]) + ": " + std::strerror(errno));
    thread_cpus_before = allowed;
    std::size_t next = 1;
    for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor)
      if (local[actor])
        actor_cpus[actor] = plan[next++];
    bound_cpus = std::move(plan);
  }
  launching_thread = ::gettid();
  set_has_own_cpu(own_cpus);
}

// The local actors as threads or processes, then (when some actors share no
// memory with us) the rendezvous and the remote actor processes we start.
void GraphRuntime::Impl::start_actors(const std::string& actor_host,
                                      const ActorPlacement& placement) {
  thread_running.assign(spec.actors.size(), 0);
  actor_threads.reserve(spec.actors.size());
  thread_actor.reserve(spec.actors.size()); // so that push_back below cannot throw
  for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor) {
    if (!local[actor])
      continue;
    if (mode == Mode::threads) {
      // Under the lock the thread marks itself finished with, so that it is
      // marked running first; and only once it exists (creating it may throw).
      std::lock_guard lock(mutex);
      actor_threads.emplace_back([this, actor] { run_actor_thread(actor); });
      thread_actor.push_back(actor);
      thread_running[actor] = 1;
    } else
      spawn_actor_process(actor_host, actor);
  }
  if (remote_count > 0)
    start_scale_out(actor_host, placement);
  actor_output.start();
}

// One actor process, inheriting the segment's descriptor.
void GraphRuntime::Impl::spawn_actor_process(const std::string& actor_host, std::uint32_t actor) {
  const int fd = segment.fd();
  std::vector<std::string> env;
  if (!cuda_devices[actor].empty())
    env.push_back("CUDA_VISIBLE_DEVICES=" + join(cuda_devices[actor], ","));
  // The actor binds itself before it starts any thread (its threads inherit
  // the binding).
  if (actor_cpus[actor] >= 0)
    env.push_back(std::string(actor_cpu_variable) + "=" + std::to_string(actor_cpus[actor]));
  env.push_back(std::string(actor_spin_variable) + "=" + (own_cpus ? "1" : "0"));
  spawn_child(actor_host, {spec.name, spec.actors[actor].name, "fd:" + std::to_string(fd)}, env,
              {.inherit = {fd}}, spec.actors[actor].name);
}

void GraphRuntime::Impl::spawn_child(const std::string& path, const std::vector<std::string>& args,
                                     const std::vector<std::string>& env,
                                     ChildProcess::SpawnOptions spawn, const std::string& names,
                                     const std::string& where) {
  int log_file = -1;
  if (!actor_logs.empty()) {
    const std::string file = actor_logs + "/" + spec.name + "." + names + ".log";
    log_file = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_file < 0)
      throw std::system_error(errno, std::generic_category(), "cannot open " + file);
    spawn.standard_output = spawn.standard_error = log_file;
  } else if (options.tag_actor_output) {
    const TaggedOutput::WriteEnds ends = actor_output.open_pipes();
    spawn.standard_output = ends.output;
    spawn.standard_error = ends.error;
  }
  ChildProcess child;
  try {
    child = ChildProcess::spawn(path, args, env, spawn);
  } catch (...) {
    if (log_file >= 0)
      ::close(log_file);
    actor_output.abandon();
    throw;
  }
  std::optional<std::size_t> output;
  if (log_file >= 0)
    ::close(log_file);
  else if (options.tag_actor_output)
    output = actor_output.adopt(names + " " +
                                (where.empty() ? "pid=" + std::to_string(child.pid()) : where));
  log.say(LogLevel::debug, "started " + names + " as pid " + std::to_string(child.pid()) +
                               (where.empty() ? "" : " (" + where + ")"));
  actors.push_back(std::move(child));
  child_names.push_back(names.substr(0, names.find(',')));
  child_output.push_back(output);
}

// Threads mode: runs one actor's program until teardown closes its channels.
// Leaving it any other way (its constructor threw, a channel broke) stops the
// graph, as an actor process's death does.
void GraphRuntime::Impl::run_actor_thread(std::uint32_t actor) {
  // Says so however the thread ends (teardown waits for it).
  struct Finished {
    Impl& runtime;
    std::uint32_t actor;
    ~Finished() {
      {
        std::lock_guard lock(runtime.mutex);
        runtime.thread_running[actor] = 0;
      }
      runtime.changed.notify_all();
    }
  } finished{*this, actor};
  const std::string name = spec.actors[actor].name;
  std::string why;
  try {
    if (actor_cpus.at(actor) >= 0 && !set_cpus(0, {actor_cpus[actor]}))
      throw std::runtime_error("cannot bind it to CPU " + std::to_string(actor_cpus[actor]) + ": " +
                               std::strerror(errno));
    set_has_own_cpu(own_cpus);
    ActorProcess process(spec, actor, {static_cast<std::byte*>(segment.data()), segment.size()});
    process.set_cuda_device(cuda_ordinals.at(actor));
    int status = spec.actors[actor].run(process);
    why = "stopped: its program returned " + std::to_string(status);
  } catch (const std::exception& e) {
    why = "failed: " + current_exception_type() + ": " + e.what();
  }
  if (stopping.load())
    return;
  fail(std::make_exception_ptr(
      ActorDiedError(name, "actor '" + name + "' of " + describe(spec) + " (a thread) " + why)));
  close_all();
}

// A monitor thread watches the actor processes (pidfds, driver.cpp).
void GraphRuntime::Impl::start_monitor() {
  if (actors.empty())
    return;
  stop_fd = ::eventfd(0, EFD_CLOEXEC);
  monitor = std::thread([this] { watch_actors(); });
}

// Until every local actor has attached and every remote one reported ready,
// or one died, or LaunchOptions::start_timeout passed. Start-up is the one
// place we poll: it happens once per launch.
void GraphRuntime::Impl::wait_until_ready() {
  const Deadline deadline = Clock::now() + options.start_timeout;
  if (remote_count > 0) {
    try {
      connect_remote(deadline);
    } catch (const std::exception& e) {
      throw LaunchError(e.what());
    }
  }
  while (header->ready.load(std::memory_order_acquire) < local_count ||
         (remote_count > 0 && server.ready_count() < remote_count)) {
    std::exception_ptr died;
    {
      std::lock_guard lock(mutex);
      died = failure;
    }
    if (died || Clock::now() > deadline) {
      std::string why = describe(spec) + ": actors did not start within " +
                        std::to_string(options.start_timeout.count()) + " ms";
      if (remote_count > 0 && server.ready_count() < remote_count)
        why += " (" + std::to_string(server.ready_count()) + " of " + std::to_string(remote_count) +
               " actors on other hosts ready)";
      if (died) {
        try {
          std::rethrow_exception(died);
        } catch (const std::exception& e) {
          why = std::string(e.what()) + " during start-up";
        }
      }
      throw LaunchError(why);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Starts the rendezvous and the actor processes the driver starts itself
// (TCP forced on this host, or a host with a command in host_commands).
void GraphRuntime::Impl::start_scale_out(const std::string& actor_host,
                                         const ActorPlacement& placement) {
  const bool under_launcher = placement.under_launcher;
  const bool tcp = placement.tcp;
  const std::vector<std::uint32_t>& hosts = placement.hosts;
  std::vector<std::string> remote;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    if (!local[a])
      remote.push_back(spec.actors[a].name);
  // Where actors find us: LaunchOptions::rendezvous, CG_RENDEZVOUS, or an
  // ephemeral port (on loopback when every actor process is ours, here).
  const char* from_env = std::getenv(rendezvous_variable);
  std::string given = !options.rendezvous.empty() ? options.rendezvous : (from_env ? from_env : "");
  bool all_here = !under_launcher && tcp && options.host_commands.empty();
  Endpoint listen{all_here && given.empty() ? "127.0.0.1" : "0.0.0.0", 0};
  std::string host;
  if (!given.empty()) {
    std::optional<Endpoint> at = parse_endpoint(given);
    if (!at)
      throw LaunchError(describe(spec) + ": the rendezvous address '" + given +
                        "' is not host:port (LaunchOptions::rendezvous or CG_RENDEZVOUS)");
    listen.port = at->port;
    if (at->host != "0.0.0.0" && at->host != "::")
      host = at->host;
    // An address (not a name, which may resolve to a loopback alias such as
    // Debian's 127.0.1.1) is also the only one listened on.
    if (is_numeric_address(at->host))
      listen.host = at->host;
  }
  std::string transport_error;
  if (!host_transport_from_environment(host_transport, transport_error))
    throw LaunchError(transport_error); // said as "cannot start the actors of graph 'g': ..."
  // The launch's secret: the one in the environment under a launcher (or
  // when the user starts actor processes by hand), else a fresh one.
  std::optional<Secret> secret;
  if (under_launcher || std::getenv(secret_variable) || std::getenv(secret_file_variable)) {
    std::string why;
    secret = Secret::from_environment(why);
    if (!secret)
      throw LaunchError(describe(spec) + ": " + why);
  } else {
    secret = Secret::generate();
  }
  // The driver's own entry is expected too: no table goes out without it.
  std::vector<std::string> expected = remote;
  expected.push_back(driver_rendezvous_name);
  if (listener.listen(*secret, {listen.host, 0}) != NetStatus::ok)
    throw LaunchError(describe(spec) + ": cannot listen for TCP channels: " + listener.error());
  const std::span<const std::byte> nccl_bytes = std::as_bytes(std::span(nccl_ids));
  RendezvousServer::Options server_options{
      spec.name,
      expected,
      listen,
      format_greeting({options.max_in_flight, options.slot_bytes, options.partition_timeout,
                       host_transport, profile_executions,
                       spec.communicators.empty() ? 0 : options.communicator_bytes}),
      secret,
      [this](const std::vector<std::string>& actors, const RemoteFailure& why) {
        remote_lost(actors, why);
      },
      [name = spec.name](const std::string& why) {
        std::fprintf(stderr, "cg: graph '%s': rendezvous dropped a %s\n", name, why.c_str());
      },
      options.partition_timeout,
      std::move(remote_constructor_args),
      {nccl_bytes.begin(), nccl_bytes.end()}};
  if (server.start(std::move(server_options)) != NetStatus::ok)
    throw LaunchError(describe(spec) + ": cannot start the rendezvous: " + server.error());
  if (host.empty())
    host = all_here ? "127.0.0.1" : server.address_for_actors().host;
  const Endpoint advertised{host, server.endpoint().port};
  server.publish_local(driver_rendezvous_name, {host, listener.endpoint().port});
  const std::string variable = std::string(rendezvous_variable) + "=" + to_string(advertised);
  if (under_launcher)
    return; // mpirun/srun starts every actor
  if (tcp && options.host_commands.empty()) {
    // Processes of this host: each gets its GPUs, as a process sharing the
    // segment would.
    const std::string secret_entry = std::string(secret_variable) + "=" + secret->hex();
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
      if (local[a])
        continue;
      std::vector<std::string> env{variable, secret_entry};
      if (!cuda_devices[a].empty())
        env.push_back("CUDA_VISIBLE_DEVICES=" + join(cuda_devices[a], ","));
      spawn_child(actor_host, {spec.name, spec.actors[a].name}, env, {}, spec.actors[a].name);
    }
    return;
  }
  for (const auto& [index, command] : options.host_commands) {
    std::string names;
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
      if (!local[a] && hosts[a] == index)
        names += (names.empty() ? "" : ",") + std::string(spec.actors[a].name);
    if (names.empty() || command.empty())
      continue;
    std::vector<std::string> args(command.begin() + 1, command.end());
    // The secret goes through the command's standard input (ssh passes it
    // on), never its command line, which other users of a host can read.
    args.insert(args.end(), {"env", variable, std::string(secret_variable) + "=stdin", actor_host,
                             spec.name, names});
    const std::string input = secret->hex() + "\n";
    spawn_child(find_program(command[0]), args, {}, {.standard_input = input}, names,
                "host=" + std::to_string(index));
  }
}

// Waits for every remote actor to publish, then sets up the TCP streams.
void GraphRuntime::Impl::connect_remote(Deadline deadline) {
  for (;;) {
    std::exception_ptr died;
    {
      std::lock_guard lock(mutex);
      died = failure;
    }
    if (died) {
      try {
        std::rethrow_exception(died);
      } catch (const std::exception& e) {
        throw LaunchError(std::string(e.what()) + " during start-up");
      }
    }
    Deadline step = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
    if (server.wait_for_all(step) == NetStatus::ok)
      break;
    if (Clock::now() >= deadline)
      throw LaunchError(describe(spec) + ": actors on other hosts did not connect within " +
                        std::to_string(options.start_timeout.count()) + " ms: " + server.error() +
                        " (start them with " + rendezvous_variable + "=" +
                        to_string(server.address_for_actors()) + " and the driver's " +
                        secret_variable + " (set it for both), or give host_commands)");
  }
  participants = participants_from_table(spec, server.table());
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    if (local[a] != (participants.of_actor[a] == 0))
      throw LaunchError(describe(spec) + ": actor '" + spec.actors[a].name +
                        "' was published by a process on another host, but runs here");
  std::string error =
      relays.start(spec, participants, 0, listener, host_transport, channels, deadline,
                   [this](const std::string& why, bool corrupt) { relay_fault(why, corrupt); });
  if (!error.empty())
    throw LaunchError(describe(spec) + ": cannot set up its channels between hosts: " + error);
  for (const Stream& stream : plan_streams(spec, participants))
    transports[stream.channel] = to_string(host_transport);
  // Inputs that go to other hosts are sent on as execute() writes them.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs[i].forward_with(relays.forwarder(spec.input_channels[i]));
  // A result that only the driver reads here comes straight off its stream.
  for (std::size_t i = 0; i < result_channels.size(); ++i) {
    const std::uint32_t channel = result_channels[i];
    const auto slot = static_cast<std::uint32_t>(spec.channels[channel].driver_reader());
    if (MessageSource* direct = relays.source(channel, slot))
      result_readers[i] = ChannelReader(*direct);
  }
}

} // namespace cg::detail
