// graph/runtime_profiling.hpp - A launched graph's profile, as the driver holds it.
//
// A part of GraphRuntime::Impl (graph/runtime_state.hpp), apart so that
// driver_profile.cpp, which reads and writes the profile, and driver.cpp,
// which records the driver's own spans, find the driver's rings and what
// teardown read in one place.
#pragma once

#include <cg/detail/profile.hpp>

#include "actor/profile_trace.hpp"
#include "net/rendezvous.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cg {
struct LaunchOptions;
}

namespace cg::detail {

// Profiles (cg/detail/profile.hpp): the driver's rings (one for the thread
// calling execute() and get(), one for the collector thread), where teardown
// writes the trace (empty: no profile), and when the execution being
// submitted began and when its last input was handed over.
struct RuntimeProfiling {
  ProfileRecorder profile;
  ProfileRecorder collector_profile;
  // One execution in `every` is recorded (LaunchOptions::profile_every).
  std::uint32_t every = 1;
  std::string profile_path; // empty: none is written at teardown
  // Actors in processes of their own: their tracks as their processes sent
  // them at teardown (RendezvousServer::collect_profiles), by actor.
  std::map<std::string, RemoteProfile> remote_profiles;
  // Written by the thread that submits (as the rings are); next_submission:
  // the execution it will begin next, as far as it knows.
  std::int64_t execute_start = 0;
  std::int64_t input_start = 0;
  std::uint64_t next_submission = 0;
  // The rings as teardown read them before it released the memory they are
  // in (profile_final: read; final_profile_error: why they could not be).
  // Guarded by GraphRuntime::Impl::mutex; its `changed` says when
  // profile_final changed.
  bool profile_final = false;
  std::vector<ProfileTrack> final_profile;
  std::string final_profile_error;

  /// Whether the profile records execution `seq` (cg/detail/profile.hpp).
  bool records(std::uint64_t seq) const noexcept {
    return profile.on() && profile_records(seq, every);
  }
};

/// LaunchOptions::profile_every, or else CG_PROFILE_EVERY, checked: throws
/// LaunchError naming the field or the variable for a value out of range.
std::uint32_t profile_every(const LaunchOptions& options);

} // namespace cg::detail
