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

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cg {
struct LaunchOptions;
}

namespace cg::detail {

/// profile_records() for the driver, which asks it several times an
/// execution: a multiply, a rotation and a comparison, not a division. With
/// every = 2^k * q (q odd) and q' the inverse of q modulo 2^64, n * q' is m
/// for each multiple n = m * q and above (2^64 - 1) / q for any other n;
/// rotated right by k, it is n / every for a multiple of every and above
/// (2^64 - 1) / every for any other n (the test compilers emit for a
/// constant divisor).
class ProfileSampling {
public:
  /// `every` >= 1 (0 is taken as 1).
  explicit ProfileSampling(std::uint32_t every = 1) noexcept
      : every_(std::max<std::uint32_t>(every, 1)), shift_(std::countr_zero(every_)) {
    const std::uint64_t odd = every_ >> shift_;
    std::uint64_t inverse = odd; // right in its low 3 bits: odd * odd is 1 modulo 8
    for (int bits = 3; bits < 64; bits *= 2)
      inverse *= 2 - odd * inverse; // Newton's step doubles the bits that are right
    inverse_ = inverse;
    limit_ = UINT64_MAX / every_;
  }

  std::uint32_t every() const noexcept { return every_; }
  bool records(std::uint64_t execution) const noexcept {
    return std::rotr(execution * inverse_, shift_) <= limit_;
  }

private:
  std::uint32_t every_;
  int shift_;
  std::uint64_t inverse_ = 1;
  std::uint64_t limit_ = UINT64_MAX;
};

// Profiles (cg/detail/profile.hpp): the driver's rings (one for the thread
// calling execute() and get(), one for the collector thread), where teardown
// writes the trace (empty: no profile), and when the execution being
// submitted began and when its last input was handed over.
struct RuntimeProfiling {
  ProfileRecorder profile;
  ProfileRecorder collector_profile;
  // Which executions are recorded (LaunchOptions::profile_every).
  ProfileSampling sampling;
  std::string profile_path; // empty: none is written at teardown
  // Actors in processes of their own: their tracks as their processes sent
  // them at teardown (RendezvousServer::collect_profiles), by actor.
  std::map<std::string, RemoteProfile> remote_profiles;
  // Written by the thread that submits (as the rings are); next_submission:
  // the execution it will begin next, as far as it knows.
  std::int64_t execute_start = 0;
  std::int64_t input_start = 0;
  std::uint64_t next_submission = 0;
  // Each actor's restarts so far, by actor index, for the trace; guarded
  // by GraphRuntime::Impl::mutex.
  std::vector<std::vector<ProfileRestart>> restarts;
  // The rings as teardown read them before it released the memory they are
  // in (profile_final: read; final_profile_error: why they could not be).
  // Guarded by GraphRuntime::Impl::mutex; its `changed` says when
  // profile_final changed.
  bool profile_final = false;
  std::vector<ProfileTrack> final_profile;
  std::string final_profile_error;

  /// Whether the profile records execution `seq` (cg/detail/profile.hpp).
  bool records(std::uint64_t seq) const noexcept { return profile.on() && sampling.records(seq); }
};

/// LaunchOptions::profile_every, or else CG_PROFILE_EVERY, checked: throws
/// LaunchError naming the field or the variable for a value out of range.
std::uint32_t profile_every(const LaunchOptions& options);

} // namespace cg::detail
