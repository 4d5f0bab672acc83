// graph/driver_profile.cpp - A launched graph's profile: every participant's
// ring read back, onto one clock, as statistics or a Chrome trace.
#include <cg/driver.hpp>

#include "graph/profile_stats.hpp"
#include "graph/runtime_state.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

namespace cg::detail {

std::uint32_t profile_every(const LaunchOptions& options) {
  const std::string range = "from 1 (every execution) to " + std::to_string(kMostProfileEvery);
  if (options.profile_every == 0 || options.profile_every > kMostProfileEvery)
    throw LaunchError("cg::LaunchOptions::profile_every is " +
                      std::to_string(options.profile_every) + "; it must be " + range);
  if (options.profile_every != 1)
    return options.profile_every;
  const char* text = std::getenv(profile_every_variable);
  if (!text || !*text)
    return 1;
  std::uint32_t every = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, every);
  if (error != std::errc{} || stop != end || every == 0 || every > kMostProfileEvery)
    throw LaunchError(std::string("the environment variable ") + profile_every_variable + " is '" +
                      text + "'; it must be a number " + range + " (or unset)");
  return every;
}

void GraphRuntime::write_profile(const std::string& path) const { impl_->write_profile(path); }

GraphStats GraphRuntime::stats() const {
  GraphStats stats =
      profile_stats(spec_, impl_->profile_tracks(), impl_->profiling.sampling.every());
  stats.restarts = restarts();
  return stats;
}

std::vector<ProfileTrack> GraphRuntime::Impl::profile_tracks() const {
  if (!profiling.profile.on())
    throw Error(describe(spec) + " records no profile: launch it with cg::LaunchOptions::profile "
                                 "or the environment variable CG_PROFILE set to a file (or "
                                 "LaunchOptions::record_profile)");
  {
    const MemoryUse use(*this);
    if (use.entered)
      return read_profile_tracks();
  }
  // Torn down (or being torn down): the rings as teardown read them before
  // it released their memory.
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return profiling.profile_final; });
  if (!profiling.final_profile_error.empty())
    throw Error("the profile of " + describe(spec) +
                " could not be read at teardown: " + profiling.final_profile_error);
  return profiling.final_profile;
}

std::vector<ProfileTrack> GraphRuntime::Impl::read_profile_tracks() const {
  std::span<std::byte> memory{static_cast<std::byte*>(segment.data()), segment.size()};
  std::vector<ProfileTrack> tracks;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    tracks.push_back(read_profile_rings({profile_ring(memory, *header, a)}, spec.actors[a].name));
  const std::size_t actors = spec.actors.size();
  tracks.push_back(
      read_profile_rings({profile_ring(memory, *header, ProfileParticipant::driver(actors)),
                          profile_ring(memory, *header, ProfileParticipant::collector(actors))},
                         "driver"));
  // Ticks to nanoseconds: the two readings of both clocks at least 20 ms
  // apart, for a rate within a few parts per million.
  const ProfileClocks origin{header->profile_origin_ticks, header->profile_origin_ns};
  const auto apart = std::chrono::nanoseconds(monotonic_ns() - origin.ns);
  if (apart < std::chrono::milliseconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(20) - apart);
  ticks_to_ns(tracks, origin, ProfileClocks::now());
  {
    // Timed in nanoseconds already (graph/restarts.cpp).
    std::lock_guard lock(mutex);
    for (std::uint32_t a = 0; a < spec.actors.size() && a < profiling.restarts.size(); ++a)
      tracks[a].restarts = profiling.restarts[a];
  }
  // Actors in processes of their own recorded in their own segments: their
  // tracks as those processes send them (now, or as they did at teardown),
  // moved onto our clock.
  if (scale_out.remote_count > 0) {
    const std::map<std::string, RemoteProfile> remote =
        torn_down_now() ? profiling.remote_profiles
                        : scale_out.server.collect_profiles(Clock::now() + std::chrono::seconds(3));
    for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
      auto sent = remote.find(spec.actors[a].name);
      if (scale_out.local[a] || sent == remote.end())
        continue;
      ProfileTrack track{
          spec.actors[a].name, {}, 0, std::max<std::int64_t>(sent->second.uncertainty_ns, 1)};
      if (decode_profile_track(sent->second.payload, sent->second.offset_ns, track))
        tracks[a] = std::move(track);
    }
  }
  return tracks;
}

void GraphRuntime::Impl::write_profile(const std::string& path) const {
  const std::vector<ProfileTrack> tracks = profile_tracks();
  std::ofstream out(path, std::ios::trunc);
  if (out)
    write_chrome_trace(out, spec, tracks, profiling.sampling.every());
  out.flush();
  if (!out)
    throw Error("cannot write the profile of " + describe(spec) + " to '" + path +
                "': " + std::strerror(errno));
}

} // namespace cg::detail
