//===- Schedule.h - Channels and per-actor operation lists -------*- C++ -*-===//
//
// The scheduler turns a validated graph into what the runtime executes:
// the channels (one per value that crosses a process boundary) and, for each
// actor, the fixed list of READ / COMPUTE / WRITE operations it runs once per
// execution. Codegen prints these lists as straight-line code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <string>
#include <variant>
#include <vector>

namespace cg::schedule {

/// Writer or reader of a channel that is not an actor: the driver process.
inline constexpr int kDriver = -1;

/// One single-writer, multi-reader channel carrying one value per execution.
struct Channel {
  unsigned value = 0;          // the ir::Value it carries
  int writer = kDriver;        // actor index, or kDriver for a graph input
  std::vector<int> readers;    // actor indices and/or kDriver, ascending;
                               // a reader's position here is its reader slot

  friend bool operator==(const Channel&, const Channel&) = default;
};

struct Operation {
  enum class Kind { Read, Compute, Write };
  Kind kind = Kind::Compute;
  unsigned task = 0;               // the task this operation belongs to
  std::vector<unsigned> channels;  // Read: channels read; Write: channels
                                   // written; Compute: empty

  friend bool operator==(const Operation&, const Operation&) = default;
};

struct ActorSchedule {
  unsigned actor = 0;
  std::vector<Operation> operations;   // run in this order, once per execution

  friend bool operator==(const ActorSchedule&, const ActorSchedule&) = default;
};

struct Schedule {
  std::vector<Channel> channels;
  std::vector<ActorSchedule> actors;       // one per ir::Graph::actors entry
  std::vector<unsigned> inputChannels;     // per graph input position
  std::vector<unsigned> outputChannels;    // per graph output position

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

/// Builds the schedule of a graph that passed ir::validate(). Returns the
/// schedule, or the diagnostics explaining why none exists.
std::variant<Schedule, std::vector<ir::Diagnostic>>
buildSchedule(const ir::Graph& graph);

/// The human-readable `<graph>.schedule.txt`: per actor, numbered operations
/// with the source line of their task. Deterministic.
std::string renderScheduleText(const ir::Graph& graph, const Schedule& schedule);

} // namespace cg::schedule
