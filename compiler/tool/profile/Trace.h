// profile/Trace.h - a profiled run's Chrome trace (CG_PROFILE;
// runtime/src/actor/profile_trace.hpp) as cg-profile reads it: the
// operations ("X" events) of each track, in time order, and the actors'
// restarts ("restart" instants).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg::profile {

/// One operation: a READ, COMPUTE or WRITE of an actor, the driver's
/// execute, get, WRITE of an input or READ of a result, or an actor's device
/// work (a copy or an NCCL transfer on a CUDA stream) on its GPU track.
struct Slice {
  std::string name, category;     // category: read, compute, write, execute, get, device
  int tid = 0;                    // the track: 0 the driver, then the actors, then GPU tracks
  double start = 0, duration = 0; // microseconds
  std::uint64_t execution = 0;
  int channel = -1; // READ, WRITE
  double end() const { return start + duration; }
};

/// An actor's process started again after it died: the trace's "restart"
/// instant on the actor's track (LaunchOptions::max_restarts).
struct Restart {
  int tid = 0;
  double at = 0;                       // microseconds
  std::uint64_t count = 0, of = 0;     // the actor's count-th restart of at most `of`
  std::string cause;                   // "killed by signal 9 (Killed)"
  std::string lostExecutions = "none"; // "500-507"
  std::uint64_t lost = 0;              // how many executions
};

struct Trace {
  std::string graph;
  /// The profile recorded one execution in this many ("profile_every" in
  /// the trace's "otherData"; 1, every one, in a trace without it).
  std::uint64_t profileEvery = 1;
  std::map<int, std::string> tracks; // tid -> actor ("driver": tid 0), or "<actor> (GPU)"
  std::map<int, long> sort_index;    // tid -> where a viewer shows it (thread_sort_index)
  std::vector<Slice> slices;         // in time order
  std::vector<Restart> restarts;     // in time order

  /// The track's name as the trace gives it, else "tid <n>".
  std::string track(int tid) const;
};

/// "" for a trace of every execution, else " (1 in N executions recorded)".
std::string sampledNote(const Trace& trace);

/// Why a file is not a trace this tool can read: the message says which
/// file and what is wrong.
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads the trace at `path`; TraceError if it cannot be read, is not JSON,
/// not a Chrome trace, holds an event of another shape, a profile_every
/// below 1, or no operation.
Trace readTrace(const std::string& path);

} // namespace cg::profile
