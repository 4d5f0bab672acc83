// driver.cpp - The driver side of a launched graph.
//
// Launch: create the graph's segment and channels, start one actor process
// per actor (each maps the segment by name), wait until all are attached,
// then unlink the segment name so nothing can outlive the processes.
// A monitor thread watches the actors (pidfds); when one dies it closes every
// channel, which wakes every waiter in every process: get() then reports
// ActorDiedError instead of hanging.
#include <cg/driver.hpp>
#include <cg/process.hpp>
#include <cg/shm.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

namespace cg::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const GraphSpec& spec) { return std::string("graph '") + spec.name + "'"; }

} // namespace

struct GraphRuntime::Impl {
  LaunchOptions options;
  SharedSegment segment;
  SegmentHeader* header = nullptr;
  std::vector<Channel> channels;
  std::vector<ChannelWriter> inputs;            // per input position
  std::vector<std::uint32_t> result_channels;   // distinct output channels
  std::vector<ChannelReader> result_readers;    // parallel to result_channels
  std::vector<std::size_t> output_source;       // output position -> result index
  std::vector<ChildProcess> actors;

  std::thread monitor;
  int stop_fd = -1;
  std::atomic<bool> stopping{false};
  std::mutex death_mutex;
  std::string dead_actor;      // set once by the monitor
  std::string death;

  std::uint64_t submitted = 0;
  std::uint64_t collected = 0;
  std::vector<Collected> partial;   // results of execution `collected` so far
  std::map<std::uint64_t, std::vector<Collected>> results;
  bool torn_down = false;

  void watch_actors(const GraphSpec& spec);
  void close_all() noexcept {
    for (Channel& channel : channels)
      channel.close();
  }
  [[noreturn]] void throw_closed(const GraphSpec& spec) {
    std::lock_guard lock(death_mutex);
    if (!dead_actor.empty())
      throw ActorDiedError(dead_actor, death);
    throw ChannelClosedError(describe(spec) + " was torn down");
  }
};

// Polls the actors' pidfds (and, where pidfds are unavailable, wakes every
// 100 ms to check) until one exits or teardown starts.
void GraphRuntime::Impl::watch_actors(const GraphSpec& spec) {
  std::vector<pollfd> fds;
  fds.push_back({stop_fd, POLLIN, 0});
  for (ChildProcess& child : actors)
    fds.push_back({child.pidfd(), POLLIN, 0});
  while (!stopping.load()) {
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < actors.size(); ++i) {
      if (stopping.load() || actors[i].running())
        continue;
      {
        std::lock_guard lock(death_mutex);
        dead_actor = spec.actors[i].name;
        death = "actor '" + dead_actor + "' of " + describe(spec) + " " +
                describe_exit(actors[i].exit_status().value_or(0));
      }
      close_all();
      return;
    }
  }
}

GraphRuntime::GraphRuntime(const GraphSpec& spec, std::string actor_host,
                           const LaunchOptions& options)
    : spec_(spec), impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = options;
  if (options.max_in_flight == 0)
    throw LaunchError("cg::LaunchOptions::max_in_flight must be at least 1");
  if (options.slot_bytes < kMinSlotBytes)
    throw LaunchError("cg::LaunchOptions::slot_bytes must be at least " +
                      std::to_string(kMinSlotBytes));
  if (!options.actor_host.empty())
    actor_host = options.actor_host;
  if (::access(actor_host.c_str(), X_OK) != 0)
    throw LaunchError("actor executable '" + actor_host + "' of " + describe(spec) +
                      " is missing or not executable; build it, or set "
                      "cg::LaunchOptions::actor_host");

  SegmentLayout layout = segment_layout(spec, options.max_in_flight, options.slot_bytes);
  s.segment = SharedSegment::create(unique_segment_name(), layout.total_bytes);
  auto* base = static_cast<std::byte*>(s.segment.data());
  s.header = new (base) SegmentHeader{};
  s.header->magic = kSegmentMagic;
  s.header->slots = options.max_in_flight;
  s.header->slot_bytes = options.slot_bytes;
  s.header->actor_count = static_cast<std::uint32_t>(spec.actors.size());
  s.header->channel_count = static_cast<std::uint32_t>(spec.channels.size());
  std::strncpy(s.header->graph, spec.name, sizeof(s.header->graph) - 1);
  for (std::size_t i = 0; i < spec.channels.size(); ++i)
    s.channels.push_back(Channel::create(base + layout.channel_offsets[i],
                                         {options.max_in_flight, options.slot_bytes,
                                          spec.channels[i].readers}));

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

  try {
    for (const ActorSpec& actor : spec.actors)
      s.actors.push_back(
          ChildProcess::spawn(actor_host, {spec.name, actor.name, s.segment.name()}, {}));
  } catch (const std::exception& e) {
    teardown();
    throw LaunchError(std::string("cannot start the actors of ") + describe(spec) + ": " +
                      e.what());
  }
  s.stop_fd = ::eventfd(0, EFD_CLOEXEC);
  s.monitor = std::thread([this, &spec] { impl_->watch_actors(spec); });

  // Start-up is the one place we poll: it happens once per launch.
  auto deadline = Clock::now() + options.start_timeout;
  while (s.header->ready.load(std::memory_order_acquire) < spec.actors.size()) {
    bool dead = false;
    {
      std::lock_guard lock(s.death_mutex);
      dead = !s.dead_actor.empty();
    }
    if (dead || Clock::now() > deadline) {
      std::string why;
      {
        std::lock_guard lock(s.death_mutex);
        why = dead ? s.death + " during start-up"
                   : describe(spec) + ": actors did not start within " +
                         std::to_string(options.start_timeout.count()) + " ms";
      }
      teardown();
      throw LaunchError(why);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  s.segment.unlink();
}

GraphRuntime::~GraphRuntime() { teardown(); }

std::uint64_t GraphRuntime::begin_execution() {
  Impl& s = *impl_;
  if (s.torn_down || s.channels.front().closed())
    s.throw_closed(spec_);
  if (s.submitted - s.collected >= s.options.max_in_flight)
    throw CapacityExceeded(
        std::to_string(s.submitted - s.collected) + " executions of " + describe(spec_) +
        " are in flight, the most max_in_flight allows; call get() on earlier results first, "
        "or launch with a larger cg::LaunchOptions::max_in_flight");
  return s.submitted++;
}

bool GraphRuntime::acquire_input(std::size_t input, std::size_t bytes,
                                 std::span<std::byte>& slot) {
  Impl& s = *impl_;
  auto deadline = Clock::now() + s.options.get_timeout;
  switch (s.inputs.at(input).acquire(bytes, slot, deadline)) {
  case ChannelStatus::ok:
    return true;
  case ChannelStatus::too_large: {
    // Keep every actor in step: this execution carries an error, not a value.
    ErrorRecord error = fit_to_slot(
        {"driver", "execute", "cg::SlotOverflow",
         "input #" + std::to_string(input) + " of " + std::to_string(bytes) +
             " bytes does not fit a channel slot of " + std::to_string(s.options.slot_bytes) +
             " bytes; raise cg::LaunchOptions::slot_bytes"},
        s.options.slot_bytes);
    std::size_t size = encoded_size(error);
    if (s.inputs[input].acquire(size, slot, deadline) != ChannelStatus::ok)
      s.throw_closed(spec_);
    Encoder encoder(slot);
    encode(encoder, error);
    s.inputs[input].publish(MessageKind::error, encoder.written());
    return false;
  }
  case ChannelStatus::timeout:
    throw TimeoutError("input #" + std::to_string(input) + " of " + describe(spec_) +
                       " could not be submitted within " +
                       std::to_string(s.options.get_timeout.count()) + " ms");
  default:
    s.throw_closed(spec_);
  }
}

void GraphRuntime::publish_input(std::size_t input, std::size_t bytes) {
  impl_->inputs.at(input).publish(MessageKind::value, bytes);
}

std::vector<Collected> GraphRuntime::take_results(std::uint64_t seq) {
  Impl& s = *impl_;
  if (s.torn_down)
    s.throw_closed(spec_);
  if (seq >= s.submitted)
    throw Error("execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was never submitted");
  auto deadline = Clock::now() + s.options.get_timeout;
  while (s.collected <= seq) {
    // Collect execution `collected` from every result channel, resuming a
    // collection an earlier timeout interrupted.
    while (s.partial.size() < s.result_readers.size()) {
      ChannelReader& reader = s.result_readers[s.partial.size()];
      ChannelReader::Message message;
      switch (reader.acquire(message, deadline)) {
      case ChannelStatus::ok:
        s.partial.push_back(
            {message.kind, {message.payload.begin(), message.payload.end()}});
        reader.release();
        break;
      case ChannelStatus::timeout:
        throw TimeoutError("no result of execution " + std::to_string(seq) + " of " +
                           describe(spec_) + " within " +
                           std::to_string(s.options.get_timeout.count()) + " ms");
      case ChannelStatus::closed:
        s.throw_closed(spec_);
      default:
        throw Error("result channel " + std::to_string(s.result_channels[s.partial.size()]) +
                    " of " + describe(spec_) + " is corrupt");
      }
    }
    std::vector<Collected> outputs;
    for (std::size_t source : s.output_source)
      outputs.push_back(s.partial[source]);
    s.results.emplace(s.collected++, std::move(outputs));
    s.partial.clear();
  }
  auto node = s.results.extract(seq);
  if (node.empty())
    throw Error("the result of execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was already taken");
  return std::move(node.mapped());
}

void GraphRuntime::teardown() noexcept {
  Impl& s = *impl_;
  if (s.torn_down)
    return;
  s.torn_down = true;
  s.stopping.store(true);
  s.close_all();
  if (s.monitor.joinable()) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(s.stop_fd, &one, sizeof one);
    s.monitor.join();
  }
  if (s.stop_fd >= 0)
    ::close(s.stop_fd);
  // Actors leave their loop when their channels close; give them a moment to
  // exit cleanly, then make sure.
  auto deadline = Clock::now() + std::chrono::seconds(2);
  for (ChildProcess& child : s.actors) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!child.wait_for(std::max(left, std::chrono::milliseconds(0)))) {
      child.kill(SIGKILL);
      child.wait_for(std::chrono::seconds(1));
    }
  }
  s.segment.unlink();
}

} // namespace cg::detail
