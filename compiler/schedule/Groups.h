//===- Groups.h - The synchronous groups as communicators --------*- C++ -*-===//
//
// Each synchronous group of a schedule is a communicator when the graph
// runs: its actors by rank, named as schedule.txt names it. Codegen declares
// the communicators and each actor's rank in them, schedule.txt lists the
// groups; both take them from here, so a group is found and named once, and
// the generated code says what schedule.txt says.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <string>
#include <vector>

namespace cg::schedule {

/// One synchronous group (Schedule::groups) as a communicator.
struct Communicator {
  /// The actors by rank: an NCCL channel's writer, then its readers in
  /// reader-slot order; a collective's ranks in order.
  std::vector<unsigned> actors;
  /// "nccl c1", or a collective's kind, reduction and id: "allreduce sum #0".
  std::string name;
  /// The name and the actors: "nccl c1: a -> b, c", "allreduce sum #0: a, b".
  std::string summary;
};

/// An actor's place in one communicator.
struct Membership {
  unsigned group = 0; // index into Schedule::groups
  unsigned rank = 0;

  friend bool operator==(const Membership&, const Membership&) = default;
};

/// The communicators of a schedule, and who is in which.
struct Communicators {
  std::vector<Communicator> groups;                 // per Schedule::groups entry
  std::vector<std::vector<Membership>> memberships; // per actor, by group
  std::vector<int> channelGroup;                    // per channel: its group, -1 unless NCCL
  std::vector<int> collectiveGroup;                 // per ir::Collective: its group
};

/// Finds them in one pass over the groups. An NCCL channel with the driver
/// at one end is an internal error (validation rejects it).
Communicators communicatorsOf(const ir::Graph& graph, const Schedule& schedule);

} // namespace cg::schedule
