// graph/launch_remote.cpp - The launch steps for actors that share no memory
// with the driver (other hosts, a launcher's ranks, TCP forced): the
// rendezvous server, the actor processes the driver starts itself (here, or
// through a host's command such as ssh), then the TCP streams and relays.
#include "graph/launch.hpp"

#include "graph/runtime_state.hpp"
#include "net/greeting.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {
namespace {

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

// `text` cut to its first `most` characters: a launch error names what went
// wrong, not every stranger or actor on the way.
std::string capped(std::string text, std::size_t most = 1000) {
  if (text.size() <= most)
    return text;
  const std::size_t cut = text.size() - most;
  text.resize(most);
  return text + "... (" + std::to_string(cut) + " more characters)";
}

} // namespace

// Starts the rendezvous and the actor processes the driver starts itself
// (TCP forced on this host, or a host with a command in host_commands).
void GraphRuntime::Impl::start_scale_out(const std::string& actor_host,
                                         const ActorPlacement& placement) {
  const bool under_launcher = placement.under_launcher;
  const bool tcp = placement.tcp;
  const std::vector<std::uint32_t>& hosts = placement.hosts;
  std::vector<std::string> remote;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    if (!scale_out.local[a])
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
  if (!host_transport_from_environment(scale_out.host_transport, transport_error))
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
  if (scale_out.listener.listen(*secret, {listen.host, 0}) != NetStatus::ok)
    throw LaunchError(describe(spec) +
                      ": cannot listen for TCP channels: " + scale_out.listener.error());
  const std::span<const std::byte> nccl_bytes = std::as_bytes(std::span(scale_out.nccl_ids));
  RendezvousServer::Options server_options{
      spec.name,
      expected,
      listen,
      // The geometry as the segment holds it, so that theirs is laid out alike.
      greeting_text({header->geometry, header->communicator, options.partition_timeout,
                     scale_out.host_transport}),
      secret,
      [this](const std::vector<std::string>& actors, const RemoteFailure& why) {
        remote_lost(actors, why);
      },
      // One connection ("connection from ...: why"), or a count of them,
      // at most a few lines a second (net/accept_guard.hpp).
      [name = spec.name](const std::string& why) {
        const bool one = why.rfind("connection from ", 0) == 0;
        std::fprintf(stderr, "cg: graph '%s': rendezvous dropped %s%s\n", name, one ? "a " : "",
                     why.c_str());
      },
      options.partition_timeout,
      std::move(scale_out.remote_constructor_args),
      {nccl_bytes.begin(), nccl_bytes.end()}};
  if (scale_out.server.start(std::move(server_options)) != NetStatus::ok)
    throw LaunchError(describe(spec) +
                      ": cannot start the rendezvous: " + scale_out.server.error());
  if (host.empty())
    host = all_here ? "127.0.0.1" : scale_out.server.address_for_actors().host;
  const Endpoint advertised{host, scale_out.server.endpoint().port};
  scale_out.server.publish_local(driver_rendezvous_name,
                                 {host, scale_out.listener.endpoint().port});
  const std::string variable = std::string(rendezvous_variable) + "=" + to_string(advertised);
  if (under_launcher)
    return; // mpirun/srun starts every actor
  if (tcp && options.host_commands.empty()) {
    // Processes of this host: each gets its GPUs, as a process sharing the
    // segment would.
    const std::string secret_entry = std::string(secret_variable) + "=" + secret->hex();
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
      if (scale_out.local[a])
        continue;
      std::vector<std::string> env{variable, secret_entry};
      if (!cuda_devices[a].empty())
        env.push_back("CUDA_VISIBLE_DEVICES=" + join(cuda_devices[a], ","));
      if (!scale_out.nccl_host_ids[a].empty())
        env.push_back("NCCL_HOSTID=" + scale_out.nccl_host_ids[a]);
      spawn_child(actor_host, {spec.name, spec.actors[a].name}, env, {}, spec.actors[a].name);
    }
    return;
  }
  for (const auto& [index, command] : options.host_commands) {
    std::string names, nccl_host_id;
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
      if (!scale_out.local[a] && hosts[a] == index) {
        names += (names.empty() ? "" : ",") + std::string(spec.actors[a].name);
        if (!scale_out.nccl_host_ids[a].empty())
          nccl_host_id = scale_out.nccl_host_ids[a]; // one process: one for all its actors
      }
    if (names.empty() || command.empty())
      continue;
    std::vector<std::string> args(command.begin() + 1, command.end());
    // The secret goes through the command's standard input (ssh passes it
    // on), never its command line, which other users of a host can read.
    args.insert(args.end(), {"env", variable, std::string(secret_variable) + "=stdin"});
    if (!nccl_host_id.empty())
      args.push_back("NCCL_HOSTID=" + nccl_host_id);
    args.insert(args.end(), {actor_host, spec.name, names});
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
      died = failures.failure;
    }
    if (died) {
      try {
        std::rethrow_exception(died);
      } catch (const std::exception& e) {
        throw LaunchError(std::string(e.what()) + " during start-up");
      }
    }
    Deadline step = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
    const NetStatus waited = scale_out.server.wait_for_all(step);
    if (waited == NetStatus::ok)
      break;
    if (waited == NetStatus::protocol_error)       // a set-up line that failed its tag
      throw LaunchError(scale_out.server.error()); // names the graph and the peer
    if (Clock::now() >= deadline)
      throw LaunchError(describe(spec) + ": actors on other hosts did not connect within " +
                        std::to_string(options.start_timeout.count()) +
                        " ms: " + capped(scale_out.server.error()) + " (start them with " +
                        rendezvous_variable + "=" +
                        to_string(scale_out.server.address_for_actors()) + " and the driver's " +
                        secret_variable + " (set it for both), or give host_commands)");
  }
  scale_out.participants = participants_from_table(spec, scale_out.server.table());
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    if (scale_out.local[a] != (scale_out.participants.of_actor[a] == 0))
      throw LaunchError(describe(spec) + ": actor '" + spec.actors[a].name +
                        "' was published by a process on another host, but runs here");
  // A process of another host that gives up (or dies) meanwhile says so
  // through the rendezvous (remote_lost() fails the graph): the set-up then
  // stops waiting for its writers at once, not at the deadline.
  bool setting_up = true; // guarded by `mutex`
  std::thread watcher([this, &setting_up, &listener = scale_out.listener] {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return failures.failure != nullptr || !setting_up; });
    if (failures.failure != nullptr)
      listener.interrupt();
  });
  std::string error = scale_out.relays->start(
      spec, scale_out.participants, 0, scale_out.listener, scale_out.host_transport, channels,
      deadline, [this](const std::string& why, bool corrupt) { relay_fault(why, corrupt); });
  {
    std::lock_guard lock(mutex);
    setting_up = false;
  }
  changed.notify_all();
  watcher.join();
  if (!error.empty()) {
    std::exception_ptr died;
    {
      std::lock_guard lock(mutex);
      died = failures.failure;
    }
    if (died) { // the cause, rather than the set-up it cut short
      try {
        std::rethrow_exception(died);
      } catch (const std::exception& e) {
        throw LaunchError(std::string(e.what()) + " during start-up");
      }
    }
    throw LaunchError(describe(spec) +
                      ": cannot set up its channels between hosts: " + capped(error));
  }
  for (const Stream& stream : plan_streams(spec, scale_out.participants))
    scale_out.transports[stream.channel] = to_string(scale_out.host_transport);
  // Inputs that go to other hosts are sent on as execute() writes them.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs[i].forward_with(scale_out.relays->forwarder(spec.input_channels[i]));
  // A result that only the driver reads here comes straight off its stream.
  for (std::size_t i = 0; i < results.result_channels.size(); ++i) {
    const std::uint32_t channel = results.result_channels[i];
    const auto slot = static_cast<std::uint32_t>(spec.channels[channel].driver_reader());
    if (MessageSource* direct = scale_out.relays->source(channel, slot)) {
      results.result_readers[i] = ChannelReader(*direct);
      const int writer = spec.channels[channel].writer;
      results.result_origins[i] =
          "sent so by actor '" + std::string(writer >= 0 ? spec.actors[writer].name : "driver") +
          "' over " + to_string(scale_out.host_transport) + " channel c" + std::to_string(channel) +
          ", whose frames arrived intact: is that host running an actor built "
          "from the same graph source?";
    }
  }
}

} // namespace cg::detail
