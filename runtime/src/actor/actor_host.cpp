// actor_host.cpp - Every main() of the actor executable: as the driver's child, or on its own.
//
// The generated `<target>.actor_host.cpp` calls actor_host_main(), which runs
// one of two lives:
//   <exe> <graph> <actor> <segment>       started by cg::launch() on the
//       driver's host: map the segment it inherited, run the actor's
//       program, return when the driver closes the channels;
//   <exe> <graph> <actor>[,<actor>...]    another host, or TCP forced
//   <exe> <graph>                         under mpirun/srun: the actor of its rank
//       remote_actor_main(): find the driver through the rendezvous
//       (CG_RENDEZVOUS), prove the launch's secret (CG_SECRET or
//       CG_SECRET_FILE, net/secret.hpp), make a private segment laid out as the driver's,
//       relay the channels that cross to other processes over TCP
//       (net/scale_out.hpp), run the actors as threads, and live until the
//       driver's rendezvous connection closes.
// Any failure ends the process with a message on stderr and exit code 2 (64
// for a bad command line); the driver sees the death.
#include <cg/actor.hpp>
#include <cg/errors.hpp>

#include "actor/profile_trace.hpp"
#include "actor/segment.hpp"
#include "net/greeting.hpp"
#include "net/rendezvous.hpp"
#include "net/scale_out.hpp"
#include "os/launcher.hpp"
#include "shm/shm.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {
namespace {

using Cause = RemoteFailure::Cause;

// An actor process that is not the driver's child sharing its memory, in
// the steps of its life (argv: <graph> <actor>[,<actor>...], or <graph>
// alone: the actor whose index is the launcher rank minus one). A step that
// fails says why on stderr (fail()) and returns false; exit_code is then the
// process's. What the steps make lives here, in the order they make it, so
// that it goes in the reverse order at the end, whichever step was the last.
struct RemoteActors {
  RemoteActors(const GraphSpec& spec, const std::vector<std::string>& names)
      : spec(spec), names(names), who(std::string(spec.name) + "/" + join(names, ",")) {}

  int exit_code = 0;

  bool find_actors();
  bool read_environment();
  bool join_rendezvous();
  bool publish_listener();
  bool fetch_constructor_args();
  void find_participants();
  bool create_segment();
  bool start_relays();
  void start_actor_threads();
  void wait_until_ready();
  void serve_driver();
  int finish();

  // Parts of those steps.
  bool fail(const std::string& why, int code = 2) {
    std::fprintf(stderr, "cg actor %s: %s\n", who.c_str(), why.c_str());
    exit_code = code;
    return false;
  }
  void report(RemoteFailure why);
  bool failed();
  void send_profiles();
  void stop();

  const GraphSpec& spec;
  const std::vector<std::string>& names;
  const std::string who;
  std::vector<std::uint32_t> mine; // our actors, parallel to `names`
  std::optional<Endpoint> server;
  std::optional<Secret> secret;
  Deadline deadline{};

  RendezvousClient client;
  Greeting greeting;
  std::chrono::milliseconds silence{0};
  TcpChannelListener listener;
  std::vector<std::optional<std::vector<std::byte>>> constructor_args;
  bool any_constructor_args = false;
  Participants participants;
  int me = 0;

  std::vector<NcclIdBytes> nccl_ids;
  SharedSegment segment;
  std::span<std::byte> memory;
  WrittenSegment written;

  // Faults of relays and actor threads reach the main thread through `wake`.
  int wake = -1;
  std::mutex mutex;
  RemoteFailure failure; // the first fault, as the driver is told it (FAILED); under `mutex`

  Relays relays;
  std::vector<std::thread> threads;
  bool driver_gone = false;
  bool driver_silent = false;
};

// Our actors, by the names we were given.
bool RemoteActors::find_actors() {
  for (const std::string& name : names) {
    std::uint32_t a = 0;
    while (a < spec.actors.size() && name != spec.actors[a].name)
      ++a;
    if (a == spec.actors.size())
      return fail("graph '" + std::string(spec.name) + "' has no actor '" + name + "'", 64);
    mine.push_back(a);
  }
  return true;
}

// Where the driver's rendezvous is, and the launch's secret.
bool RemoteActors::read_environment() {
  server = rendezvous_from_env();
  if (!server)
    return fail(std::string(rendezvous_variable) +
                    " is not set to host:port (the driver's rendezvous); the driver's launcher, "
                    "mpirun -x or srun --export sets it",
                64);
  std::string no_secret;
  secret = Secret::from_environment(no_secret);
  if (!secret)
    return fail(no_secret, 64);
  deadline = Clock::now() + std::chrono::seconds(60);
  return true;
}

// Connected to the rendezvous, with the channels' geometry it greets us with.
bool RemoteActors::join_rendezvous() {
  if (client.connect(*server, spec.name, *secret, deadline) != NetStatus::ok)
    return fail(client.error());
  std::string unreadable;
  if (!read_greeting_text(client.greeting(), greeting, unreadable))
    return fail("the rendezvous at " + to_string(*server) + " sent a greeting this actor " +
                "executable cannot read: " + unreadable);
  silence = greeting.silence;
  // A driver whose host goes silent (a partition) ends us after twice the
  // silence it allows our host: the driver, deciding first, names the cause.
  silence *= 2;
  set_liveness_timeout(client.fd(), silence);
  return true;
}

// Our channels' listener published under each of our actors' names, and
// everyone's as the rendezvous tells them.
bool RemoteActors::publish_listener() {
  // Listened on the address that reaches the driver (the one published), not
  // on every interface.
  if (listener.listen(*secret, {client.local_host(), 0}) != NetStatus::ok)
    return fail(listener.error());
  const Endpoint self{client.local_host(), listener.endpoint().port};
  for (const std::string& name : names)
    if (client.publish(name, self, deadline) != NetStatus::ok)
      return fail(client.error());
  if (client.wait_for_table(deadline) != NetStatus::ok)
    return fail(client.error());
  return true;
}

// The constructor arguments launch() was given for our actors, if any.
bool RemoteActors::fetch_constructor_args() {
  constructor_args.resize(spec.actors.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (client.constructor_args(names[i], deadline, constructor_args[mine[i]]) != NetStatus::ok)
      return fail(client.error());
    any_constructor_args = any_constructor_args || constructor_args[mine[i]].has_value();
  }
  return true;
}

// Which process runs each actor, from the rendezvous's table; we are the
// process of our first actor.
void RemoteActors::find_participants() {
  participants = participants_from_table(spec, client.table());
  me = participants.of_actor[mine[0]];
}

// Our segment, laid out as the driver's. It holds every communicator group,
// as the driver's does; our actors use the groups they are ranks of. NCCL
// groups join the driver's (and other hosts') ranks through the ids the
// driver made; host groups never span processes (launch() refuses that).
bool RemoteActors::create_segment() {
  SegmentContents contents{.geometry = greeting.geometry, .communicator = greeting.communicator};
  if (!spec.communicators.empty()) {
    if (greeting.geometry.communicator_bytes == 0)
      return fail("the rendezvous at " + to_string(*server) +
                  " gave no communicator size, and graph '" + spec.name + "' has " +
                  std::to_string(spec.communicators.size()) + " communicator groups");
    std::vector<std::byte> ids;
    if (client.nccl_ids(deadline, ids) != NetStatus::ok)
      return fail(client.error());
    // NCCL communicators: one id per group; host communicators: none.
    const std::size_t expected = greeting.communicator == CommunicatorKind::nccl
                                     ? spec.communicators.size() * kNcclIdBytes
                                     : 0;
    if (ids.size() != expected)
      return fail("the rendezvous at " + to_string(*server) + " sent " +
                  std::to_string(ids.size()) + " bytes of NCCL ids for " +
                  std::to_string(spec.communicators.size()) + " " +
                  (greeting.communicator == CommunicatorKind::nccl ? "NCCL" : "host") +
                  " communicator groups");
    nccl_ids.resize(ids.size() / kNcclIdBytes);
    if (!ids.empty())
      std::memcpy(nccl_ids.data(), ids.data(), ids.size());
    contents.nccl_ids = nccl_ids;
  }
  if (any_constructor_args)
    contents.constructor_args = constructor_args;
  segment = SharedSegment::create_anonymous(std::string("cg.") + spec.name,
                                            segment_bytes(spec, contents));
  memory = std::span<std::byte>(static_cast<std::byte*>(segment.data()), segment.size());
  written = write_segment(memory, spec, contents);
  return true;
}

// The first fault, kept for the driver, wakes the main thread.
void RemoteActors::report(RemoteFailure why) {
  {
    std::lock_guard lock(mutex);
    if (failure.cause != Cause::none)
      return;
    failure = std::move(why);
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
}

bool RemoteActors::failed() {
  std::lock_guard lock(mutex);
  return failure.cause != Cause::none;
}

// The channels that cross to other processes, relayed over TCP (or UCX).
bool RemoteActors::start_relays() {
  wake = ::eventfd(0, EFD_CLOEXEC);
  std::string setup =
      relays.start(spec, participants, me, listener, greeting.transport, written.channels, deadline,
                   [this](const std::string& why, bool bad_frame) {
                     report({bad_frame ? Cause::channel : Cause::host, "", why});
                   });
  if (!setup.empty()) {
    // The driver may be waiting for our writers: it learns at once why none come.
    client.report_failure({Cause::host, "", setup});
    return fail(setup);
  }
  return true;
}

// One thread per actor of ours, each running the actor's program.
void RemoteActors::start_actor_threads() {
  for (std::uint32_t actor : mine)
    threads.emplace_back([this, actor] {
      try {
        ActorProcess process(spec, actor, memory, &relays); // reads direct streams itself
        spec.actors[actor].run(process);
      } catch (const GraphStopped&) {
      } catch (const std::exception& e) {
        if (!relays.closing()) // the driver names the actor and quotes "<type>: <what>"
          report(
              {Cause::actor, spec.actors[actor].name, current_exception_type() + ": " + e.what()});
      }
    });
}

// Once every actor of ours has started, the rendezvous is told so.
void RemoteActors::wait_until_ready() {
  while (written.header->ready.load(std::memory_order_acquire) < mine.size() && !failed()) {
    if (Clock::now() > deadline) {
      report({Cause::host, "", "actors did not start within 60 s"});
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  if (!failed())
    for (const std::string& name : names)
      if (client.ready(name, deadline) != NetStatus::ok)
        report({Cause::host, "", client.error()});
}

// Our actors' profiles, asked for by the driver (at its teardown): each
// ring read, its ticks turned into this host's CLOCK_MONOTONIC.
void RemoteActors::send_profiles() {
  // Our clock first, as the request arrived: the driver's round trip to
  // here is then short, and bounds how well it aligns the clocks.
  if (client.send_clock(monotonic_ns(), Clock::now() + std::chrono::seconds(10)) != NetStatus::ok)
    return;
  std::vector<ProfileTrack> tracks;
  for (std::uint32_t actor : mine)
    if (const ProfileRing* ring = profile_ring(memory, *written.header, actor))
      tracks.push_back(read_profile_rings({ring}, spec.actors[actor].name));
  const ProfileClocks origin{written.header->profile_origin_ticks,
                             written.header->profile_origin_ns};
  ticks_to_ns(tracks, origin, ProfileClocks::now());
  for (const ProfileTrack& track : tracks)
    if (client.send_profile(track.name, encode_profile_track(track),
                            Clock::now() + std::chrono::seconds(10)) != NetStatus::ok)
      return;
}

// Runs until the driver closes the connection (teardown, or it died), or a
// fault, answering the driver's requests meanwhile.
void RemoteActors::serve_driver() {
  while (!driver_gone && !failed()) {
    pollfd fds[2] = {{client.fd(), POLLIN, 0}, {wake, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0)
      continue;
    if (fds[0].revents) {
      std::vector<std::string> requests;
      const NetStatus status = client.poll_requests(requests);
      driver_gone = status != NetStatus::ok;
      driver_silent = status == NetStatus::timeout;
      for (const std::string& request : requests)
        if (request == "PROFILE")
          send_profiles();
    }
  }
}

// Everyone waiting wakes up, and our threads end.
void RemoteActors::stop() {
  relays.close();
  // Ranks waiting in a collective or an NCCL edge wake up (an NCCL
  // group's watcher aborts its communicator).
  for (HostGroup group : written.groups)
    group.abort("graph '" + std::string(spec.name) + "' stopped");
  for (std::thread& thread : threads)
    thread.join();
  relays.join();
  ::close(wake);
}

// Stopped, with the exit code of how serve_driver() ended: 0 when the driver
// left, else the fault, told to the driver and on stderr.
int RemoteActors::finish() {
  if (driver_silent) {
    stop();
    fail("the driver's host answered nothing for " + std::to_string(silence.count()) +
         " ms (a network partition, or the host is down); stopping");
    return exit_code;
  }
  if (driver_gone) {
    stop();
    return 0;
  }
  // A peer that went away is usually the driver tearing down: give its
  // rendezvous connection a moment to close before calling it a failure.
  RemoteFailure why;
  {
    std::lock_guard lock(mutex);
    why = failure;
  }
  if (why.cause == Cause::host) {
    pollfd control{client.fd(), POLLIN, 0};
    char buffer[256];
    auto until = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < until && ::poll(&control, 1, 100) >= 0) {
      if (control.revents && ::recv(client.fd(), buffer, sizeof buffer, MSG_DONTWAIT) <= 0) {
        stop();
        return 0;
      }
    }
  }
  client.report_failure(why);
  stop();
  fail(why.cause == Cause::actor ? "actor '" + why.actor + "' failed: " + why.reason : why.reason);
  return exit_code;
}

// main() of an actor process that is not the driver's child sharing its
// memory: find the driver through the rendezvous, make a segment of our own,
// relay the channels that cross to other processes, run our actors as
// threads until the driver leaves. Returns the exit code.
int remote_actor_main(const GraphSpec& spec, const std::vector<std::string>& names) {
  RemoteActors run(spec, names);
  if (!run.find_actors() || !run.read_environment() || !run.join_rendezvous() ||
      !run.publish_listener() || !run.fetch_constructor_args())
    return run.exit_code;
  run.find_participants();
  if (!run.create_segment() || !run.start_relays())
    return run.exit_code;
  run.start_actor_threads();
  run.wait_until_ready();
  run.serve_driver();
  return run.finish();
}

// An actor process that shares no memory with the driver (another host, a
// launcher's rank, or TCP forced): `<exe> <graph> <actor>[,<actor>...]`, or
// `<exe> <graph>` under mpirun/srun, where rank r runs the graph's actor r - 1
// (rank 0 is the driver).
int remote_host_main(int argc, char** argv, std::span<const GraphSpec* const> graphs) {
  for (const GraphSpec* spec : graphs) {
    if (std::strcmp(spec->name, argv[1]) != 0)
      continue;
    std::vector<std::string> names;
    if (argc == 3) {
      std::string list = argv[2];
      for (std::size_t start = 0; start <= list.size();) {
        std::size_t comma = std::min(list.find(',', start), list.size());
        names.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      std::optional<int> rank = launcher_rank();
      if (!rank || *rank < 1 || static_cast<std::size_t>(*rank) > spec->actors.size()) {
        std::fprintf(stderr,
                     "cg actor: no actor named and no launcher rank 1..%zu of graph '%s' "
                     "(OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID)\n",
                     spec->actors.size(), argv[1]);
        return 64;
      }
      names.push_back(spec->actors[static_cast<std::size_t>(*rank - 1)].name);
    }
    return remote_actor_main(*spec, names);
  }
  std::fprintf(stderr, "cg actor: no graph '%s' in this executable\n", argv[1]);
  return 64;
}

// An actor allocates its large values afresh each execution (a by-value
// std::vector argument, its result). glibc serves allocations above 32 MiB
// with mmap and unmaps them on free, so every execution would fault in again,
// and have the kernel zero, the whole value. Served from the heap, and the
// heap kept when freed, the next execution reuses the same pages. The cost:
// the process keeps the heap its largest values took (as a channel keeps its
// buffers). Only in the actor executable: the driver's process is the user's.
void reuse_freed_memory() noexcept {
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

} // namespace

int actor_host_main(int argc, char** argv, std::span<const GraphSpec* const> graphs) {
  reuse_freed_memory();
  // Standard output is a pipe to the driver (tagged output), a launcher or a
  // file, where stdio would hold lines back until 4 KiB gathered or exit:
  // an actor's output is a log, read line by line as it is written.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  if (argc == 2 || argc == 3)
    return remote_host_main(argc, argv, graphs);
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: %s <graph> <actor> <segment>     (started by cg::launch())\n"
                 "       %s <graph> <actor>[,<actor>...]  (another host: CG_RENDEZVOUS)\n"
                 "       %s <graph>                       (under mpirun/srun: by rank)\n",
                 argv[0], argv[0], argv[0]);
    return 64;
  }
  for (const GraphSpec* spec : graphs) {
    if (std::strcmp(spec->name, argv[1]) != 0)
      continue;
    for (std::uint32_t actor = 0; actor < spec->actors.size(); ++actor) {
      if (std::strcmp(spec->actors[actor].name, argv[2]) != 0)
        continue;
      std::optional<ActorProcess> process;
      try {
        process.emplace(*spec, actor, argv[3]);
        return spec->actors[actor].run(*process);
      } catch (const GraphStopped&) {
        return 0; // the graph was stopped while we waited in a communicator
      } catch (const std::exception& e) {
        // The driver reports our death with these words (its caller does
        // not see our stderr).
        const std::string words = current_exception_type() + ": " + e.what();
        if (process)
          process->say_last_words(words);
        std::fprintf(stderr, "cg actor %s/%s: %s\n", argv[1], argv[2], words.c_str());
        return 2;
      }
    }
  }
  std::fprintf(stderr, "cg actor: no actor '%s' in graph '%s' in this executable\n", argv[2],
               argv[1]);
  return 64;
}

} // namespace cg::detail
