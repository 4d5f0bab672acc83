// profile/TimelineSvg.h - `cg-profile timeline`: a picture of a trace's last
// executions, one row per track (the driver, then each actor), each
// operation a box coloured by kind (READ, COMPUTE, WRITE, execute, get) and
// each value's trip an arrow from the end of its WRITE to the end of the READ
// it fed, over a time axis. A standalone SVG: for docs, reviews, a browser
// (each box's tooltip gives its name, execution and length), without Perfetto.
#pragma once

#include "profile/Trace.h"

#include <string>

namespace cg::profile {

/// The last `executions` executions the driver finished (got) in `trace`
/// (all of them, if fewer), or the last ones begun if none finished: of a
/// sampled profile, the last recorded ones, which its title says.
std::string renderTimelineSvg(const Trace& trace, unsigned executions);

} // namespace cg::profile
