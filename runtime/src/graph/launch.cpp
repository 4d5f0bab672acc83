// launch.cpp - Launching a compiled graph: GraphRuntime's constructor and its steps.
//
// Launch: check the options, place the actors, write the graph's segment
// (anonymous shared memory: actor/segment.hpp) with its channels, start one
// actor process per local actor, each inheriting the segment's descriptor
// (or, in threads mode, one thread each over our mapping), wait until all
// are attached, then close our descriptor: from then on the memory is
// reachable only through the processes' mappings, and it has no name
// anywhere, so no crash of anyone can leave it behind. Actors that share no
// memory with the driver (other hosts, a launcher's ranks, TCP forced) are
// reached through a rendezvous server and relays (net/scale_out.hpp): their
// steps are in graph/launch_remote.cpp, and the decisions made before
// anything starts in graph/launch_decisions.cpp (graph/launch.hpp).
// A step that fails throws LaunchError and leaves nothing running.
#include "graph/launch.hpp"

#include <cg/actor.hpp>
#include <cg/cpu_binding.hpp>
#include <cg/device.hpp>
#include <cg/placement.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include "graph/graph_path.hpp"
#include "graph/runtime_state.hpp"
#include "os/launcher.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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
  // A GPU whose CUDA fails is not "no device to give": say what CUDA said.
  const CudaDevices& cuda = cuda_devices();
  if (!cuda.error.empty())
    throw LaunchError("the driver cannot list its CUDA devices for actors with .gpus(n): CUDA "
                      "fails on this machine: " +
                      cuda.error);
  for (int i = 0; i < cuda.count; ++i)
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

// Throws LaunchError where NCCL groups can have no device: said before
// whether their ranks may share one, which matters only where there is one.
void check_nccl_devices(const GraphSpec& spec) {
  const std::string refused = describe(spec) + ": cg::CommunicatorKind::nccl needs a CUDA device, ";
  if (!built_with_cuda())
    throw LaunchError(refused + "and this runtime was built without CUDA (configure with "
                                "-DCG_WITH_CUDA=ON, or use cg::CommunicatorKind::host)");
  const CudaDevices& cuda = cuda_devices();
  if (!cuda.error.empty())
    throw LaunchError(refused + "and CUDA fails on this machine: " + cuda.error);
  if (cuda.count == 0)
    throw LaunchError(refused + "and this machine has none (use cg::CommunicatorKind::host)");
}

// The NCCL unique id of every communicator group, or why they cannot be made.
std::vector<NcclIdBytes> make_nccl_ids(const GraphSpec& spec) {
  check_nccl_devices(spec);
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
                    (s.processes.mode == Mode::threads ? "threads" : "processes") +
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
    if (!s.scale_out.local[a])
      continue;
    std::string where;
    if (s.processes.mode == Mode::processes)
      for (std::size_t c = 0; c < s.processes.child_names.size(); ++c)
        if (s.processes.child_names[c] == spec.actors[a].name)
          where = "pid " + std::to_string(s.processes.actors[c].pid());
    if (s.processes.actor_cpus[a] >= 0)
      where += (where.empty() ? "" : ", ") + std::string("CPU ") +
               std::to_string(s.processes.actor_cpus[a]);
    local.push_back(std::string(spec.actors[a].name) + (where.empty() ? "" : " (" + where + ")"));
  }
  std::string out = "started " + std::to_string(local.size()) + " actor " +
                    (s.processes.mode == Mode::threads ? "threads" : "processes") + ": " +
                    join(local, ", ");
  if (s.scale_out.remote_count > 0)
    out += "; waiting for " + std::to_string(s.scale_out.remote_count) +
           " actors in processes of their own at the rendezvous " +
           to_string(s.scale_out.server.address_for_actors());
  if (!s.processes.actor_logs.empty())
    out += "; their output goes to " + s.processes.actor_logs + "/" + spec.name + ".<actor>.log";
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
                                   join(readers, ", ") + " over " + s.scale_out.transports[c] +
                                   (spec.channels[c].cuda_ipc ? " (CUDA IPC)" : ""));
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
  s.processes.mode = launch_mode(options);
  s.processes.actor_logs = actor_log_directory(spec, options);
  s.assign_gpus();
  const ActorPlacement placement = place_actors(spec, options);
  // Threads mode starts processes too: for actors reached over TCP.
  actor_host = actor_executable(spec,
                                s.processes.mode == Mode::processes ||
                                    (placement.remote_count > 0 && !placement.under_launcher),
                                options, std::move(actor_host));
  check_cuda_ipc_placement(spec, placement);
  s.resolve_restarts(placement);
  s.processes.actor_host = actor_host;
  check_communicator_placement(spec, placement, options);
  s.share_gpus(placement);
  s.create_segment(constructor_args);
  if (s.log.info())
    s.log.say(LogLevel::info, s.describe_launch(placement));
  // Actors in processes of their own get theirs through the rendezvous.
  for (std::uint32_t actor = 0; actor < constructor_args.size(); ++actor)
    if (constructor_args[actor] && actor < placement.local.size() && !placement.local[actor])
      s.scale_out.remote_constructor_args[spec.actors[actor].name] = *constructor_args[actor];
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
  // Every actor has mapped the segment: nobody else may, but for an actor
  // that may be restarted, whose new process inherits the descriptor
  // (close-on-exec for every other child), kept until teardown.
  if (std::all_of(s.processes.max_restarts.begin(), s.processes.max_restarts.end(),
                  [](std::uint32_t most) { return most == 0; }))
    s.segment.unlink();
  s.processes.restartable.store(true);
}

// Each actor's devices; in threads mode (one process) also its first
// device's position in the driver's list.
void GraphRuntime::Impl::assign_gpus() {
  cuda_devices = assign_cuda_devices(spec, options);
  cuda_ordinals.assign(spec.actors.size(), 0);
  if (processes.mode == Mode::threads && std::any_of(cuda_devices.begin(), cuda_devices.end(),
                                                     [](const auto& d) { return !d.empty(); })) {
    std::vector<std::string> all = launch_cuda_devices(options);
    for (std::size_t a = 0; a < spec.actors.size(); ++a)
      if (!cuda_devices[a].empty())
        cuda_ordinals[a] = static_cast<int>(
            std::find(all.begin(), all.end(), cuda_devices[a].front()) - all.begin());
  }
}

// Ranks of an NCCL group that share a GPU get NCCL host identities of
// their own, or are refused, before any process starts NCCL; and where actor
// processes share a GPU without MPS, the program is told once what that
// costs.
void GraphRuntime::Impl::share_gpus(const ActorPlacement& placement) {
  if (!spec.communicators.empty() && options.communicator == CommunicatorKind::nccl)
    check_nccl_devices(spec);
  const std::vector<std::string> gpus = working_gpus(cuda_devices, options);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    std::strcpy(host, "localhost");
  scale_out.nccl_host_ids = cg::detail::nccl_host_ids(
      spec, placement, gpus, processes.mode, options, nccl_ranks_share_gpus(options), host);
  const std::string notice =
      gpu_sharing_notice(spec, placement, gpus, processes.mode, options,
                         mps_running(std::getenv("CUDA_MPS_PIPE_DIRECTORY")));
  // Once per program, and only where there is a GPU to share.
  static std::atomic<bool> noticed{false};
  if (!notice.empty() && cuda_device_count() > 0 && !noticed.exchange(true))
    std::fprintf(stderr, "%s\n", notice.c_str());
}

// The segment with its channels, groups, constructor arguments given to
// launch() and NCCL ids (actor/segment.hpp).
void GraphRuntime::Impl::create_segment(
    std::span<const std::optional<std::vector<std::byte>>> constructor_args) {
  if (!spec.communicators.empty() && options.communicator == CommunicatorKind::nccl)
    scale_out.nccl_ids = make_nccl_ids(spec);
  const bool any_constructor_args = std::any_of(constructor_args.begin(), constructor_args.end(),
                                                [](const auto& args) { return args.has_value(); });
  if (any_constructor_args && constructor_args.size() != spec.actors.size())
    throw LaunchError("constructor arguments for " + std::to_string(constructor_args.size()) +
                      " actors given to " + describe(spec) + ", which has " +
                      std::to_string(spec.actors.size()));
  // The geometry as launched, which the segment header keeps for the actors
  // and the greeting carries to other hosts.
  SegmentContents contents{.geometry = {.max_in_flight = options.max_in_flight,
                                        .slot_bytes = options.slot_bytes,
                                        .communicator_bytes = spec.communicators.empty()
                                                                  ? 0
                                                                  : options.communicator_bytes,
                                        .profile_executions = 0},
                           .communicator = options.communicator,
                           .nccl_ids = scale_out.nccl_ids};
  profiling.profile_path = options.profile;
  if (const char* from_env = std::getenv(profile_variable);
      profiling.profile_path.empty() && from_env)
    profiling.profile_path = from_env;
  // One file per graph of a program that launches several.
  profiling.profile_path = with_graph_name(profiling.profile_path, spec.name);
  profiling.sampling = ProfileSampling(profile_every(options));
  if (!profiling.profile_path.empty() || options.record_profile) {
    contents.geometry.profile_executions = profile_depth(options);
    contents.geometry.profile_every = profiling.sampling.every();
  }
  if (any_constructor_args)
    contents.constructor_args = constructor_args;
  try {
    segment = SharedSegment::create_anonymous(std::string("cg.") + spec.name,
                                              segment_bytes(spec, contents));
  } catch (const std::exception& e) {
    std::string why = "cannot create the channels of " + describe(spec) + ": " + e.what();
    if (contents.geometry.profile_executions != 0) {
      SegmentContents unprofiled = contents;
      unprofiled.geometry.profile_executions = 0;
      why += "; the profile's rings of " + std::to_string(contents.geometry.profile_executions) +
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
    profiling.profile = ProfileRecorder(
        profile_ring(memory, *header, ProfileParticipant::driver(spec.actors.size())));
    profiling.collector_profile = ProfileRecorder(
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
    auto it = std::find(results.result_channels.begin(), results.result_channels.end(), channel);
    if (it == results.result_channels.end()) {
      results.result_channels.push_back(channel);
      results.result_readers.emplace_back(
          channels.at(channel), static_cast<std::uint32_t>(spec.channels[channel].driver_reader()));
      it = results.result_channels.end() - 1;
    }
    results.output_source.push_back(static_cast<std::size_t>(it - results.result_channels.begin()));
  }
  results.result_origins.assign(results.result_channels.size(), std::string());
}

void GraphRuntime::Impl::place(const ActorPlacement& placement) {
  scale_out.local = placement.local;
  scale_out.local_count = placement.local_count;
  scale_out.remote_count = placement.remote_count;
  scale_out.transports.assign(spec.channels.size(), "shm");
}

// LaunchOptions::cpu_binding and spin_when_cpus_suffice: the launching thread
// now, the actors as they start (each binds itself: an actor thread in
// run_actor_thread, an actor process from CG_ACTOR_CPU and CG_ACTOR_SPIN,
// before it makes threads of its own).
void GraphRuntime::Impl::place_on_cpus() {
  processes.actor_cpus.assign(spec.actors.size(), -1);
  const bool bind = launch_cpu_binding(options.cpu_binding) == CpuBinding::cores;
  if (!bind && !options.spin_when_cpus_suffice)
    return;
  const std::vector<int> allowed = cpus_of(0);
  std::vector<int> plan = plan_cpu_binding(1 + scale_out.local_count, allowed);
  if (plan.empty())
    return; // more of us than CPUs: binding would make us share, spinning would delay the sharer
  processes.own_cpus = options.spin_when_cpus_suffice;
  if (bind) {
    if (!set_cpus(0, {plan[0]}))
      throw LaunchError("cannot bind the launching thread of " + describe(spec) + " to CPU " +
                        std::to_string(plan[0]) + ": " + std::strerror(errno));
    processes.thread_cpus_before = allowed;
    std::size_t next = 1;
    for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor)
      if (scale_out.local[actor])
        processes.actor_cpus[actor] = plan[next++];
    processes.bound_cpus = std::move(plan);
  }
  processes.launching_thread = ::gettid();
  set_has_own_cpu(processes.own_cpus);
}

// The local actors as threads or processes, then (when some actors share no
// memory with us) the rendezvous and the remote actor processes we start.
void GraphRuntime::Impl::start_actors(const std::string& actor_host,
                                      const ActorPlacement& placement) {
  processes.thread_running.assign(spec.actors.size(), 0);
  processes.actor_threads.reserve(spec.actors.size());
  processes.thread_actor.reserve(spec.actors.size()); // so that push_back below cannot throw
  for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor) {
    if (!scale_out.local[actor])
      continue;
    if (processes.mode == Mode::threads) {
      // Under the lock the thread marks itself finished with, so that it is
      // marked running first; and only once it exists (creating it may throw).
      std::lock_guard lock(mutex);
      processes.actor_threads.emplace_back([this, actor] { run_actor_thread(actor); });
      processes.thread_actor.push_back(actor);
      processes.thread_running[actor] = 1;
    } else
      spawn_actor_process(actor_host, actor);
  }
  if (scale_out.remote_count > 0)
    start_scale_out(actor_host, placement);
  processes.actor_output.start();
}

// One actor process, inheriting the segment's descriptor.
void GraphRuntime::Impl::spawn_actor_process(const std::string& actor_host, std::uint32_t actor,
                                             std::vector<std::string> env) {
  const int fd = segment.fd();
  if (!cuda_devices[actor].empty())
    env.push_back("CUDA_VISIBLE_DEVICES=" + join(cuda_devices[actor], ","));
  // The actor binds itself before it starts any thread (its threads inherit
  // the binding).
  if (processes.actor_cpus[actor] >= 0)
    env.push_back(std::string(actor_cpu_variable) + "=" +
                  std::to_string(processes.actor_cpus[actor]));
  env.push_back(std::string(actor_spin_variable) + "=" + (processes.own_cpus ? "1" : "0"));
  if (!scale_out.nccl_host_ids[actor].empty())
    env.push_back("NCCL_HOSTID=" + scale_out.nccl_host_ids[actor]);
  spawn_child(actor_host, {spec.name, spec.actors[actor].name, "fd:" + std::to_string(fd)}, env,
              {.inherit = {fd}}, spec.actors[actor].name);
}

void GraphRuntime::Impl::spawn_child(const std::string& path, const std::vector<std::string>& args,
                                     const std::vector<std::string>& env,
                                     ChildProcess::SpawnOptions spawn, const std::string& names,
                                     const std::string& where) {
  int log_file = -1;
  if (!processes.actor_logs.empty()) {
    const std::string file = processes.actor_logs + "/" + spec.name + "." + names + ".log";
    log_file = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_file < 0)
      throw std::system_error(errno, std::generic_category(), "cannot open " + file);
    spawn.standard_output = spawn.standard_error = log_file;
  } else if (options.tag_actor_output) {
    const TaggedOutput::WriteEnds ends = processes.actor_output.open_pipes();
    spawn.standard_output = ends.output;
    spawn.standard_error = ends.error;
  }
  ChildProcess child;
  try {
    child = ChildProcess::spawn(path, args, env, spawn);
  } catch (...) {
    if (log_file >= 0)
      ::close(log_file);
    processes.actor_output.abandon();
    throw;
  }
  std::optional<std::size_t> output;
  if (log_file >= 0)
    ::close(log_file);
  else if (options.tag_actor_output)
    output = processes.actor_output.adopt(
        names + " " + (where.empty() ? "pid=" + std::to_string(child.pid()) : where));
  log.say(LogLevel::debug, "started " + names + " as pid " + std::to_string(child.pid()) +
                               (where.empty() ? "" : " (" + where + ")"));
  processes.actors.push_back(std::move(child));
  processes.child_names.push_back(names.substr(0, names.find(',')));
  processes.child_output.push_back(output);
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
        runtime.processes.thread_running[actor] = 0;
      }
      runtime.changed.notify_all();
    }
  } finished{*this, actor};
  const std::string name = spec.actors[actor].name;
  std::string why;
  try {
    if (processes.actor_cpus.at(actor) >= 0 && !set_cpus(0, {processes.actor_cpus[actor]}))
      throw std::runtime_error("cannot bind it to CPU " +
                               std::to_string(processes.actor_cpus[actor]) + ": " +
                               std::strerror(errno));
    set_has_own_cpu(processes.own_cpus);
    ActorProcess process(spec, actor, {static_cast<std::byte*>(segment.data()), segment.size()});
    process.set_cuda_device(cuda_ordinals.at(actor));
    int status = spec.actors[actor].run(process);
    why = "stopped: its program returned " + std::to_string(status);
  } catch (const std::exception& e) {
    why = "failed: " + current_exception_type() + ": " + e.what();
  }
  if (failures.stopping.load())
    return;
  fail(std::make_exception_ptr(
      ActorDiedError(name, "actor '" + name + "' of " + describe(spec) + " (a thread) " + why)));
  close_all();
}

// A monitor thread watches the actor processes (pidfds, driver_failures.cpp).
void GraphRuntime::Impl::start_monitor() {
  if (processes.actors.empty())
    return;
  failures.stop_fd = ::eventfd(0, EFD_CLOEXEC);
  failures.monitor = std::thread([this] { watch_actors(); });
}

// Until every local actor has attached and every remote one reported ready,
// or one died, or LaunchOptions::start_timeout passed. Start-up is the one
// place we poll: it happens once per launch.
void GraphRuntime::Impl::wait_until_ready() {
  const Deadline deadline = Clock::now() + options.start_timeout;
  if (scale_out.remote_count > 0) {
    try {
      connect_remote(deadline);
    } catch (const std::exception& e) {
      throw LaunchError(e.what());
    }
  }
  while (header->ready.load(std::memory_order_acquire) < scale_out.local_count ||
         (scale_out.remote_count > 0 && scale_out.server.ready_count() < scale_out.remote_count)) {
    std::exception_ptr died;
    {
      std::lock_guard lock(mutex);
      died = failures.failure;
    }
    if (died || Clock::now() > deadline) {
      std::string why = describe(spec) + ": actors did not start within " +
                        std::to_string(options.start_timeout.count()) + " ms";
      if (scale_out.remote_count > 0 && scale_out.server.ready_count() < scale_out.remote_count)
        why += " (" + std::to_string(scale_out.server.ready_count()) + " of " +
               std::to_string(scale_out.remote_count) + " actors on other hosts ready)";
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
} // namespace cg::detail
