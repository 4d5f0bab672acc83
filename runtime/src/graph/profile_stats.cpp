// profile_stats.cpp - Percentiles of a profile's events (graph/profile_stats.hpp).
#include "graph/profile_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace cg {
namespace detail {
namespace {

// Nearest-rank percentiles of `ns` (sorted here).
Percentiles percentiles(std::vector<std::int64_t> ns) {
  Percentiles p;
  p.count = ns.size();
  if (ns.empty())
    return p;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ns.size())));
    return static_cast<double>(ns[std::max<std::size_t>(rank, 1) - 1]) / 1000.0;
  };
  p.p50_us = at(0.50);
  p.p90_us = at(0.90);
  p.p99_us = at(0.99);
  return p;
}

std::int64_t duration(const ProfileEvent& event) {
  return std::max<std::int64_t>(event.end - event.start, 0);
}

} // namespace

GraphStats profile_stats(const GraphSpec& spec, std::span<const ProfileTrack> tracks,
                         std::uint32_t profile_every) {
  GraphStats stats;
  stats.graph = spec.name;
  stats.profile_every = profile_every;
  for (const ProfileTrack& track : tracks)
    stats.dropped_events += track.dropped;

  for (std::size_t a = 0; a < spec.actors.size() && a < tracks.size(); ++a) {
    const auto names =
        a < spec.names.computes.size() ? spec.names.computes[a] : std::span<const ComputeName>{};
    std::map<std::uint32_t, std::vector<std::int64_t>> computes, waits; // by compute index
    std::int64_t pending = 0; // reads since the last compute, in this execution
    bool any_pending = false;
    std::uint64_t execution = UINT64_MAX;
    for (const ProfileEvent& event : tracks[a].events) {
      if (event.execution != execution) {
        execution = event.execution;
        pending = 0;
        any_pending = false;
      }
      if (event.op == ProfiledOp::read) {
        pending += duration(event);
        any_pending = true;
      } else if (event.op == ProfiledOp::compute) {
        computes[event.index].push_back(duration(event));
        if (any_pending)
          waits[event.index].push_back(pending);
        pending = 0;
        any_pending = false;
      }
    }
    const std::uint32_t count =
        std::max<std::uint32_t>(static_cast<std::uint32_t>(names.size()),
                                computes.empty() ? 0 : computes.rbegin()->first + 1);
    for (std::uint32_t c = 0; c < count; ++c) {
      TaskStats task;
      task.actor = spec.actors[a].name;
      task.task = c < names.size() ? names[c].task : task.actor + ".compute#" + std::to_string(c);
      task.loc = c < names.size() ? names[c].loc : "";
      task.compute = percentiles(computes[c]);
      task.read_wait = percentiles(waits[c]);
      stats.tasks.push_back(std::move(task));
    }
  }

  // The driver: from each execute() to its last result read.
  if (tracks.size() == spec.actors.size() + 1) {
    struct Times {
      std::optional<std::int64_t> start, arrival;
    };
    std::map<std::uint64_t, Times> executions;
    for (const ProfileEvent& event : tracks.back().events) {
      Times& times = executions[event.execution];
      if (event.op == ProfiledOp::execute)
        times.start = event.start;
      else if (event.op == ProfiledOp::read)
        times.arrival = std::max(times.arrival.value_or(event.end), event.end);
    }
    std::vector<std::int64_t> latencies;
    for (const auto& [execution, times] : executions)
      if (times.start && times.arrival)
        latencies.push_back(std::max<std::int64_t>(*times.arrival - *times.start, 0));
    stats.latency = percentiles(std::move(latencies));
  }
  return stats;
}

} // namespace detail

std::string format_stats(const GraphStats& stats) {
  const std::string latency_name = "execute -> result";
  std::size_t width = latency_name.size();
  for (const TaskStats& task : stats.tasks)
    width = std::max(width, task.task.size());
  const int w = static_cast<int>(width);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "graph '%s'%s\n", stats.graph.c_str(),
                stats.dropped_events != 0 ? " (older events dropped)" : "");
  out += line;
  // Sampled: the counts below must not pass for totals.
  if (stats.profile_every > 1)
    out += "1 in " + std::to_string(stats.profile_every) +
           " executions recorded: counts are of those, percentiles over them\n";
  std::snprintf(line, sizeof line, "%-*s  %-9s %8s %10s %10s %10s  %s\n", w, "task", "what",
                "count", "p50 us", "p90 us", "p99 us", "bound at");
  out += line;
  auto print = [&](const std::string& name, const char* what, const Percentiles& p,
                   const std::string& loc) {
    if (p.count == 0)
      return;
    std::snprintf(line, sizeof line, "%-*s  %-9s %8llu %10.2f %10.2f %10.2f", w, name.c_str(), what,
                  static_cast<unsigned long long>(p.count), p.p50_us, p.p90_us, p.p99_us);
    out += line;
    out += loc.empty() ? "\n" : "  " + loc + "\n";
  };
  for (const TaskStats& task : stats.tasks) {
    print(task.task, "compute", task.compute, task.loc);
    print(task.task, "read wait", task.read_wait, "");
  }
  print(latency_name, "latency", stats.latency, "");
  // Below the table: a restart is no operation, and its executions lost
  // are missing from the counts above.
  for (const auto& [actor, count] : stats.restarts)
    if (count != 0)
      out += "actor '" + actor + "' restarted " + std::to_string(count) +
             (count == 1 ? " time\n" : " times\n");
  return out;
}

} // namespace cg
