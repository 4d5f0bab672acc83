// actor.cpp - The actor side of a launched graph: attach to the segment, find channels and groups.
//
// An ActorProcess is what a generated actor program runs against: in
// processes mode over the segment the actor executable inherited
// (<segment> is fd:<n>, or the /dev/shm name of a named one; actor_host.cpp
// holds the executable's mains), in threads mode over the driver's own
// mapping (driver.cpp). It checks that the segment was made for this graph
// and this build (actor/segment.hpp), then hands out channel views and joins
// communicator groups on demand.
#include "actor/restart.hpp"
#include "actor/segment.hpp"
#include "os/launcher.hpp"
#include "shm/shm.hpp"
#include "tensor/arrivals.hpp"
#include "tensor/device_timer.hpp"
#include "tensor/gpu_run_ahead.hpp"
#include <cg/actor.hpp>
#include <cg/cpu_binding.hpp>
#include <cg/device.hpp>
#include <cg/host_communicator.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace cg {
namespace {

// "fd:<n>": an inherited descriptor, mapped and closed; anything else: a name.
SharedSegment map_segment(const std::string& segment) {
  constexpr std::string_view prefix = "fd:";
  if (segment.compare(0, prefix.size(), prefix) != 0)
    return SharedSegment::open(segment);
  const char* digits = segment.c_str() + prefix.size();
  char* end = nullptr;
  long fd = std::strtol(digits, &end, 10);
  if (end == digits || *end != '\0' || fd < 0 || fd > INT_MAX)
    throw std::runtime_error("'" + segment + "' names no descriptor");
  return SharedSegment::adopt(static_cast<int>(fd));
}

} // namespace

struct ActorProcess::Impl {
  SharedSegment owned; // processes: our own mapping; threads: empty
  std::span<std::byte> memory;
  detail::ActorRecord* record = nullptr; // this actor's, in the segment
  std::uint64_t executions = 0;          // finished, as `record` says
  detail::SegmentLayout layout;
  detail::SegmentHeader* header = nullptr;
  std::vector<std::unique_ptr<Communicator>> communicators; // per group, made on first use
  // NVTX range names (CG_NVTX=1): a deque, so that they never move; tasks
  // by their method's name, a literal of the generated code.
  std::deque<std::string> nvtx_names;
  std::map<const char*, const char*> nvtx_tasks;
  // An actor with GPUs of its own runs at most max_in_flight executions
  // ahead of them (tensor/gpu_run_ahead.hpp); made after its first execution.
  bool run_ahead_known = false;
  std::unique_ptr<detail::GpuRunAhead> run_ahead;
  // Times the device work of its ports on CUDA streams, when profiled.
  std::unique_ptr<detail::DeviceTimer> device_timer;

  // NCCL groups: the driver stops a graph by aborting the host groups in the
  // segment, which NCCL does not see; this thread passes such an abort on to
  // the group's NcclCommunicator, so that a rank waiting in NCCL wakes up
  // (declared last: it stops before the communicators go).
  std::mutex watched_mutex;
  std::vector<std::pair<HostGroup, Communicator*>> watched;
  std::jthread watcher;

  void watch(HostGroup group, Communicator& communicator) {
    {
      std::lock_guard lock(watched_mutex);
      watched.emplace_back(group, &communicator);
    }
    if (watcher.joinable())
      return;
    watcher = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        {
          std::lock_guard lock(watched_mutex);
          for (auto& [group, comm] : watched)
            if (comm && group.aborted()) {
              comm->abort(group.abort_reason());
              comm = nullptr;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
};

ActorProcess::ActorProcess(const detail::GraphSpec& spec, std::uint32_t actor,
                           const std::string& segment)
    : impl_(std::make_unique<Impl>()), spec_(&spec), actor_(actor), name_(spec.actors[actor].name) {
  try {
    detail::bind_actor_from_environment();
  } catch (const std::exception& e) {
    throw detail::ActorFailure(e.what());
  }
  impl_->owned = map_segment(segment);
  attach(spec, actor, {static_cast<std::byte*>(impl_->owned.data()), impl_->owned.size()}, segment);
  // A process the driver started again after this actor's died
  // (actor/restart.hpp): its channels are brought to the first execution it
  // runs before the program makes its ports, which start where they are.
  if (const char* from = std::getenv(detail::restart_from_variable)) {
    const char* note = std::getenv(detail::restart_note_variable);
    const std::uint64_t first = std::strtoull(from, nullptr, 10);
    const std::string told = note != nullptr ? note : "";
    // Not for the processes a method may start.
    ::unsetenv(detail::restart_from_variable);
    ::unsetenv(detail::restart_note_variable);
    const std::optional<std::uint64_t> start = detail::resume_channels(
        spec, actor, first, told, slot_bytes_, [this](std::uint32_t c) { return channel_at(c); });
    if (start) {
      impl_->executions = *start;
      impl_->record->executions.store(*start, std::memory_order_relaxed);
      // Its profile numbers and samples executions as the driver and the
      // other actors do.
      profile_.execution = *start;
      profile_.recording = detail::profile_records(*start, profile_.every);
    }
  }
}

ActorProcess::ActorProcess(const detail::GraphSpec& spec, std::uint32_t actor,
                           std::span<std::byte> segment, const detail::MessageSources* sources)
    : impl_(std::make_unique<Impl>()), spec_(&spec), actor_(actor), name_(spec.actors[actor].name),
      sources_(sources) {
  attach(spec, actor, segment, "of the driver");
}

ChannelReader ActorProcess::reader_of(std::uint32_t channel, std::uint32_t reader) const {
  if (sources_ != nullptr)
    if (detail::MessageSource* source = sources_->source(channel, reader))
      return ChannelReader(*source);
  return ChannelReader(channel_at(channel), reader);
}

ChannelWriter ActorProcess::writer_of(std::uint32_t channel) const {
  ChannelWriter writer(channel_at(channel));
  if (sources_ != nullptr)
    writer.forward_with(sources_->forwarder(channel));
  return writer;
}

// Checks that the segment was made for this graph and this build, then finds
// where its channels are (actor/segment.hpp).
void ActorProcess::attach(const detail::GraphSpec& spec, std::uint32_t actor,
                          std::span<std::byte> memory, const std::string& segment) {
  impl_->memory = memory;
  detail::SegmentView view = detail::read_segment(memory, spec, actor, segment);
  impl_->header = view.header;
  impl_->record = detail::actor_record(memory, *view.header, actor);
  impl_->layout = std::move(view.layout);
  impl_->communicators.resize(spec.communicators.size());
  slot_bytes_ = view.header->geometry.slot_bytes;
  constructor_args_ = view.constructor_args;
  nvtx_ = detail::nvtx_enabled();
  profile_.recorder = detail::ProfileRecorder(detail::profile_ring(memory, *view.header, actor));
  profile_.every = view.header->geometry.profile_every;
}

ActorProcess::~ActorProcess() {
  // The timer records what finished into profile_'s ring: before it goes.
  if (impl_ && impl_->device_timer) {
    profile_.device = nullptr;
    impl_->device_timer.reset();
  }
}

detail::ActorProfile* ActorProcess::device_profile() {
  if (!profile_.recorder.on())
    return nullptr;
  if (!impl_->device_timer) {
    impl_->device_timer = std::make_unique<detail::DeviceTimer>(profile_, name_, cuda_device_);
    profile_.device = impl_->device_timer.get();
  }
  return &profile_;
}

const char* ActorProcess::nvtx_name(detail::ProfiledOp op, std::uint32_t channel) {
  if (!nvtx_)
    return nullptr;
  std::string name =
      (op == detail::ProfiledOp::read ? "READ c" : "WRITE c") + std::to_string(channel);
  if (channel < spec_->names.channels.size())
    name += std::string(" (") + spec_->names.channels[channel] + ")";
  return impl_->nvtx_names.emplace_back(std::move(name)).c_str();
}

const char* ActorProcess::nvtx_task(const char* method) {
  auto [found, fresh] = impl_->nvtx_tasks.try_emplace(method, nullptr);
  if (fresh)
    found->second = impl_->nvtx_names.emplace_back(name_ + "." + method).c_str();
  return found->second;
}

Channel ActorProcess::channel_at(std::uint32_t channel) const {
  Channel view = Channel::attach(impl_->memory.data() + impl_->layout.channel_offsets.at(channel));
  if (!view.valid())
    throw detail::ActorFailure("channel " + std::to_string(channel) + " is not initialised");
  return view;
}

Communicator& ActorProcess::communicator(std::uint32_t group) {
  std::unique_ptr<Communicator>& made = impl_->communicators.at(group);
  if (made)
    return *made;
  std::span<const std::uint32_t> ranks = spec_->communicators[group].actors;
  auto position = std::find(ranks.begin(), ranks.end(), actor_);
  if (position == ranks.end())
    throw detail::ActorFailure("actor '" + name_ + "' is no rank of communicator group " +
                               std::to_string(group));
  const int rank = static_cast<int>(position - ranks.begin());
  HostGroup host =
      HostGroup::attach(impl_->memory.data() + impl_->layout.communicator_offsets.at(group));
  if (!host.valid() || host.config().ranks != static_cast<int>(ranks.size()))
    throw detail::ActorFailure("communicator group " + std::to_string(group) +
                               " is not initialised");
  if (impl_->header->communicator == CommunicatorKind::nccl) {
    // Join the group from the id the driver made,
    // on this actor's first GPU, and make NCCL connect now (warm_up) rather
    // than in the first execution. Every actor asks for its groups in group
    // order (the generated ports do), so the joins cannot deadlock.
    [[maybe_unused]] const auto bytes = detail::nccl_id(impl_->memory, *impl_->header, group);
#if defined(CG_HAVE_CUDA)
    NcclUniqueId id;
    std::memcpy(id.bytes.data(), bytes.data(), detail::kNcclIdBytes);
    try {
      auto comm = std::make_unique<NcclCommunicator>(id, static_cast<int>(ranks.size()), rank,
                                                     cuda_device_);
      comm->warm_up();
      // As below: peers may wait for the driver's next input for any time
      // (ten years: NCCL's wait compares in nanoseconds, which max() overflows).
      comm->set_timeout(std::chrono::hours(24 * 365 * 10));
      made = std::move(comm);
      impl_->watch(host, *made);
    } catch (const std::exception& e) {
      throw detail::ActorFailure("actor '" + name_ + "' cannot join NCCL communicator group " +
                                 std::to_string(group) + " as rank " + std::to_string(rank) +
                                 " on cuda:" + std::to_string(cuda_device_) + ": " + e.what());
    }
    return *made;
#else
    throw detail::ActorFailure("communicator group " + std::to_string(group) +
                               " is an NCCL group, and this runtime was built without CUDA");
#endif
  }
  auto comm = std::make_unique<HostCommunicator>(host, rank);
  // Peers may be waiting for the driver's next input: only an abort (the
  // graph stopped) ends a wait.
  comm->set_timeout(std::chrono::milliseconds::max());
  made = std::move(comm);
  return *made;
}

std::uint64_t ActorProcess::communicator_bytes() const noexcept {
  return impl_->header->geometry.communicator_bytes;
}

void ActorProcess::ready() {
  profile_.last = detail::profile_clock(); // the first READ waits from here
  impl_->header->ready.fetch_add(1, std::memory_order_release);
}

void ActorProcess::say_last_words(std::string_view words) noexcept {
  if (impl_->record)
    detail::say_last_words(*impl_->record, words);
}

void ActorProcess::await_input(const Result<Tensor>& input) {
  if (input.ok())
    detail::await_arrival(input.value());
}

void ActorProcess::executed() noexcept {
  // What was read ahead and not used (its task skipped for an upstream
  // error) is waited for before its memory can go back to the pool.
  detail::await_all_arrivals();
  if (impl_->record)
    impl_->record->executions.store(++impl_->executions, std::memory_order_relaxed);
  profile_.next_execution();
  bound_run_ahead();
}

// Waits, when this actor has GPUs, for the GPU work of the execution
// max_in_flight - 1 before the one that just ended. A CUDA failure here is
// said once and ends the bound; the next CUDA call of a method reports it.
void ActorProcess::bound_run_ahead() noexcept {
  Impl& s = *impl_;
  if (!s.run_ahead_known) {
    s.run_ahead_known = true;
    if (spec_->actors[actor_].gpus > 0 && cuda_device_count() > 0) {
      try {
        s.run_ahead =
            std::make_unique<detail::GpuRunAhead>(cuda_device_, s.header->geometry.max_in_flight);
      } catch (...) {
        return; // no memory for it: unbounded, as without a GPU
      }
    }
  }
  if (s.run_ahead && !s.run_ahead->executed()) {
    std::fprintf(stderr, "cg: actor '%s' runs ahead of its GPU from now on: %s\n", name_.c_str(),
                 s.run_ahead->error().c_str());
    s.run_ahead.reset();
  }
}

namespace detail {

std::string current_exception_type() {
  std::type_info* type = abi::__cxa_current_exception_type();
  if (!type)
    return "unknown";
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type->name();
  std::free(demangled);
  return name;
}

void channel_failure(const char* what, std::uint32_t channel, ChannelStatus status) {
  throw ActorFailure("channel " + std::to_string(channel) + ": " + what + " (" + to_string(status) +
                     ")");
}

ErrorRecord undecodable(const std::string& actor, std::uint32_t channel, const DecodeError& e) {
  return {actor, "read", "cg::DecodeError",
          "channel " + std::to_string(channel) +
              " holds a value that cannot be decoded: " + e.what()};
}

} // namespace detail
} // namespace cg
