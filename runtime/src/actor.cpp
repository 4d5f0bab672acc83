// actor.cpp - The actor side of a launched graph: attach, identify, run.
//
// The actor executable is started by the driver as
//   <exe> <graph> <actor> <segment>
// where <segment> is fd:<n>, a descriptor of the graph's anonymous segment the
// driver let us inherit, or the /dev/shm name of a named one.
// It maps the segment, checks that it was made for this graph and this build
// (same channel count), runs the generated entry for the actor and returns
// when the driver closes the channels. Any runtime failure ends the process
// with a message on stderr and exit code 2; the driver sees the death.
// In threads mode the driver runs the same entry on a thread over its own
// mapping (see driver.cpp), and reports a failure itself.
#include <cg/actor.hpp>
#include <cg/cpu_binding.hpp>
#include <cg/detail/launcher.hpp>
#include <cg/detail/scale_out.hpp>
#include <cg/host_communicator.hpp>
#include <cg/shm.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
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
  SharedSegment owned;        // processes: our own mapping; threads: empty
  std::span<std::byte> memory;
  detail::SegmentLayout layout;
  detail::SegmentHeader* header = nullptr;
  std::vector<std::unique_ptr<Communicator>> communicators;  // per group, made on first use

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
    : impl_(std::make_unique<Impl>()), spec_(&spec), actor_(actor),
      name_(spec.actors[actor].name) {
  try {
    detail::bind_actor_from_environment();
  } catch (const std::exception& e) {
    throw detail::ActorFailure(e.what());
  }
  impl_->owned = map_segment(segment);
  attach(spec, actor,
         {static_cast<std::byte*>(impl_->owned.data()), impl_->owned.size()}, segment);
}

ActorProcess::ActorProcess(const detail::GraphSpec& spec, std::uint32_t actor,
                           std::span<std::byte> segment)
    : impl_(std::make_unique<Impl>()), spec_(&spec), actor_(actor),
      name_(spec.actors[actor].name) {
  attach(spec, actor, segment, "of the driver");
}

// Checks that the segment was made for this graph and this build (same
// channel count), then computes where its channels are.
void ActorProcess::attach(const detail::GraphSpec& spec, std::uint32_t actor,
                          std::span<std::byte> memory, const std::string& segment) {
  impl_->memory = memory;
  if (memory.size() < sizeof(detail::SegmentHeader))
    throw detail::ActorFailure("segment " + segment + " is too small to be a graph segment");
  impl_->header = reinterpret_cast<detail::SegmentHeader*>(memory.data());
  const detail::SegmentHeader& header = *impl_->header;
  if (header.magic != detail::kSegmentMagic || header.channel_count != spec.channels.size() ||
      header.actor_count != spec.actors.size() ||
      header.communicator_count != spec.communicators.size() ||
      std::string_view(header.graph) != std::string_view(spec.name))
    throw detail::ActorFailure("segment " + segment + " was not made for graph '" + spec.name +
                               "' of this build");
  slot_bytes_ = header.slot_bytes;
  impl_->layout =
      detail::segment_layout(spec, header.slots, header.slot_bytes, header.communicator_bytes);
  impl_->communicators.resize(spec.communicators.size());
  if (impl_->layout.total_bytes > memory.size())
    throw detail::ActorFailure("segment " + segment + " is smaller than its channels need");
  if (header.constructor_args != 0) {
    const std::uint64_t table = header.constructor_args;
    const std::uint64_t size = memory.size();
    if (table < impl_->layout.total_bytes || table > size ||
        (size - table) / sizeof(detail::ConstructorArgs) < spec.actors.size())
      throw detail::ActorFailure("segment " + segment +
                                 " has an impossible constructor-argument table");
    detail::ConstructorArgs args;
    std::memcpy(&args, memory.data() + table + actor * sizeof args, sizeof args);
    if (args.offset != 0) {
      if (args.offset > size || args.bytes > size - args.offset)
        throw detail::ActorFailure("segment " + segment +
                                   " places the constructor arguments of actor '" + name_ +
                                   "' outside itself");
      constructor_args_ = std::span<const std::byte>(memory.data() + args.offset, args.bytes);
    }
  }
}

ActorProcess::~ActorProcess() = default;

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
  HostGroup host = HostGroup::attach(impl_->memory.data() +
                                     impl_->layout.communicator_offsets.at(group));
  if (!host.valid() || host.config().ranks != static_cast<int>(ranks.size()))
    throw detail::ActorFailure("communicator group " + std::to_string(group) +
                               " is not initialised");
  if (impl_->header->nccl_ids != 0) {
    // CommunicatorKind::nccl: join the group from the id the driver made,
    // on this actor's first GPU, and make NCCL connect now (warm_up) rather
    // than in the first execution. Every actor asks for its groups in group
    // order (the generated ports do), so the joins cannot deadlock.
    const std::uint64_t at = impl_->header->nccl_ids + group * detail::kNcclIdBytes;
    if (at > impl_->memory.size() || impl_->memory.size() - at < detail::kNcclIdBytes)
      throw detail::ActorFailure("segment places the NCCL id of communicator group " +
                                 std::to_string(group) + " outside itself");
#if defined(CG_HAVE_CUDA)
    NcclUniqueId id;
    std::memcpy(id.bytes.data(), impl_->memory.data() + at, detail::kNcclIdBytes);
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
  return impl_->header->communicator_bytes;
}

void ActorProcess::ready() { impl_->header->ready.fetch_add(1, std::memory_order_release); }

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
  throw ActorFailure("channel " + std::to_string(channel) + ": " + what + " (" +
                     to_string(status) + ")");
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

int actor_host_main(int argc, char** argv, std::span<const GraphSpec* const> graphs) {
  if (argc == 2 || argc == 3)
    return remote_host_main(argc, argv, graphs);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <graph> <actor> <segment>     (started by cg::launch())\n"
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
      try {
        ActorProcess process(*spec, actor, argv[3]);
        return spec->actors[actor].run(process);
      } catch (const GraphStopped&) {
        return 0;  // the graph was stopped while we waited in a communicator
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cg actor %s/%s: %s\n", argv[1], argv[2], e.what());
        return 2;
      }
    }
  }
  std::fprintf(stderr, "cg actor: no actor '%s' in graph '%s' in this executable\n", argv[2],
               argv[1]);
  return 64;
}

} // namespace detail
} // namespace cg
