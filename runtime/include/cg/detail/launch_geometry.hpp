// cg/detail/launch_geometry.hpp - The geometry of a launched graph's channels and rings, defined
// once.
//
//   cg::detail::LaunchGeometry geometry;             // the defaults
//   geometry.max_in_flight = options.max_in_flight;  // as launched
//
// How many executions a channel holds (max_in_flight: the slots of each
// channel's ring, and the executions submitted and not yet collected), the
// bytes one slot holds in place, the bytes of a communicator group's largest
// message, the executions a profile ring keeps and the one in how many it
// records. The driver takes them from
// cg::LaunchOptions (whose defaults are these), lays its segment out with them
// (actor/segment.hpp: the segment header holds them as launched), and sends
// them to the actor processes of other hosts in its greeting
// (net/greeting.hpp), which lay their segments out alike. cgc's
// --max-in-flight defaults to the same capacity, so that the schedule whose
// deadlock freedom it checks is the one a launch with default options runs.
// So a default lives here and nowhere else.
//
// Header-only and dependent on nothing else of the runtime: cgc includes it
// without linking the runtime.
#pragma once

#include <cstdint>

namespace cg {

/// What carries a graph's communicator edges (cg::transport::nccl) and
/// collectives (LaunchOptions::communicator): chosen at launch, for a whole
/// graph.
enum class CommunicatorKind { host, nccl };

namespace detail {

struct LaunchGeometry {
  /// Executions a channel holds: the slots of every channel's ring, and the
  /// executions that may be submitted and not yet collected.
  std::uint32_t max_in_flight = 10;
  /// Bytes of a value one channel slot holds in place (a larger one goes
  /// through the slot's overflow buffer).
  std::uint32_t slot_bytes = 64 * 1024;
  /// Bytes of the largest message or collective input of a communicator
  /// group; as launched, 0 for a graph without groups.
  std::uint64_t communicator_bytes = 16u << 20;
  /// Executions each profile ring keeps; 0: no profile is recorded.
  std::uint32_t profile_executions = 0;
  /// A profile records one execution in this many (those whose number is a
  /// multiple of it; cg/detail/profile.hpp's profile_records()); 1: all.
  std::uint32_t profile_every = 1;
};

/// The most profile_every may be: a sample rarer than that leaves a ring
/// nearly empty.
inline constexpr std::uint32_t kMostProfileEvery = 1'000'000;

/// The defaults, for initialisers that need a constant (cgc's options).
inline constexpr LaunchGeometry kDefaultLaunchGeometry{};

} // namespace detail
} // namespace cg
