// cg/stats.hpp - What a profiled graph measured, summed up: per task, how long
// its method ran and how long its reads waited; per graph, how long an
// execution took from execute() to its results.
//
//   cg::LaunchOptions options;
//   options.record_profile = true;     // or profile = "trace.json", CG_PROFILE
//   auto graph = cg::launch<&pipeline>(options);
//   ... executions ...
//   std::fputs(cg::format_stats(graph.stats()).c_str(), stdout);
//
// Computed from the events the profile still holds (the last
// LaunchOptions::profile_executions executions; cg/detail/profile.hpp), so
// it costs nothing while the graph runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cg {

/// Durations of one kind, in microseconds: how many, and their 50th, 90th
/// and 99th percentiles (nearest rank); all 0 when there are none.
struct Percentiles {
  std::uint64_t count = 0;
  double p50_us = 0;
  double p90_us = 0;
  double p99_us = 0;
};

struct TaskStats {
  std::string task;  // as the schedule names it: "second.echo"
  std::string actor; // "second"
  std::string loc;   // where the graph binds it: "quickstart.cg.cpp:35"
  /// Its method (or collective), once per execution.
  Percentiles compute;
  /// Its reads in one execution, together: the wait for its inputs and
  /// their copy (none for a task that reads no channel).
  Percentiles read_wait;
};

struct GraphStats {
  std::string graph;
  std::vector<TaskStats> tasks; // by actor, then in each actor's program order
  /// From execute() to the last result's arrival in the driver.
  Percentiles latency;
  /// Events older than the profile keeps, not counted above.
  std::uint64_t dropped_events = 0;
  /// The profile records one execution in this many
  /// (LaunchOptions::profile_every): the counts above are of the recorded
  /// executions alone, and the percentiles are over them.
  std::uint32_t profile_every = 1;
  /// Per actor, how many times its process was started again after it died
  /// (LaunchOptions::max_restarts), as GraphHandle::restarts() says; actors
  /// never restarted are left out. Not from the profile: every restart counts.
  std::map<std::string, std::uint32_t> restarts;
};

/// The statistics as a table, one line per task, then the graph's latency;
/// a sampled profile's says so above the table ("1 in 8 executions recorded"),
/// and each actor restarted says how often below it ("actor 'b' restarted 2 times").
std::string format_stats(const GraphStats& stats);

} // namespace cg
