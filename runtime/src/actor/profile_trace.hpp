// actor/profile_trace.hpp - A launched graph's profile rings as a Chrome trace.
//
// What the driver writes for LaunchOptions::profile (CG_PROFILE) from the
// rings its actors and itself recorded (cg/detail/profile.hpp), in the
// Chrome trace-event format that Perfetto UI and chrome://tracing open:
//   - one track (thread) per actor, named after it, and one for the driver;
//   - one complete event ("ph": "X") per operation of each execution kept:
//     `<actor>.<method>` for a COMPUTE (the task as the schedule names it),
//     `READ c1 (first.echo)` and `WRITE c2 (second.echo)` for a channel's
//     read or write, `execute` and `get` on the driver; its args say the
//     execution, the source line (COMPUTE) and the bytes moved (READ, WRITE);
//   - a flow from each WRITE to every READ of the same message;
//   - an instant event ("ph": "i") named "restart" on an actor's track where
//     the driver noticed its process died and started it again
//     (LaunchOptions::max_restarts); its args say which restart it was
//     ("count", "of"), the "cause" and the executions lost
//     ("lost_executions": "500-507", "lost": 8);
//   - in "otherData": the graph, the clock, "profile_every" (the profile
//     recorded one execution in that many: 1, all), per track the events its ring
//     dropped (it keeps the last LaunchOptions::profile_executions), and per
//     track of an actor on another host how far off its times may be
//     ("clock_uncertainty_ns": half the round trip that aligned its clock).
// Timestamps are microseconds since the earliest event kept (CLOCK_MONOTONIC
// nanoseconds in "otherData"'s origin_ns).
#pragma once

#include <cg/detail/graph_spec.hpp>
#include <cg/detail/profile.hpp>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cg::detail {

/// The environment variable read at launch when LaunchOptions::profile is empty.
inline constexpr const char* profile_variable = "CG_PROFILE";
/// The one read when LaunchOptions::profile_executions is 0, and what the
/// rings then keep without it.
inline constexpr const char* profile_executions_variable = "CG_PROFILE_EXECUTIONS";
inline constexpr std::uint32_t default_profile_executions = 10'000;
/// The one read when LaunchOptions::profile_every is 1.
inline constexpr const char* profile_every_variable = "CG_PROFILE_EVERY";

/// One restart of an actor's process, as the driver saw it.
struct ProfileRestart {
  std::int64_t ns = 0;     // CLOCK_MONOTONIC, when the driver noticed the death
  std::uint32_t count = 0; // the actor's how manyth restart
  std::uint32_t of = 0;    // of how many it may have
  std::string cause;       // "killed by signal 9 (Killed)"
  // The executions lost to it: [lost_from, lost_until).
  std::uint64_t lost_from = 0, lost_until = 0;
};

/// One participant's ring as read: its events, oldest first, and how many
/// it recorded but no longer holds.
struct ProfileTrack {
  std::string name; // the actor's, or "driver"
  std::vector<ProfileEvent> events;
  std::uint64_t dropped = 0;
  /// A track another host's process sent: how far off its times may be
  /// (half the round trip its clock was aligned by); 0 for ours.
  std::int64_t clock_uncertainty_ns = 0;
  /// An actor's restarts, oldest first (the driver's record, not the ring's).
  /// Initialised here, so that a track written {name, events, dropped}
  /// leaves nothing out.
  std::vector<ProfileRestart> restarts = {};
};

/// Copies `rings` out (each one profile_ring() found, its capacity checked;
/// null ones skipped) as one track: the driver records on two threads, each
/// into a ring of its own.
ProfileTrack read_profile_rings(std::initializer_list<const ProfileRing*> rings, std::string name);

/// Turns the ticks of `tracks` (as read from their rings) into
/// CLOCK_MONOTONIC nanoseconds, from both clocks read at `origin` and at
/// `now` (the further apart, the more exact).
void ticks_to_ns(std::span<ProfileTrack> tracks, ProfileClocks origin, ProfileClocks now);

/// A track as an actor process on another host sends it to the driver
/// (RendezvousClient::send_profile): its dropped count, then its events in
/// CLOCK_MONOTONIC nanoseconds, each laid out as ProfileEvent is (8 bytes,
/// then 40 an event; the hosts of one graph run one build of it).
std::string encode_profile_track(const ProfileTrack& track);
/// Back, with `offset_ns` (the sender's clock minus ours) taken off every
/// time; false if `payload` is no such encoding.
bool decode_profile_track(std::string_view payload, std::int64_t offset_ns, ProfileTrack& track);

/// Writes the trace of `tracks` (actors by index, then the driver) of `spec`,
/// a profile of one execution in `profile_every`.
void write_chrome_trace(std::ostream& out, const GraphSpec& spec,
                        std::span<const ProfileTrack> tracks, std::uint32_t profile_every = 1);

} // namespace cg::detail
