// graph/runtime_state.hpp - What a launched graph's driver holds: GraphRuntime::Impl.
//
// Shared by the two halves of the driver: graph/launch.cpp (with
// launch_remote.cpp) builds it in named steps (cg::launch); graph/driver.cpp
// runs executions, graph/driver_failures.cpp watches the actors and says why
// the graph stopped, graph/driver_profile.cpp reads its profile and
// graph/teardown.cpp tears it down.
//
// What only some of them work on lives in named parts, each in a header of
// its own that includes only the rooms it needs: the actors' processes and
// threads (graph/runtime_processes.hpp), the actors on other hosts
// (graph/runtime_scale_out.hpp), executions and their results
// (graph/runtime_results.hpp), failures and who watches for them
// (graph/runtime_failures.hpp) and the profile (graph/runtime_profiling.hpp).
// What every step uses (the spec, the options, the segment and its channels,
// the mutex) stays here.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/driver.hpp>
#include <cg/host_communicator.hpp>

#include "actor/profile_trace.hpp"
#include "actor/segment.hpp"
#include "graph/launch.hpp"
#include "graph/launch_log.hpp"
#include "graph/runtime_failures.hpp"
#include "graph/runtime_processes.hpp"
#include "graph/runtime_profiling.hpp"
#include "graph/runtime_results.hpp"
#include "graph/runtime_scale_out.hpp"
#include "net/rendezvous.hpp"
#include "os/process.hpp"
#include "shm/shm.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace cg::detail {

/// "graph 'name'", as messages name a graph.
inline std::string describe(const GraphSpec& spec) {
  return std::string("graph '") + spec.name + "'";
}

/// The ActorDiedError of an execution an actor's restart lost (restarts.cpp):
/// one of `outputs` is the error a restarted actor writes for it
/// (actor/restart.hpp); null otherwise.
std::exception_ptr lost_to_restart(std::span<const ResultView> outputs) noexcept;

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
  LaunchLog log; // CG_LOG

  // Calls of the driver's API that use the graph's shared memory (channels,
  // overflow buffers, profile rings) without holding `mutex`, and whether
  // teardown has begun: teardown releases the memory once no call uses it,
  // and no call may start using it after (enter_memory()). Both are
  // sequentially consistent: a call that increments memory_users and then
  // sees memory_closed false is seen by teardown, which sets memory_closed
  // before it reads memory_users.
  mutable std::atomic<std::uint32_t> memory_users{0};
  std::atomic<bool> memory_closed{false};

  // Guards torn_down and the parts' members that say they are guarded by it.
  mutable std::mutex mutex;
  // Under `mutex`: results.collected, results.submitted, failures.failure,
  // results.stop_collector, processes.thread_running, profiling.profile_final
  // or memory_users changed.
  mutable std::condition_variable changed;
  bool torn_down = false;

  // The parts, each in a header of its own with what guards it. Destroyed
  // before everything above (the segment, the mutex), which they may use.
  RuntimeResults results;
  RuntimeProcesses processes;
  RuntimeScaleOut scale_out;
  RuntimeFailures failures;
  RuntimeProfiling profiling;

  // The rings as read now (actors by index, then the driver), or as
  // teardown read them; Error without a profile.
  std::vector<ProfileTrack> profile_tracks() const;
  // The rings as they are in the graph's memory now.
  std::vector<ProfileTrack> read_profile_tracks() const;
  // Whether teardown has begun (then profiling.remote_profiles holds what
  // the actors in processes of their own sent).
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
  // `env`: more of the process's environment (a restart's).
  void spawn_actor_process(const std::string& actor_host, std::uint32_t actor,
                           std::vector<std::string> env = {});
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

  // Restarts (restarts.cpp): each actor's max_restarts, or a LaunchError
  // where they are asked for and not supported; and, from the monitor,
  // child `child` (actor `actor`) died of `why`: false where it has no
  // restart left, else true once it runs again (or the graph failed).
  void resolve_restarts(const ActorPlacement& placement);
  bool restart(std::size_t child, std::uint32_t actor, const std::string& why);

  // Running (driver.cpp).
  void collect_loop();
  // `recorder`: the calling thread's ring (profiling.profile, or its
  // collector_profile on the collector thread).
  ChannelStatus collect_next(Deadline deadline, ProfileRecorder& recorder);
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
    if (scale_out.relays)
      scale_out.relays->close();
  }
  [[noreturn]] void throw_failure() const {
    std::exception_ptr why;
    {
      std::lock_guard lock(mutex);
      why = failures.failure;
    }
    if (why)
      std::rethrow_exception(why);
    throw ChannelClosedError(describe(spec) + " was torn down");
  }
};

} // namespace cg::detail
