// profile/Trace.cpp - reading a Chrome trace's operations.
#include "profile/Trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace cg::profile {

using nlohmann::json;

std::string Trace::track(int tid) const {
  auto it = tracks.find(tid);
  return it == tracks.end() ? "tid " + std::to_string(tid) : it->second;
}

std::string sampledNote(const Trace& trace) {
  return trace.profileEvery <= 1
             ? std::string()
             : " (1 in " + std::to_string(trace.profileEvery) + " executions recorded)";
}

Trace readTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw TraceError("cannot read '" + path + "'");
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {
    throw TraceError("'" + path + "' is not JSON: " + e.what());
  }
  if (!document.is_object() || !document.contains("traceEvents") ||
      !document["traceEvents"].is_array())
    throw TraceError("'" + path + "' is not a Chrome trace (no \"traceEvents\" array)");
  Trace trace;
  try {
    const json other = document.value("otherData", json::object());
    trace.graph = other.value("graph", "");
    trace.profileEvery = other.value("profile_every", std::uint64_t{1});
    for (const json& event : document["traceEvents"]) {
      const std::string phase = event.value("ph", "");
      if (phase == "M" && event.value("name", "") == "thread_name")
        trace.tracks[event.at("tid").get<int>()] = event.at("args").at("name").get<std::string>();
      if (phase == "M" && event.value("name", "") == "thread_sort_index")
        trace.sort_index[event.at("tid").get<int>()] =
            event.at("args").at("sort_index").get<long>();
      if (phase == "i" && event.value("name", "") == "restart") {
        const json args = event.value("args", json::object());
        trace.restarts.push_back({event.at("tid").get<int>(), event.at("ts").get<double>(),
                                  args.value("count", std::uint64_t{0}),
                                  args.value("of", std::uint64_t{0}), args.value("cause", ""),
                                  args.value("lost_executions", "none"),
                                  args.value("lost", std::uint64_t{0})});
        continue;
      }
      if (phase != "X")
        continue;
      Slice slice;
      slice.name = event.at("name").get<std::string>();
      slice.category = event.value("cat", "");
      slice.tid = event.at("tid").get<int>();
      slice.start = event.at("ts").get<double>();
      slice.duration = event.value("dur", 0.0);
      const json args = event.value("args", json::object());
      slice.execution = args.value("execution", std::uint64_t{0});
      slice.channel = args.value("channel", -1);
      trace.slices.push_back(std::move(slice));
    }
  } catch (const json::exception& e) {
    throw TraceError("'" + path + "' holds an event this tool cannot read: " + e.what());
  }
  if (trace.profileEvery == 0)
    throw TraceError("'" + path + "' says its profile recorded one execution in 0");
  if (trace.slices.empty())
    throw TraceError("'" + path + "' holds no operations (was the graph run with a profile?)");
  std::stable_sort(trace.slices.begin(), trace.slices.end(),
                   [](const Slice& a, const Slice& b) { return a.start < b.start; });
  std::stable_sort(trace.restarts.begin(), trace.restarts.end(),
                   [](const Restart& a, const Restart& b) { return a.at < b.at; });
  return trace;
}

} // namespace cg::profile
