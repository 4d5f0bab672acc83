// driver.cpp - The driver side of a launched graph.
//
// Launch: create the graph's segment (anonymous shared memory) and channels,
// start one actor process per actor, each inheriting the segment's descriptor,
// wait until all are attached, then close our descriptor: from then on the
// memory is reachable only through the processes' mappings, and it has no name
// anywhere, so no crash of anyone can leave it behind.
// A monitor thread watches the actors (pidfds); when one dies it records why
// and closes every channel, which wakes every waiter in every process: get()
// then reports ActorDiedError instead of hanging.
// In threads mode the actors are threads of this process instead, running the
// same generated programs over our mapping; a thread whose program fails
// records why and closes every channel, as the monitor does for a process.
// Actors that share no memory with the driver (other hosts, a launcher's
// ranks, TCP forced) are reached through a rendezvous server and relays
// (cg/detail/scale_out.hpp): the driver's side of each TCP stream is a relay
// thread on its own ring, so everything below sees shared-memory channels
// only. Each remote process keeps its rendezvous connection open; when it
// ends, the actors of that process are reported dead.
// Results are collected from the output channels by the caller of get(), or,
// once someone asked for a future or the results descriptor, by a collector
// thread that takes each execution's results as soon as they arrive.
#include <cg/driver.hpp>
#include <cg/actor.hpp>
#include <cg/cpu_binding.hpp>
#include <cg/detail/launcher.hpp>
#include <cg/detail/scale_out.hpp>
#include <cg/device.hpp>
#include <cg/host_communicator.hpp>
#include <cg/placement.hpp>
#include <cg/process.hpp>
#include <cg/rendezvous.hpp>
#include <cg/shm.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const GraphSpec& spec) { return std::string("graph '") + spec.name + "'"; }

Deadline deadline_after(std::chrono::milliseconds timeout) {
  if (timeout <= std::chrono::milliseconds::zero())
    return Deadline::min();
  auto now = Clock::now();
  if (timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(Deadline::max() - now))
    return Deadline::max();
  return now + timeout;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "" : ",") + item;
  return out;
}

// Each actor's devices (LaunchOptions::cuda_devices): the next gpus(n) of
// `devices` in the graph's actor order, wrapping around.
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
                        std::to_string(devices->size()) + " the driver has (" + joined(*devices) +
                        ")");
    for (unsigned k = 0; k < n; ++k)
      assigned[a].push_back((*devices)[next++ % devices->size()]);
  }
  return assigned;
}

// The NCCL unique id of every communicator group, or why they cannot be made.
std::vector<std::array<char, kNcclIdBytes>> make_nccl_ids(const GraphSpec& spec) {
  const std::string refused = describe(spec) + ": cg::CommunicatorKind::nccl needs a CUDA device, ";
  if (!built_with_cuda())
    throw LaunchError(refused + "and this runtime was built without CUDA (configure with "
                                "-DCG_WITH_CUDA=ON, or use cg::CommunicatorKind::host)");
  if (cuda_device_count() == 0)
    throw LaunchError(refused + "and this machine has none (use cg::CommunicatorKind::host)");
  std::vector<std::array<char, kNcclIdBytes>> ids(spec.communicators.size());
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

void signal_eventfd(int fd) noexcept {
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(fd, &one, sizeof one);
}

} // namespace

struct GraphRuntime::Impl {
  explicit Impl(const GraphSpec& spec) : spec(spec) {}

  const GraphSpec& spec;
  LaunchOptions options;
  SharedSegment segment;
  SegmentHeader* header = nullptr;
  std::vector<Channel> channels;
  std::vector<HostGroup> groups;                // communicator groups, per GraphSpec::communicators
  std::vector<std::vector<std::string>> cuda_devices;  // per actor (LaunchOptions::cuda_devices)
  std::vector<int> cuda_ordinals;  // per actor: its first device in this process (threads mode)
  std::vector<ChannelWriter> inputs;            // per input position
  std::vector<std::uint32_t> result_channels;   // distinct output channels
  std::vector<ChannelReader> result_readers;    // parallel to result_channels
  std::vector<std::size_t> output_source;       // output position -> result index
  Mode mode = Mode::processes;
  std::vector<ChildProcess> actors;        // processes mode
  std::vector<std::string> child_names;    // per entry of `actors`: whom it runs
  std::vector<std::thread> actor_threads;  // threads mode

  // CPU binding and waiting (cg/cpu_binding.hpp).
  std::vector<int> bound_cpus;             // the launching thread's, then each local actor's
  std::vector<int> actor_cpus;             // per actor: its CPU, or -1
  bool own_cpus = false;                   // every thread of ours can count on a CPU: spin
  pid_t launching_thread = 0;              // placed by place_on_cpus(), if it placed anything
  std::vector<int> thread_cpus_before;     // its CPU set before launch(), if bound

  // Scale-out: actors in processes that share no memory with the driver.
  std::vector<bool> local;                 // per actor: in this segment
  std::uint32_t local_count = 0;
  std::uint32_t remote_count = 0;
  RendezvousServer server;
  TcpChannelListener listener;
  Relays relays;
  Participants participants;
  std::vector<std::string> transports;     // per channel: "shm" or "tcp"

  std::thread monitor;
  int stop_fd = -1;
  std::atomic<bool> stopping{false};

  // Results of execution `collected` gathered so far. Touched by whoever
  // collects: the caller of get() before async collection starts, the
  // collector thread only after.
  std::vector<Collected> partial;

  std::mutex mutex;  // guards everything below
  std::condition_variable changed;  // collected, submitted, failure or stop_collector changed
  std::uint64_t submitted = 0;
  std::uint64_t collected = 0;
  std::map<std::uint64_t, std::vector<Collected>> results;  // collected, not yet taken
  std::map<std::uint64_t, ResultsCallback> callbacks;       // futures waiting
  std::exception_ptr failure;  // why the graph cannot execute any more; the first cause wins
  bool torn_down = false;
  bool async = false;          // the collector thread owns collection
  bool stop_collector = false;
  std::thread collector;
  int results_fd = -1;

  void watch_actors();
  void run_actor_thread(std::uint32_t actor);
  void place_on_cpus();
  void start_scale_out(const std::string& actor_host, bool under_launcher, bool tcp,
                       const std::vector<std::uint32_t>& hosts);
  void connect_remote(Deadline deadline);
  void remote_lost(const std::vector<std::string>& actors, const std::string& reason);
  void relay_fault(const std::string& why, bool corrupt);
  void collect_loop();
  ChannelStatus collect_next(Deadline deadline);
  [[noreturn]] void throw_result_failure(ChannelStatus status);
  void fail(std::exception_ptr why);
  void fail_callbacks();
  void start_async(std::unique_lock<std::mutex>& lock);

  // Closes every channel and aborts every communicator group: whoever waits
  // in either, in any process, wakes up.
  void close_all() noexcept {
    for (Channel& channel : channels)
      channel.close();
    for (HostGroup& group : groups)
      group.abort(describe(spec) + " stopped");
    relays.close();
  }
  [[noreturn]] void throw_failure() {
    std::exception_ptr why;
    {
      std::lock_guard lock(mutex);
      why = failure;
    }
    if (why)
      std::rethrow_exception(why);
    throw ChannelClosedError(describe(spec) + " was torn down");
  }
};

// Records the first reason the graph stopped working; wakes every waiter.
void GraphRuntime::Impl::fail(std::exception_ptr why) {
  {
    std::lock_guard lock(mutex);
    if (!failure)
      failure = std::move(why);
  }
  changed.notify_all();
}

// Tells every waiting future why it will get nothing.
void GraphRuntime::Impl::fail_callbacks() {
  std::map<std::uint64_t, ResultsCallback> waiting;
  std::exception_ptr why;
  int notify_fd = -1;
  {
    std::lock_guard lock(mutex);
    waiting.swap(callbacks);
    why = failure;
    notify_fd = results_fd;
  }
  if (!why)
    why = std::make_exception_ptr(ChannelClosedError(describe(spec) + " was torn down"));
  for (auto& [seq, callback] : waiting)
    callback(nullptr, why);
  if (notify_fd >= 0)
    signal_eventfd(notify_fd);
}

// Polls the actors' pidfds (and, where pidfds are unavailable, wakes every
// 100 ms to check) until one exits or teardown starts.
void GraphRuntime::Impl::watch_actors() {
  std::vector<pollfd> fds;
  fds.push_back({stop_fd, POLLIN, 0});
  for (ChildProcess& child : actors)
    fds.push_back({child.pidfd(), POLLIN, 0});
  while (!stopping.load()) {
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < actors.size(); ++i) {
      if (stopping.load() || actors[i].running())
        continue;
      std::string name = child_names[i];
      fail(std::make_exception_ptr(
          ActorDiedError(name, "actor '" + name + "' of " + describe(spec) + " " +
                                   describe_exit(actors[i].exit_status().value_or(0)))));
      close_all();
      return;
    }
  }
}

// Threads mode: runs one actor's program until teardown closes its channels.
// Leaving it any other way (its constructor threw, a channel broke) stops the
// graph, as an actor process's death does.
void GraphRuntime::Impl::run_actor_thread(std::uint32_t actor) {
  const std::string name = spec.actors[actor].name;
  std::string why;
  try {
    if (actor_cpus.at(actor) >= 0 && !set_cpus(0, {actor_cpus[actor]}))
      throw std::runtime_error("cannot bind it to CPU " + std::to_string(actor_cpus[actor]) +
                               ": " + std::strerror(errno));
    set_has_own_cpu(own_cpus);
    ActorProcess process(spec, actor,
                         {static_cast<std::byte*>(segment.data()), segment.size()});
    process.set_cuda_device(cuda_ordinals.at(actor));
    int status = spec.actors[actor].run(process);
    why = "stopped: its program returned " + std::to_string(status);
  } catch (const std::exception& e) {
    why = std::string("failed: ") + e.what();
  }
  if (stopping.load())
    return;
  fail(std::make_exception_ptr(ActorDiedError(
      name, "actor '" + name + "' of " + describe(spec) + " (a thread) " + why)));
  close_all();
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
    return;  // more of us than CPUs: binding would make us share, spinning would delay the sharer
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

// Starts the rendezvous and the actor processes the driver starts itself
// (TCP forced on this host, or a host with a command in host_commands).
void GraphRuntime::Impl::start_scale_out(const std::string& actor_host, bool under_launcher,
                                         bool tcp, const std::vector<std::uint32_t>& hosts) {
  if (!spec.communicators.empty())
    throw LaunchError(describe(spec) + " has NCCL edges or collectives, which cannot run on "
                                       "several hosts yet; place all its actors on host 0");
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
  }
  // The driver's own entry is expected too: no table goes out without it.
  std::vector<std::string> expected = remote;
  expected.push_back(driver_rendezvous_name);
  if (listener.listen({listen.host, 0}) != NetStatus::ok)
    throw LaunchError(describe(spec) + ": cannot listen for TCP channels: " + listener.error());
  RendezvousServer::Options server_options{
      spec.name, expected, listen, geometry_greeting(options.max_in_flight, options.slot_bytes),
      [this](const std::vector<std::string>& actors, const std::string& reason) {
        remote_lost(actors, reason);
      }};
  if (server.start(std::move(server_options)) != NetStatus::ok)
    throw LaunchError(describe(spec) + ": cannot start the rendezvous: " + server.error());
  if (host.empty())
    host = all_here ? "127.0.0.1" : server.address_for_actors().host;
  const Endpoint advertised{host, server.endpoint().port};
  server.publish_local(driver_rendezvous_name, {host, listener.endpoint().port});
  const std::string variable = std::string(rendezvous_variable) + "=" + to_string(advertised);
  if (under_launcher)
    return;  // mpirun/srun starts every actor
  if (tcp && options.host_commands.empty()) {
    for (const std::string& name : remote) {
      actors.push_back(ChildProcess::spawn(actor_host, {spec.name, name}, {variable}));
      child_names.push_back(name);
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
    args.insert(args.end(), {"env", variable, actor_host, spec.name, names});
    actors.push_back(ChildProcess::spawn(find_program(command[0]), args, {}));
    child_names.push_back(names.substr(0, names.find(',')));
  }
}

// Waits for every remote actor to publish, then sets up the TCP streams.
void GraphRuntime::Impl::connect_remote(Deadline deadline) {
  for (;;) {
    {
      std::lock_guard lock(mutex);
      if (failure)
        std::rethrow_exception(failure);
    }
    Deadline step = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
    if (server.wait_for_all(step) == NetStatus::ok)
      break;
    if (Clock::now() >= deadline)
      throw LaunchError(describe(spec) + ": actors on other hosts did not connect within " +
                        std::to_string(options.start_timeout.count()) + " ms: " + server.error() +
                        " (start them with " + rendezvous_variable + "=" +
                        to_string(server.address_for_actors()) + ", or give host_commands)");
  }
  participants = participants_from_table(spec, server.table());
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    if (local[a] != (participants.of_actor[a] == 0))
      throw LaunchError(describe(spec) + ": actor '" + spec.actors[a].name +
                        "' was published by a process on another host, but runs here");
  std::string error = relays.start(spec, participants, 0, listener, channels, deadline,
                                   [this](const std::string& why, bool corrupt) {
                                     relay_fault(why, corrupt);
                                   });
  if (!error.empty())
    throw LaunchError(describe(spec) + ": cannot set up its TCP channels: " + error);
  for (const Stream& stream : plan_streams(spec, participants))
    transports[stream.channel] = "tcp";
}

// A remote actor process's rendezvous connection ended (serving thread).
void GraphRuntime::Impl::remote_lost(const std::vector<std::string>& lost,
                                     const std::string& reason) {
  if (stopping.load())
    return;
  const std::string name = lost.front();
  std::string who = "actor '" + name + "' of " + describe(spec);
  if (lost.size() > 1) {
    who += " (a process running";
    for (const std::string& other : lost)
      who += " " + other;
    who += ")";
  }
  if (reason.rfind("channel ", 0) == 0)
    fail(std::make_exception_ptr(ChannelError(reason.substr(8) + " (reported by " + who + ")")));
  else if (reason.rfind("actor ", 0) == 0)
    fail(std::make_exception_ptr(ActorDiedError(name, who + " failed: " + reason.substr(6))));
  else
    fail(std::make_exception_ptr(ActorDiedError(
        name, who + " lost its connection to the driver: its process died or its host is "
                    "unreachable")));
  close_all();
}

// A relay of ours stopped: a bad frame stops the graph at once; a peer that
// went away is usually reported by its rendezvous connection a moment later,
// which names the actor, so that is waited for first.
void GraphRuntime::Impl::relay_fault(const std::string& why, bool corrupt) {
  if (stopping.load())
    return;
  if (!corrupt) {
    std::unique_lock lock(mutex);
    if (changed.wait_for(lock, std::chrono::seconds(1),
                         [&] { return failure != nullptr || stopping.load(); }))
      return;
  }
  fail(std::make_exception_ptr(
      ChannelError(why + (corrupt ? "; the graph cannot execute any more" : ""))));
  close_all();
}

// Collects the results of execution `collected` from every result channel,
// resuming a collection an earlier timeout interrupted, and files them: with
// the future waiting for them, or in `results`.
ChannelStatus GraphRuntime::Impl::collect_next(Deadline deadline) {
  while (partial.size() < result_readers.size()) {
    ChannelReader& reader = result_readers[partial.size()];
    ChannelReader::Message message;
    ChannelStatus status = reader.acquire(message, deadline);
    if (status != ChannelStatus::ok)
      return status;
    partial.push_back({message.kind, {message.payload.begin(), message.payload.end()}});
    reader.release();
  }
  std::vector<Collected> outputs(output_source.size());
  for (std::size_t i = 0; i < output_source.size(); ++i) {
    // Large values are moved, not copied, unless a later output shares them.
    bool used_later = std::find(output_source.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                output_source.end(), output_source[i]) != output_source.end();
    Collected& source = partial[output_source[i]];
    outputs[i] = used_later ? source : std::move(source);
  }
  partial.clear();

  ResultsCallback callback;
  int notify_fd = -1;
  {
    std::lock_guard lock(mutex);
    if (async)
      notify_fd = results_fd;
    std::uint64_t seq = collected++;
    auto waiting = callbacks.find(seq);
    if (waiting != callbacks.end()) {
      callback = std::move(waiting->second);
      callbacks.erase(waiting);
    } else {
      results.emplace(seq, std::move(outputs));
    }
  }
  if (callback)
    callback(&outputs, nullptr);
  if (notify_fd >= 0)
    signal_eventfd(notify_fd);
  changed.notify_all();
  return ChannelStatus::ok;
}

// A result channel answered something other than ok or timeout.
void GraphRuntime::Impl::throw_result_failure(ChannelStatus status) {
  if (status == ChannelStatus::corrupt || status == ChannelStatus::unmappable) {
    std::uint32_t channel = result_channels[std::min(partial.size(), result_channels.size() - 1)];
    std::string what =
        status == ChannelStatus::corrupt
            ? "result channel " + std::to_string(channel) + " of " + describe(spec) +
                  " is corrupt: its shared memory holds impossible values"
            : "result channel " + std::to_string(channel) + " of " + describe(spec) +
                  ": a message's overflow buffer cannot be mapped (its writer is gone, or "
                  "/proc/<pid>/fd of the actor is not accessible)";
    // The channels can no longer be trusted to stay in step: stop the graph.
    fail(std::make_exception_ptr(Error(what + "; the graph cannot execute any more")));
    close_all();
  }
  throw_failure();
}

void GraphRuntime::Impl::collect_loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return stop_collector || failure || collected < submitted; });
      if (stop_collector || failure)
        break;
    }
    ChannelStatus status = collect_next(Deadline::max());
    if (status == ChannelStatus::ok)
      continue;
    try {
      throw_result_failure(status);
    } catch (...) {
      fail(std::current_exception());
    }
    break;
  }
  fail_callbacks();
}

// Called with `mutex` held (hence the lock argument).
void GraphRuntime::Impl::start_async(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  if (async)
    return;
  async = true;
  if (results_fd < 0)
    results_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Results collected before the switch are ready now.
  if (!results.empty() && results_fd >= 0)
    signal_eventfd(results_fd);
  collector = std::thread([this] { collect_loop(); });
}

} // namespace cg::detail

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

GraphRuntime::GraphRuntime(const GraphSpec& spec, std::string actor_host,
                           const LaunchOptions& options,
                           std::vector<std::optional<std::vector<std::byte>>> constructor_args)
    : spec_(spec), impl_(std::make_unique<Impl>(spec)) {
  Impl& s = *impl_;
  s.options = options;
  if (options.max_in_flight == 0)
    throw LaunchError("cg::LaunchOptions::max_in_flight must be at least 1");
  if (options.slot_bytes < kMinSlotBytes)
    throw LaunchError("cg::LaunchOptions::slot_bytes must be at least " +
                      std::to_string(kMinSlotBytes));
  s.mode = launch_mode(options);
  if (!options.actor_host.empty())
    actor_host = options.actor_host;
  if (s.mode == Mode::processes && ::access(actor_host.c_str(), X_OK) != 0)
    throw LaunchError("actor executable '" + actor_host + "' of " + describe(spec) +
                      " is missing or not executable; build it, or set "
                      "cg::LaunchOptions::actor_host");

  s.cuda_devices = assign_cuda_devices(spec, options);
  s.cuda_ordinals.assign(spec.actors.size(), 0);
  if (s.mode == Mode::threads && std::any_of(s.cuda_devices.begin(), s.cuda_devices.end(),
                                             [](const auto& d) { return !d.empty(); })) {
    // One process: an actor's first device by its position in the driver's list.
    std::vector<std::string> all = launch_cuda_devices(options);
    for (std::size_t a = 0; a < spec.actors.size(); ++a)
      if (!s.cuda_devices[a].empty())
        s.cuda_ordinals[a] = static_cast<int>(
            std::find(all.begin(), all.end(), s.cuda_devices[a].front()) - all.begin());
  }
  std::vector<std::array<char, kNcclIdBytes>> nccl_ids;
  if (!spec.communicators.empty()) {
    if (options.communicator == CommunicatorKind::nccl)
      nccl_ids = make_nccl_ids(spec);
    if (options.communicator_bytes == 0)
      throw LaunchError("cg::LaunchOptions::communicator_bytes must be at least 1");
  }
  SegmentLayout layout = segment_layout(spec, options.max_in_flight, options.slot_bytes,
                                        options.communicator_bytes);
  // Constructor arguments given to launch(): a table after the channels, then
  // the bytes of each.
  const bool any_constructor_args =
      std::any_of(constructor_args.begin(), constructor_args.end(),
                  [](const auto& args) { return args.has_value(); });
  if (any_constructor_args && constructor_args.size() != spec.actors.size())
    throw LaunchError("constructor arguments for " + std::to_string(constructor_args.size()) +
                      " actors given to " + describe(spec) + ", which has " +
                      std::to_string(spec.actors.size()));
  std::size_t table_offset = 0;
  std::vector<ConstructorArgs> table;
  std::size_t segment_bytes = layout.total_bytes;
  if (any_constructor_args) {
    table_offset = (segment_bytes + 63) / 64 * 64;
    segment_bytes = table_offset + spec.actors.size() * sizeof(ConstructorArgs);
    for (const auto& args : constructor_args) {
      table.push_back({args ? segment_bytes : 0, args ? args->size() : 0});
      segment_bytes += args ? args->size() : 0;
    }
  }
  std::size_t nccl_offset = 0;
  if (!nccl_ids.empty()) {
    nccl_offset = (segment_bytes + 63) / 64 * 64;
    segment_bytes = nccl_offset + nccl_ids.size() * kNcclIdBytes;
  }
  try {
    s.segment = SharedSegment::create_anonymous(std::string("cg.") + spec.name, segment_bytes);
  } catch (const std::exception& e) {
    throw LaunchError("cannot create the channels of " + describe(spec) + ": " + e.what());
  }
  auto* base = static_cast<std::byte*>(s.segment.data());
  s.header = new (base) SegmentHeader{};
  s.header->magic = kSegmentMagic;
  s.header->slots = options.max_in_flight;
  s.header->slot_bytes = options.slot_bytes;
  s.header->actor_count = static_cast<std::uint32_t>(spec.actors.size());
  s.header->channel_count = static_cast<std::uint32_t>(spec.channels.size());
  s.header->communicator_count = static_cast<std::uint32_t>(spec.communicators.size());
  s.header->communicator_bytes = options.communicator_bytes;
  std::strncpy(s.header->graph, spec.name, sizeof(s.header->graph) - 1);
  if (any_constructor_args) {
    s.header->constructor_args = table_offset;
    std::memcpy(base + table_offset, table.data(), table.size() * sizeof(ConstructorArgs));
    for (std::size_t i = 0; i < table.size(); ++i)
      if (constructor_args[i])
        std::memcpy(base + table[i].offset, constructor_args[i]->data(), table[i].bytes);
  }
  if (!nccl_ids.empty()) {
    s.header->nccl_ids = nccl_offset;
    for (std::size_t i = 0; i < nccl_ids.size(); ++i)
      std::memcpy(base + nccl_offset + i * kNcclIdBytes, nccl_ids[i].data(), kNcclIdBytes);
  }
  for (std::size_t i = 0; i < spec.channels.size(); ++i)
    s.channels.push_back(Channel::create(base + layout.channel_offsets[i],
                                         {options.max_in_flight, options.slot_bytes,
                                          spec.channels[i].readers}));
  for (std::size_t i = 0; i < spec.communicators.size(); ++i) {
    HostGroup group = HostGroup::create(
        base + layout.communicator_offsets[i],
        {static_cast<int>(spec.communicators[i].actors.size()),
         static_cast<std::size_t>(options.communicator_bytes)});
    if (!group.valid())
      throw LaunchError("cannot create communicator group " + std::to_string(i) + " of " +
                        describe(spec) + " (" + std::to_string(options.communicator_bytes) +
                        " bytes per message)");
    s.groups.push_back(group);
  }

  for (std::uint32_t channel : spec.input_channels)
    s.inputs.emplace_back(s.channels.at(channel));
  for (std::uint32_t channel : spec.output_channels) {
    auto it = std::find(s.result_channels.begin(), s.result_channels.end(), channel);
    if (it == s.result_channels.end()) {
      s.result_channels.push_back(channel);
      s.result_readers.emplace_back(s.channels.at(channel),
                                    static_cast<std::uint32_t>(spec.channels[channel].driver_reader));
      it = s.result_channels.end() - 1;
    }
    s.output_source.push_back(static_cast<std::size_t>(it - s.result_channels.begin()));
  }

  // Which actors share this segment: those on host 0, unless TCP is forced
  // or a launcher (mpirun, srun) started us and so starts every actor.
  const char* transport_env = std::getenv(transport_variable);
  if (transport_env && *transport_env && std::strcmp(transport_env, "tcp") != 0 &&
      std::strcmp(transport_env, "shm") != 0)
    throw LaunchError(std::string("the environment variable CG_TRANSPORT is '") + transport_env +
                      "'; it must be 'tcp' or 'shm' (or unset)");
  const bool tcp = options.tcp_everywhere || spec.tcp_everywhere ||
                   (transport_env && std::strcmp(transport_env, "tcp") == 0);
  // Started by mpirun/srun as rank 0, with the rendezvous address given:
  // the launcher starts every actor.
  const bool under_launcher = launcher_rank() == 0 && (!options.rendezvous.empty() ||
                                                       std::getenv(rendezvous_variable));
  const char* placement_env = std::getenv(placement_variable);
  const std::vector<std::uint32_t> hosts =
      actor_hosts(spec, !options.placement.empty() ? options.placement
                                                   : (placement_env ? placement_env : ""));
  for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor) {
    s.local.push_back(!tcp && !under_launcher && hosts[actor] == 0);
    (s.local.back() ? s.local_count : s.remote_count)++;
  }
  s.transports.assign(spec.channels.size(), "shm");
  for (std::uint32_t actor = 0; actor < constructor_args.size(); ++actor)
    if (constructor_args[actor] && !s.local[actor])
      throw LaunchError(describe(spec) + ": actor '" + spec.actors[actor].name +
                        "' runs in a process of its own (another host, or TCP forced), which "
                        "constructor arguments given to launch() cannot reach yet");

  s.place_on_cpus();
  try {
    if (s.mode == Mode::threads) {
      for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor)
        if (s.local[actor])
          s.actor_threads.emplace_back([this, actor] { impl_->run_actor_thread(actor); });
    } else {
      const int fd = s.segment.fd();
      for (std::uint32_t actor = 0; actor < spec.actors.size(); ++actor) {
        if (!s.local[actor])
          continue;
        std::vector<std::string> env;
        if (!s.cuda_devices[actor].empty())
          env.push_back("CUDA_VISIBLE_DEVICES=" + joined(s.cuda_devices[actor]));
        // The actor binds itself before it starts any thread (its threads
        // inherit the binding).
        if (s.actor_cpus[actor] >= 0)
          env.push_back(std::string(actor_cpu_variable) + "=" + std::to_string(s.actor_cpus[actor]));
        env.push_back(std::string(actor_spin_variable) + "=" + (s.own_cpus ? "1" : "0"));
        s.actors.push_back(ChildProcess::spawn(
            actor_host, {spec.name, spec.actors[actor].name, "fd:" + std::to_string(fd)}, env,
            {fd}));
        s.child_names.push_back(spec.actors[actor].name);
      }
    }
    if (s.remote_count > 0)
      s.start_scale_out(actor_host, under_launcher, tcp, hosts);
  } catch (const std::exception& e) {
    teardown();
    throw LaunchError(std::string("cannot start the actors of ") + describe(spec) + ": " +
                      e.what());
  }
  if (!s.actors.empty()) {
    s.stop_fd = ::eventfd(0, EFD_CLOEXEC);
    s.monitor = std::thread([this] { impl_->watch_actors(); });
  }

  // Start-up is the one place we poll: it happens once per launch.
  auto deadline = Clock::now() + options.start_timeout;
  if (s.remote_count > 0) {
    try {
      s.connect_remote(deadline);
    } catch (const std::exception& e) {
      teardown();
      throw LaunchError(e.what());
    }
  }
  while (s.header->ready.load(std::memory_order_acquire) < s.local_count ||
         (s.remote_count > 0 && s.server.ready_count() < s.remote_count)) {
    std::exception_ptr died;
    {
      std::lock_guard lock(s.mutex);
      died = s.failure;
    }
    if (died || Clock::now() > deadline) {
      std::string why = describe(spec) + ": actors did not start within " +
                        std::to_string(options.start_timeout.count()) + " ms";
      if (s.remote_count > 0 && s.server.ready_count() < s.remote_count)
        why += " (" + std::to_string(s.server.ready_count()) + " of " +
               std::to_string(s.remote_count) + " actors on other hosts ready)";
      if (died) {
        try {
          std::rethrow_exception(died);
        } catch (const std::exception& e) {
          why = std::string(e.what()) + " during start-up";
        }
      }
      teardown();
      throw LaunchError(why);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Every actor has mapped the segment: nobody else may.
  s.segment.unlink();
}

const std::vector<int>& GraphRuntime::bound_cpus() const noexcept { return impl_->bound_cpus; }

const std::vector<std::string>& GraphRuntime::cuda_devices(std::uint32_t actor) const {
  return impl_->cuda_devices.at(actor);
}

GraphRuntime::~GraphRuntime() {
  teardown();
  if (impl_->results_fd >= 0)
    ::close(impl_->results_fd);
}

std::uint64_t GraphRuntime::begin_execution() {
  Impl& s = *impl_;
  std::unique_lock lock(s.mutex);
  if (s.torn_down || s.failure || s.channels.front().closed()) {
    lock.unlock();
    s.throw_failure();
  }
  if (s.submitted - s.collected >= s.options.max_in_flight)
    throw CapacityExceeded(
        std::to_string(s.submitted - s.collected) + " executions of " + describe(spec_) +
        " are in flight, the most max_in_flight allows; call get() on earlier results first, "
        "or launch with a larger cg::LaunchOptions::max_in_flight");
  std::uint64_t seq = s.submitted++;
  if (s.async) {
    lock.unlock();
    s.changed.notify_all();
  }
  return seq;
}

bool GraphRuntime::acquire_input(std::size_t input, std::size_t bytes,
                                 std::span<std::byte>& slot) {
  Impl& s = *impl_;
  Deadline deadline = deadline_after(s.options.submit_timeout);
  switch (ChannelStatus status = s.inputs.at(input).acquire(bytes, slot, deadline)) {
  case ChannelStatus::ok:
    return true;
  case ChannelStatus::too_large: {
    // No memory for the value. Keep every actor in step: this execution
    // carries an error, not a value.
    ErrorRecord error = fit_to_slot(
        {"driver", "execute", "std::bad_alloc",
         "input #" + std::to_string(input) + " of " + std::to_string(bytes) +
             " bytes: no shared-memory buffer that large could be allocated"},
        s.options.slot_bytes);
    std::size_t size = encoded_size(error);
    if (s.inputs[input].acquire(size, slot, deadline) != ChannelStatus::ok)
      s.throw_failure();
    Encoder encoder(slot);
    encode(encoder, error);
    s.inputs[input].publish(MessageKind::error, encoder.written());
    return false;
  }
  case ChannelStatus::timeout:
    throw TimeoutError("input #" + std::to_string(input) + " of " + describe(spec_) +
                       " could not be submitted within " +
                       std::to_string(s.options.submit_timeout.count()) + " ms");
  case ChannelStatus::corrupt:
    s.fail(std::make_exception_ptr(
        Error("input channel " + std::to_string(spec_.input_channels[input]) + " of " +
              describe(spec_) +
              " is corrupt: its shared memory holds impossible values; the graph cannot "
              "execute any more")));
    s.close_all();
    s.throw_failure();
  default:
    (void)status;
    s.throw_failure();
  }
}

void GraphRuntime::publish_input(std::size_t input, std::size_t bytes) {
  impl_->inputs.at(input).publish(MessageKind::value, bytes);
}

std::vector<Collected> GraphRuntime::take_results(std::uint64_t seq) {
  return take_results(seq, impl_->options.get_timeout);
}

std::vector<Collected> GraphRuntime::take_results(std::uint64_t seq,
                                                  std::chrono::milliseconds timeout) {
  Impl& s = *impl_;
  Deadline deadline = deadline_after(timeout);
  auto timed_out = [&] {
    return TimeoutError("no result of execution " + std::to_string(seq) + " of " +
                        describe(spec_) + " within " + std::to_string(timeout.count()) + " ms");
  };
  std::unique_lock lock(s.mutex);
  if (s.torn_down) {
    lock.unlock();
    s.throw_failure();
  }
  if (seq >= s.submitted)
    throw Error("execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was never submitted");
  if (!s.async) {
    // Collect in this thread, up to and including execution `seq`.
    while (s.collected <= seq) {
      lock.unlock();
      ChannelStatus status = s.collect_next(deadline);
      if (status == ChannelStatus::timeout)
        throw timed_out();
      if (status != ChannelStatus::ok)
        s.throw_result_failure(status);
      lock.lock();
    }
  }
  for (;;) {
    if (auto node = s.results.extract(seq); !node.empty())
      return std::move(node.mapped());
    if (seq < s.collected)
      throw Error("the result of execution " + std::to_string(seq) + " of " + describe(spec_) +
                  " was already taken");
    if (s.failure || s.torn_down) {
      lock.unlock();
      s.throw_failure();
    }
    if (deadline == Deadline::max())
      s.changed.wait(lock);
    else if (s.changed.wait_until(lock, deadline) == std::cv_status::timeout &&
             !s.results.count(seq) && !s.failure && seq >= s.collected)
      throw timed_out();
  }
}

std::vector<std::string> GraphRuntime::channel_transports() const {
  return impl_->transports;
}

bool GraphRuntime::results_ready(std::uint64_t seq) {
  Impl& s = *impl_;
  std::unique_lock lock(s.mutex);
  if (s.results.count(seq) || s.torn_down || s.failure || seq < s.collected || seq >= s.submitted)
    return true;
  if (s.async)
    return false;
  // Collect what has arrived, without waiting.
  while (s.collected <= seq) {
    lock.unlock();
    ChannelStatus status = s.collect_next(Deadline::min());
    if (status == ChannelStatus::timeout)
      return false;
    if (status != ChannelStatus::ok) {
      try {
        s.throw_result_failure(status);
      } catch (const std::exception&) {
      }
      return true;
    }
    lock.lock();
  }
  return true;
}

void GraphRuntime::on_results(std::uint64_t seq, ResultsCallback done) {
  Impl& s = *impl_;
  std::unique_lock lock(s.mutex);
  if (seq >= s.submitted)
    throw Error("execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was never submitted");
  if (auto node = s.results.extract(seq); !node.empty()) {
    lock.unlock();
    done(&node.mapped(), nullptr);
    return;
  }
  if (seq < s.collected)
    throw Error("the result of execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was already taken");
  if (s.failure || s.torn_down) {
    lock.unlock();
    try {
      s.throw_failure();
    } catch (...) {
      done(nullptr, std::current_exception());
    }
    return;
  }
  s.callbacks.emplace(seq, std::move(done));
  s.start_async(lock);
}

int GraphRuntime::results_fd() {
  Impl& s = *impl_;
  std::unique_lock lock(s.mutex);
  if (!s.torn_down)
    s.start_async(lock);
  else if (s.results_fd < 0)
    s.results_fd = ::eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);  // readable: get() throws at once
  if (s.results_fd < 0)
    throw Error("cannot create the results descriptor of " + describe(spec_) + ": " +
                std::strerror(errno));
  return s.results_fd;
}

void GraphRuntime::teardown() noexcept {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (s.torn_down)
      return;
    s.torn_down = true;
    s.stop_collector = true;
  }
  s.changed.notify_all();
  s.stopping.store(true);
  s.close_all();
  // The relays end with their streams; closing the rendezvous connections
  // tells every remote actor process to exit.
  s.relays.join();
  s.server.stop();
  if (s.monitor.joinable()) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(s.stop_fd, &one, sizeof one);
    s.monitor.join();
  }
  if (s.stop_fd >= 0)
    ::close(s.stop_fd);
  if (s.collector.joinable())
    s.collector.join();
  s.fail_callbacks();
  // Actor threads leave their loop when their channels close (a method still
  // running is waited for: a thread cannot be killed).
  for (std::thread& thread : s.actor_threads)
    thread.join();
  s.actor_threads.clear();
  // Actor processes do too; give them a moment to exit cleanly, then make sure.
  auto deadline = Clock::now() + std::chrono::seconds(2);
  for (ChildProcess& child : s.actors) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!child.wait_for(std::max(left, std::chrono::milliseconds(0)))) {
      child.kill(SIGKILL);
      child.wait_for(std::chrono::seconds(1));
    }
  }
  s.segment.unlink();
  // The launching thread's CPUs and waiting back, if this is that thread
  // (another thread's id may be anyone's by now).
  if (s.launching_thread != 0 && s.launching_thread == ::gettid()) {
    if (!s.thread_cpus_before.empty())
      set_cpus(0, s.thread_cpus_before);
    set_has_own_cpu(false);
  }
}

} // namespace cg::detail
