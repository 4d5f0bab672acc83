// cg_profile.cpp - cg-profile, which reads the Chrome trace a profiled graph wrote (CG_PROFILE;
// runtime/src/actor/profile_trace.hpp) and answers two questions:
//
//   cg-profile summary <trace.json> [--json]
//       per actor, the fraction of the profiled window (from the driver's
//       first execute() to the last operation) it spent computing,
//       waiting in reads, writing and idle; the pipeline's bubble fraction
//       (the mean share of the window the actors did not compute); and the
//       critical path of the last complete execution, from the driver's
//       execute() through the writes and reads that held it up to its result;
//       and each actor restart: when, why and the executions it lost.
//   cg-profile costs <trace.json>
//       the median COMPUTE time of each method on each actor, in
//       microseconds, as the cost profile `cgc --costs` reads
//       (compiler/schedule/Costs.h): profile-guided scheduling.
//   cg-profile timeline <trace.json> [--executions N]
//       an SVG picture of the last N executions (default 3): one row per
//       track, each operation a box, each value an arrow from its WRITE to
//       its READ (profile/TimelineSvg.h).
//
// A sampled profile (one execution in N recorded: "profile_every" in the
// trace) says so in each: the summary scales the time it sums by N (the
// recorded executions stand for those between them), the medians and the
// timeline are of the recorded executions, and costs says so on stderr.
//
// Exit status: 0, or 2 with a message on stderr for bad usage or input.
#include "profile/TimelineSvg.h"
#include "profile/Trace.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using cg::profile::Restart;
using cg::profile::Slice;
using cg::profile::Trace;
using nlohmann::json;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

// "a.step#2" -> "a.step": every bind of one method on one actor, as
// `cgc --costs` keys them.
std::string methodKey(const std::string& task) {
  const auto hash = task.rfind('#');
  return hash == std::string::npos ? task : task.substr(0, hash);
}

int costs(const Trace& trace) {
  std::map<std::string, std::vector<double>> samples;
  for (const Slice& slice : trace.slices)
    if (slice.category == "compute")
      samples[methodKey(slice.name)].push_back(slice.duration);
  json costs = json::object();
  for (const auto& [key, durations] : samples)
    costs[key] = median(durations);
  json out = {{"format", "cg-costs"}, {"version", 1}, {"costs", costs}};
  std::cout << out.dump(2) << "\n";
  if (trace.profileEvery > 1)
    std::cerr << fmt::format("cg-profile: 1 in {} executions recorded: the medians are of those\n",
                             trace.profileEvery);
  return 0;
}

struct ActorTime {
  std::string name;
  double compute = 0, read = 0, write = 0;
};

// The critical path of execution `e`: from its result's arrival back to
// execute(), each step the operation that ended last before the next began.
std::vector<const Slice*> criticalPath(const Trace& trace, std::uint64_t e) {
  std::vector<const Slice*> path;
  std::map<int, const Slice*> writes; // channel -> the WRITE of execution e
  for (const Slice& slice : trace.slices)
    if (slice.execution == e && slice.category == "write")
      writes[slice.channel] = &slice;
  // Start at the driver's last READ of the execution.
  const Slice* at = nullptr;
  for (const Slice& slice : trace.slices)
    if (slice.execution == e && slice.tid == 0 && slice.category == "read" &&
        (!at || slice.end() > at->end()))
      at = &slice;
  while (at) {
    path.push_back(at);
    if (at->category == "read") {
      auto write = writes.find(at->channel);
      at = write == writes.end() ? nullptr : write->second;
      continue;
    }
    // Before a compute or write on its track: the operation of the same
    // execution that ended last before it began (a READ waits on its writer).
    const Slice* before = nullptr;
    for (const Slice& slice : trace.slices)
      if (slice.tid == at->tid && slice.execution == e && &slice != at &&
          slice.end() <= at->start + 1e-3 && (!before || slice.end() > before->end()))
        before = &slice;
    at = before;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// Where the profiled window starts: the driver's first operation, the first
// execution's execute(). Not the earliest slice: the actors' first READs
// start at launch and wait for that execution, so a short run counted from
// them reads as mostly bubble. A trace without a driver's track (written by
// hand) starts at its earliest slice.
double windowStart(const Trace& trace) {
  for (const Slice& slice : trace.slices) // in time order
    if (slice.tid == 0)
      return slice.start;
  return trace.slices.front().start;
}

int summary(const Trace& trace, bool asJson) {
  const double first = windowStart(trace);
  double last = first;
  std::map<int, ActorTime> actors;
  std::map<int, double> gpus; // GPU tracks: their device work, busy time
  std::uint64_t lastExecution = 0;
  for (const Slice& slice : trace.slices)
    last = std::max(last, slice.end());
  // The part of a slice inside the window.
  auto within = [&](const Slice& slice) {
    return std::max(0.0, std::min(slice.end(), last) - std::max(slice.start, first));
  };
  for (const Slice& slice : trace.slices) {
    if (slice.tid == 0) {
      if (slice.category == "get")
        lastExecution = std::max(lastExecution, slice.execution);
      continue;
    }
    if (slice.category == "device") {
      gpus[slice.tid] += within(slice);
      continue;
    }
    ActorTime& actor = actors[slice.tid];
    (slice.category == "compute" ? actor.compute
     : slice.category == "read"  ? actor.read
                                 : actor.write) += within(slice);
  }
  // Sampled: the recorded executions stand for the ones between them.
  const double scale = static_cast<double>(trace.profileEvery);
  for (auto& [tid, actor] : actors) {
    actor.compute *= scale;
    actor.read *= scale;
    actor.write *= scale;
  }
  for (auto& [tid, busy] : gpus)
    busy *= scale;
  const double window = std::max(last - first, 1e-3);
  double idleSum = 0;
  json out = {{"graph", trace.graph},
              {"profile_every", trace.profileEvery},
              {"window_start_us", first},
              {"window_us", window},
              {"actors", json::array()}};
  for (auto& [tid, actor] : actors) {
    actor.name = trace.track(tid);
    // Scaled, a share may overshoot a little: none says more than the window.
    const double compute = std::min(actor.compute, window);
    const double read = std::min(actor.read, window - compute);
    const double write = std::min(actor.write, window - compute - read);
    const double idle = std::max(0.0, window - compute - read - write);
    idleSum += 1 - compute / window;
    out["actors"].push_back({{"actor", actor.name},
                             {"compute", compute / window},
                             {"read_wait", read / window},
                             {"write", write / window},
                             {"idle", idle / window}});
  }
  const double bubble = actors.empty() ? 0 : idleSum / static_cast<double>(actors.size());
  out["bubble_fraction"] = bubble;
  out["gpu_tracks"] = json::array();
  for (const auto& [tid, busy] : gpus)
    out["gpu_tracks"].push_back(
        {{"track", trace.track(tid)}, {"busy", std::min(busy / window, 1.0)}});
  const std::vector<const Slice*> path = criticalPath(trace, lastExecution);
  out["critical_path"] = {{"execution", lastExecution}, {"steps", json::array()}};
  for (const Slice* step : path)
    out["critical_path"]["steps"].push_back(
        {{"track", trace.tracks.count(step->tid) ? trace.tracks.at(step->tid) : ""},
         {"operation", step->name},
         {"us", step->duration}});
  out["restarts"] = json::array();
  for (const Restart& restart : trace.restarts)
    out["restarts"].push_back({{"actor", trace.track(restart.tid)},
                               {"at_us", restart.at},
                               {"count", restart.count},
                               {"of", restart.of},
                               {"cause", restart.cause},
                               {"lost_executions", restart.lostExecutions},
                               {"lost", restart.lost}});
  if (asJson) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "graph '{}': {:.1f} us profiled, from the first execution (t={:.1f} us)\n", trace.graph,
      window, first);
  if (trace.profileEvery > 1)
    std::cout << fmt::format("1 in {0} executions recorded: the shares below are the recorded "
                             "executions' time times {0}\n",
                             trace.profileEvery);
  std::cout << fmt::format("{:<16} {:>8} {:>10} {:>8} {:>8}\n", "actor", "compute", "read wait",
                           "write", "idle");
  for (const json& actor : out["actors"])
    std::cout << fmt::format(
        "{:<16} {:>7.1f}% {:>9.1f}% {:>7.1f}% {:>7.1f}%\n", actor["actor"].get<std::string>(),
        100 * actor["compute"].get<double>(), 100 * actor["read_wait"].get<double>(),
        100 * actor["write"].get<double>(), 100 * actor["idle"].get<double>());
  std::cout << fmt::format("bubble fraction: {:.1f}% (the mean share of the window the actors "
                           "did not compute)\n",
                           100 * bubble);
  for (const json& gpu : out["gpu_tracks"])
    std::cout << fmt::format("{:<16} {:>7.1f}% busy with the ports' device work\n",
                             gpu["track"].get<std::string>(), 100 * gpu["busy"].get<double>());
  std::cout << fmt::format("critical path of execution {}:\n", lastExecution);
  for (const Slice* step : path)
    std::cout << fmt::format("  {:<10} {:<32} {:>10.2f} us\n",
                             trace.tracks.count(step->tid) ? trace.tracks.at(step->tid) : "",
                             step->name, step->duration);
  // Last: the window's shares above include the time the actor was down.
  for (const Restart& restart : trace.restarts)
    std::cout << fmt::format("restart of actor '{}' ({} of {}) at t={:.1f} us: {}; executions "
                             "lost: {} ({})\n",
                             trace.track(restart.tid), restart.count, restart.of, restart.at,
                             restart.cause, restart.lostExecutions, restart.lost);
  return 0;
}

constexpr const char* kUsage =
    "usage: cg-profile summary <trace.json> [--json]\n"
    "       cg-profile costs <trace.json>                      (for cgc --costs)\n"
    "       cg-profile timeline <trace.json> [--executions N]  (an SVG, on stdout)\n";

int usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.size() < 2)
    return usage();
  const std::string command = args[0];
  const std::string path = args[1];
  bool asJson = false;
  unsigned executions = 3;
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--json" && command == "summary") {
      asJson = true;
    } else if (args[i] == "--executions" && command == "timeline" && i + 1 < args.size()) {
      const std::string& n = args[++i];
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos ||
          std::stoul(n) == 0) {
        std::fprintf(stderr, "cg-profile: --executions takes a number from 1 to 999999, not '%s'\n",
                     n.c_str());
        return 2;
      }
      executions = static_cast<unsigned>(std::stoul(n));
    } else {
      return usage();
    }
  }
  if (command != "summary" && command != "costs" && command != "timeline")
    return usage();
  Trace trace;
  try {
    trace = cg::profile::readTrace(path);
  } catch (const cg::profile::TraceError& e) {
    std::fprintf(stderr, "cg-profile: %s\n", e.what());
    return 2;
  }
  if (command == "timeline") {
    std::cout << cg::profile::renderTimelineSvg(trace, executions);
    return 0;
  }
  return command == "costs" ? costs(trace) : summary(trace, asJson);
}
