// graph/profile_stats.hpp - A launched graph's profile summed up (cg/stats.hpp).
#pragma once

#include "actor/profile_trace.hpp"

#include <cg/stats.hpp>

#include <cstdint>
#include <span>

namespace cg::detail {

/// The statistics of `tracks` (actors by index, then the driver) of `spec`.
/// A task's read wait in an execution is the reads its actor made since its
/// previous COMPUTE: the reads the schedule puts before it. `profile_every`:
/// the one execution in how many the profile recorded.
GraphStats profile_stats(const GraphSpec& spec, std::span<const ProfileTrack> tracks,
                         std::uint32_t profile_every = 1);

} // namespace cg::detail
