// graph/runtime_state.hpp - What a launched graph's driver holds: GraphRuntime::Impl.
//
// Shared by the two halves of the driver: graph/launch.cpp (with
// launch_remote.cpp) builds it in named steps (cg::launch); graph/driver.cpp
// runs executions, graph/driver_failures.cpp watches the actors and says why
// the graph stopped, graph/driver_profile.cpp reads its profile and
// graph/teardown.cpp tears it down.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/driver.hpp>
#include <cg/host_communicator.hpp>

#include "graph/launch.hpp"
#include "graph/launch_log.hpp"
#include "graph/profile_trace.hpp"
#include "graph/segment.hpp"
#include "net/rendezvous.hpp"
#include "net/scale_out.hpp"
#include "net/tcp_setup.hpp"
#include "os/process.hpp"
#include "os/tagged_output.hpp"
#include "shm/shm.hpp"

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {

/// "graph 'name'", as messages name a graph.
inline std::string describe(const GraphSpec& spec) {
  return std::string("graph '") + spec.name + "'";
}

struct GraphRuntime::Impl {
  explicit Impl(const GraphSpec& spec) : spec(spec) {}

  const GraphSpec& spec;
  LaunchOptions options;
  SharedSegment segment;
  SegmentHeader* header = nullptr;
  std::vector<ActorRecord*> records; // per actor, in the segment (read only for remote ones)
  std::vector<Channel> channels;
  std::vector<HostGroup> groups; // communicator groups, per GraphSpec::communicators
  std::vector<std::vector<std::string>> cuda_devices; // per actor (LaunchOptions::cuda_devices)
  std::vector<int> cuda_ordinals;    // per actor: its first device in this process (threads mode)
  std::vector<ChannelWriter> inputs; // per input position
  // Per input: input_tensor() made a tensor in its channel that no
  // execute() has taken yet.
  std::vector<bool> input_in_place;
  std::vector<std::uint32_t> result_channels; // distinct output channels
  std::vector<ChannelReader> result_readers;  // parallel to result_channels
  // Parallel to result_channels: where a result from another host comes
  // from, for an error about bytes that do not decode; empty for shared memory.
  std::vector<std::string> result_origins;
  std::vector<std::size_t> output_source; // output position -> result index
  Mode mode = Mode::processes;
  std::vector<ChildProcess> actors;                     // processes mode
  std::vector<std::string> child_names;                 // per entry of `actors`: whom it runs
  TaggedOutput actor_output;                            // their output, tagged (unless actor_logs)
  std::vector<std::optional<std::size_t>> child_output; // per entry of `actors`: its number there
  std::string actor_logs;                  // LaunchOptions::actor_logs or CG_ACTOR_LOGS
  LaunchLog log;                           // CG_LOG
  std::vector<std::thread> actor_threads;  // threads mode
  std::vector<std::uint32_t> thread_actor; // per entry of `actor_threads`: whom it runs

  // CPU binding and waiting (cg/cpu_binding.hpp).
  std::vector<int> bound_cpus;         // the launching thread's, then each local actor's
  std::vector<int> actor_cpus;         // per actor: its CPU, or -1
  bool own_cpus = false;               // every thread of ours can count on a CPU: spin
  pid_t launching_thread = 0;          // placed by place_on_cpus(), if it placed anything
  std::vector<int> thread_cpus_before; // its CPU set before launch(), if bound

  // Scale-out: actors in processes that share no memory with the driver.
  std::vector<bool> local; // per actor: in this segment
  std::uint32_t local_count = 0;
  std::uint32_t remote_count = 0;
  RendezvousServer server;
  // Per actor in a process of its own, the constructor arguments launch()
  // was given for it: what the rendezvous answers to its ARGS.
  std::map<std::string, std::vector<std::byte>> remote_constructor_args;
  // CommunicatorKind::nccl: the unique id of each communicator group (in the
  // segment, and served to other hosts by the rendezvous).
  std::vector<NcclIdBytes> nccl_ids;
  // Per actor: the NCCL_HOSTID its process is started with, "" for none
  // (LaunchOptions::nccl_ranks_share_gpus; graph/launch.hpp).
  std::vector<std::string> nccl_host_ids;
  TcpChannelListener listener;
  // Owned apart so that teardown can release their channel ends (and the
  // overflow buffers those map) with the rest of the graph's memory.
  std::unique_ptr<Relays> relays = std::make_unique<Relays>();
  HostTransport host_transport = HostTransport::tcp; // what carries the streams between hosts
  Participants participants;
  std::vector<std::string> transports; // per channel: "shm", "tcp" or "ucx"

  std::thread monitor;
  int stop_fd = -1;
  std::atomic<bool> stopping{false};

  // Calls of the driver's API that use the graph's shared memory (channels,
  // overflow buffers, profile rings) without holding `mutex`, and whether
  // teardown has begun: teardown releases the memory once no call uses it,
  // and no call may start using it after (enter_memory()). Both are
  // sequentially consistent: a call that increments memory_users and then
  // sees memory_closed false is seen by teardown, which sets memory_closed
  // before it reads memory_users.
  mutable std::atomic<std::uint32_t> memory_users{0};
  std::atomic<bool> memory_closed{false};

  // Results of execution `collected` gathered so far. Touched by whoever
  // collects: the caller of get() before async collection starts, the
  // collector thread only after.
  std::vector<Collected> partial;
  // The result reader that answered something other than ok last.
  std::size_t failed_reader = 0;
  // Where collect_in_place() keeps its views (sized once, then reused).
  std::vector<ResultView> message_views;
  std::vector<ResultView> output_views;

  mutable std::mutex mutex; // guards everything below
  // Collected, submitted, failure, stop_collector, profile_final or
  // memory_users changed.
  mutable std::condition_variable changed;
  std::uint64_t submitted = 0;
  std::uint64_t collected = 0;
  std::map<std::uint64_t, std::vector<Collected>> results; // collected, not yet taken
  std::map<std::uint64_t, ResultsCallback> callbacks;      // futures waiting
  std::set<std::uint64_t> abandoned; // not yet collected, no ref left: discarded when collected
  // Threads mode: per actor, whether its thread is still running; and the
  // actors whose threads teardown(timeout) left running, still in a method.
  std::vector<char> thread_running;
  std::vector<std::string> left_running;
  // A stopped actor process (SIGSTOP, a debugger) found by a get() that
  // timed out, with its executions then: while it stays stopped and they
  // stay so, later get()s fail at once with the same cause. (An actor that
  // runs but finishes nothing may be slow, not stuck: each get() waits.)
  struct Stall {
    std::uint32_t actor = 0;
    std::uint64_t executions = 0;
    pid_t pid = 0;
    std::string cause; // "actor 'b' (pid N) has made no progress for 3.0 s"
  };
  std::optional<Stall> stall;
  std::exception_ptr failure; // why the graph cannot execute any more; the first cause wins
  bool torn_down = false;
  bool async = false; // the collector thread owns collection
  bool stop_collector = false;
  std::thread collector;
  int results_fd = -1;

  // Profiles (cg/detail/profile.hpp): the driver's rings (one for the
  // thread calling execute() and get(), one for the collector thread), where
  // teardown writes the trace (empty: no profile), and when the execution
  // being submitted began and when its last input was handed over.
  ProfileRecorder profile;
  ProfileRecorder collector_profile;
  std::uint32_t profile_executions = 0; // the rings' depth (0: no profile)
  std::string profile_path;             // empty: none is written at teardown
  // Actors in processes of their own: their tracks as their processes sent
  // them at teardown (RendezvousServer::collect_profiles), by actor.
  std::map<std::string, RemoteProfile> remote_profiles;
  std::int64_t execute_start = 0;
  std::int64_t input_start = 0;
  // The rings as teardown read them before it released the memory they are
  // in (profile_final: read; final_profile_error: why they could not be).
  bool profile_final = false;
  std::vector<ProfileTrack> final_profile;
  std::string final_profile_error;
  // The rings as read now (actors by index, then the driver), or as
  // teardown read them; Error without a profile.
  std::vector<ProfileTrack> profile_tracks() const;
  // The rings as they are in the graph's memory now.
  std::vector<ProfileTrack> read_profile_tracks() const;
  // Whether teardown has begun (then remote_profiles holds what the actors
  // in processes of their own sent).
  bool torn_down_now() const {
    std::lock_guard lock(mutex);
    return torn_down;
  }
  void write_profile(const std::string& path) const;

  // The steps of launch() (launch.cpp; launch_remote.cpp for the last two
  // of the parts below), in order.
  void assign_gpus();
  void share_gpus(const ActorPlacement& placement);
  void create_segment(std::span<const std::optional<std::vector<std::byte>>> constructor_args);
  void open_driver_ports();
  void place(const ActorPlacement& placement);
  void place_on_cpus();
  void start_actors(const std::string& actor_host, const ActorPlacement& placement);
  void start_monitor();
  void wait_until_ready();

  // Parts of those steps.
  void run_actor_thread(std::uint32_t actor);
  void join_actor_threads(Deadline deadline);
  void spawn_actor_process(const std::string& actor_host, std::uint32_t actor);
  // Starts a child running `names` (comma-separated) whose output goes where
  // the options say, tagged "(<names> <where>)"; "" for `where`: its pid.
  void spawn_child(const std::string& path, const std::vector<std::string>& args,
                   const std::vector<std::string>& env, ChildProcess::SpawnOptions spawn,
                   const std::string& names, const std::string& where = "");
  void start_scale_out(const std::string& actor_host, const ActorPlacement& placement);
  void connect_remote(Deadline deadline);

  // CG_LOG's lines (launch_log.hpp): what is launched, how; the actors
  // started, where; (debug) each channel and what carries it.
  std::string describe_launch(const ActorPlacement& placement) const;
  std::string describe_started() const;
  void describe_channels() const;

  // Failures (driver_failures.cpp): fail() records the first.
  void fail(std::exception_ptr why);
  void watch_actors();
  void remote_lost(const std::vector<std::string>& actors, const RemoteFailure& why);
  void relay_fault(const std::string& why, bool corrupt);
  bool reported_within(std::chrono::milliseconds wait);

  // Running (driver.cpp).
  void collect_loop();
  // `recorder`: the calling thread's ring (profile, or collector_profile
  // on the collector thread).
  ChannelStatus collect_next(Deadline deadline, ProfileRecorder& recorder);
  // result_origins[i] as ResultView::origin.
  const char* origin_of(std::size_t i) const noexcept {
    return result_origins[i].empty() ? nullptr : result_origins[i].c_str();
  }
  ChannelStatus collect_in_place(Deadline deadline, ResultsSink sink, std::int64_t start);
  [[noreturn]] void throw_result_failure(ChannelStatus status);
  void fail_callbacks();
  // Stalls (driver.cpp, driver_failures.cpp): each local actor's finished
  // executions now; the cause of a stall still in place (with `mutex` held),
  // or "".
  std::vector<std::uint64_t> executions_now() const;
  std::string still_stalled();
  // The TimeoutError of a get() of execution `seq` with `timeout`, which
  // watched the actors for `watched` since `before` (executions_now() then;
  // empty: it did not watch), naming the actor that made no progress
  // meanwhile, if one did not (with `mutex` held).
  TimeoutError stalled(std::uint64_t seq, std::chrono::milliseconds timeout,
                       const std::vector<std::uint64_t>& before,
                       std::chrono::steady_clock::duration watched);
  void start_async(std::unique_lock<std::mutex>& lock);

  // The graph's shared memory (teardown.cpp): a call that uses it outside
  // `mutex` enters first (false once teardown has begun: it must not touch
  // the memory) and leaves when done; teardown waits for every call to
  // leave, then releases it.
  bool enter_memory() const noexcept {
    memory_users.fetch_add(1);
    if (!memory_closed.load())
      return true;
    leave_memory();
    return false;
  }
  void leave_memory() const noexcept {
    if (memory_users.fetch_sub(1) == 1 && memory_closed.load()) {
      // Under the lock teardown checks memory_users with, so that it cannot
      // miss this wake-up.
      { std::lock_guard lock(mutex); }
      changed.notify_all();
    }
  }
  void release_memory() noexcept;
  // Entered while it lives (`entered`), where teardown had not begun.
  struct MemoryUse {
    explicit MemoryUse(const Impl& runtime) noexcept
        : runtime(runtime), entered(runtime.enter_memory()) {}
    ~MemoryUse() {
      if (entered)
        runtime.leave_memory();
    }
    MemoryUse(const MemoryUse&) = delete;
    MemoryUse& operator=(const MemoryUse&) = delete;
    const Impl& runtime;
    const bool entered;
  };

  // Closes every channel and aborts every communicator group: whoever waits
  // in either, in any process, wakes up.
  void close_all() noexcept {
    for (Channel& channel : channels)
      channel.close();
    for (HostGroup& group : groups)
      group.abort(describe(spec) + " stopped");
    if (relays)
      relays->close();
  }
  [[noreturn]] void throw_failure() const {
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

} // namespace cg::detail
