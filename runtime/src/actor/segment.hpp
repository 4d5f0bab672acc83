// actor/segment.hpp - The layout of a launched graph's shared memory: written and read here only.
//
// One segment per launched graph: a header, then every channel of the graph
// back to back (64-byte aligned), then the communicator groups (cg::HostGroup,
// one per NCCL edge or collective), then the constructor arguments given to
// launch(), then (CommunicatorKind::nccl) one NCCL unique id per group, from
// which each actor joins its groups' NcclCommunicators, then one ActorRecord
// per actor: its progress and its last words, for the driver's reports;
// then, in a profiled launch, one ProfileRing per actor and two for the
// driver, one per thread of it that records (cg/detail/profile.hpp).
//
// The driver creates it as anonymous shared memory (a memfd, never named in
// /dev/shm) and each actor process inherits its descriptor, maps it, checks
// the header and bumps `ready`; the driver then closes its descriptor. The
// memory goes with the last process mapping it, so a crash of anyone, at any
// time, leaves nothing behind. Values larger than a slot live in per-slot
// overflow buffers of the channels' writers (cg/detail/channel.hpp), also
// memfds. The actors of another host share a private segment of the same
// layout, written by their process (net/scale_out.hpp).
//
// write_segment() is the one writer and read_segment() the one reader: the
// driver, a remote host's process and every actor go through them.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/detail/graph_spec.hpp>
#include <cg/detail/launch_geometry.hpp>
#include <cg/detail/profile.hpp>
#include <cg/host_communicator.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cg::detail {

// "CGGRAPH2" little-endian: a new layout of the header takes the next number.
inline constexpr std::uint64_t kSegmentMagic = 0x32'48'50'41'52'47'47'43; // "CGGRAPH2"

struct SegmentHeader {
  std::uint64_t magic;
  // The geometry as launched: communicator_bytes 0 for a graph without
  // communicator groups, profile_executions 0 when no profile is recorded.
  LaunchGeometry geometry;
  // What carries the communicator groups: host groups in this segment, or
  // NCCL communicators joined from the ids at `nccl_ids`. Chosen at launch
  // (LaunchOptions::communicator) and written here, for the actors to read
  // rather than guess.
  CommunicatorKind communicator;
  std::uint32_t actor_count;
  std::uint32_t channel_count;
  std::atomic<std::uint32_t> ready; // actors attached so far
  char graph[64];
  // Offset of the constructor-argument table (one ConstructorArgs per actor,
  // after the channels), 0 when launch() was given none.
  std::uint64_t constructor_args;
  std::uint32_t communicator_count;
  // Offset of one NCCL unique id (kNcclIdBytes) per communicator group, made
  // by the driver for CommunicatorKind::nccl; 0 for host communicators.
  std::uint64_t nccl_ids;
  // Offset of one ActorRecord per actor.
  std::uint64_t actor_records;
  // Offset of the profile rings' offset table (one std::uint64_t per
  // participant, as ProfileParticipant numbers them), 0 when the
  // launch records no profile (each ring keeps geometry.profile_executions).
  std::uint64_t profile_rings;
  // Both clocks at launch, to turn the rings' ticks into nanoseconds.
  std::int64_t profile_origin_ticks;
  std::int64_t profile_origin_ns;
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

/// The size of an ncclUniqueId (cg::NcclUniqueId).
inline constexpr std::size_t kNcclIdBytes = 128;
using NcclIdBytes = std::array<char, kNcclIdBytes>;

/// What the driver learns of an actor besides its channels:
///   - `executions`, the executions it finished, stored by the actor once per
///     execution; one that stops moving while a result is awaited names the
///     actor that stalled;
///   - its last words: why it is exiting ("<exception type>: <what>"),
///     written before it exits, quoted when the driver reports its death (an
///     actor process's stderr is not the driver's caller's).
inline constexpr std::size_t kActorRecordBytes = 512;
struct ActorRecord {
  std::atomic<std::uint64_t> executions;
  std::atomic<std::uint32_t> bytes; // of `last_words`, stored after them
  char last_words[kActorRecordBytes - sizeof(std::uint64_t) - sizeof(std::uint32_t)];
};
static_assert(sizeof(ActorRecord) == kActorRecordBytes);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

/// Actor `actor`'s record, or null when the segment does not hold it.
ActorRecord* actor_record(std::span<const std::byte> memory, const SegmentHeader& header,
                          std::uint32_t actor);

/// Records `words` (shortened to fit) as the last words in `record`.
void say_last_words(ActorRecord& record, std::string_view words) noexcept;

/// The last words in `record`, or "" when the actor said none.
std::string last_words(const ActorRecord& record);

/// Where an actor's constructor arguments given to launch() lie in the
/// segment (encoded as the std::tuple of the graph's argument types).
struct ConstructorArgs {
  std::uint64_t offset; // 0: none for this actor, it takes the graph's
  std::uint64_t bytes;
};

struct SegmentLayout {
  std::vector<std::size_t> channel_offsets;
  std::vector<std::size_t> communicator_offsets; // one cg::HostGroup each
  std::size_t total_bytes = 0;                   // channels and groups
};

/// Offsets of every channel, then of every communicator group, for this spec
/// and geometry.
SegmentLayout segment_layout(const GraphSpec& spec, const LaunchGeometry& geometry);

/// What a new segment holds besides its channels.
struct SegmentContents {
  /// As launched: communicator_bytes 0 makes no groups (the graph has none),
  /// profile_executions 0 no profile rings.
  LaunchGeometry geometry;
  /// What carries the communicator groups; nccl needs one id per group.
  CommunicatorKind communicator = CommunicatorKind::host;
  /// Per actor, its encoded constructor arguments given to launch(), or
  /// nullopt; empty when launch() was given none.
  std::span<const std::optional<std::vector<std::byte>>> constructor_args = {};
  /// One per communicator group (CommunicatorKind::nccl), or empty.
  std::span<const NcclIdBytes> nccl_ids = {};
};

/// The bytes a segment of this graph with these contents needs.
std::size_t segment_bytes(const GraphSpec& spec, const SegmentContents& contents);

/// A segment as written: its header, and its channels and groups as made.
struct WrittenSegment {
  SegmentHeader* header = nullptr;
  std::vector<Channel> channels; // per GraphSpec::channels
  std::vector<HostGroup> groups; // per GraphSpec::communicators
};

/// Writes a new segment into `memory` (segment_bytes() zeroed bytes): the
/// header, the channels, the groups, the constructor arguments and the NCCL
/// ids. Throws std::runtime_error when a communicator group cannot be made,
/// or NCCL communicators come without one id per group.
WrittenSegment write_segment(std::span<std::byte> memory, const GraphSpec& spec,
                             const SegmentContents& contents);

/// An actor's checked view of the segment it attached to.
struct SegmentView {
  SegmentHeader* header = nullptr;
  SegmentLayout layout;
  /// This actor's constructor arguments given to launch(); nullopt: the graph's.
  std::optional<std::span<const std::byte>> constructor_args;
};

/// Checks that `memory` holds a segment made for this graph by this build
/// (same actors, channels and groups) and finds what `actor` needs in it.
/// Throws ActorFailure ("segment <name> ...") when it does not.
SegmentView read_segment(std::span<std::byte> memory, const GraphSpec& spec, std::uint32_t actor,
                         const std::string& name);

/// Who records into a profile ring of its own, one thread each: actor `a`
/// is participant a; after the actors come the driver's two threads.
struct ProfileParticipant {
  /// The thread calling execute() and get(): input writes, execute, get,
  /// and result reads until a collector thread takes them over.
  static std::uint32_t driver(std::size_t actors) { return static_cast<std::uint32_t>(actors); }
  /// The collector thread (started for futures): result reads.
  static std::uint32_t collector(std::size_t actors) { return driver(actors) + 1; }
  static std::size_t count(std::size_t actors) { return actors + 2; }
};

/// The events one execution makes participant `who` record at most: actor
/// `who`'s reads, computes and writes; the driver's input writes, result
/// reads, execute and get; its collector's result reads.
std::uint64_t profile_events_per_execution(const GraphSpec& spec, std::uint32_t who);

/// Participant `who`'s profile ring (ProfileParticipant), or null when the
/// launch records no profile or the segment does not hold the ring and the
/// events it says it has.
ProfileRing* profile_ring(std::span<std::byte> memory, const SegmentHeader& header,
                          std::uint32_t who);

/// The NCCL unique id of communicator group `group`, checked to lie inside
/// the segment; throws ActorFailure otherwise.
std::span<const std::byte, kNcclIdBytes> nccl_id(std::span<const std::byte> memory,
                                                 const SegmentHeader& header, std::uint32_t group);

} // namespace cg::detail
