// profile_test.cpp - the Chrome trace a profiled launch writes (CG_PROFILE,
// LaunchOptions::profile), read back as JSON and held against the schedule
// cgc wrote: every operation named, in the schedule's order, with flows from
// each write to its reads; a ring that keeps the last executions; and
// cg-profile's reading of it, whose costs cgc then schedules with.
//
// One file, about 920 lines: its tests read the same profiled runs through the
// same trace reader and schedule checks, defined once at its top; its last
// ones, of a profile of one execution in N (LaunchOptions::profile_every,
// CG_PROFILE_EVERY), hold such a trace to the same checks.
#include "../support/scoped_env.hpp"
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Profile = cg_test::NoLeftovers;
using nlohmann::json;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("cg-profile-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return json::parse(in);
}

// What the trace should call each operation of actor `actor`, in program
// order, from <graph>.schedule.txt: a READ of several channels is one event
// per channel, a COMPUTE is named by its task.
std::vector<std::string> scheduled_names(const std::string& graph, const std::string& actor) {
  std::ifstream in(std::string(CG_E2E_SCHEDULES) + "/" + graph + ".schedule.txt");
  EXPECT_TRUE(in) << graph;
  std::map<std::string, std::string> values; // "c1" -> "a.add_one"
  std::vector<std::string> names;
  const std::regex channel_line(R"(^  (c\d+)  (.+?)  +\S+  +\S+  +\S+ -> .*$)");
  const std::regex op_line(R"(^  \d+  (READ|COMPUTE|WRITE) +(.*?)\s*$)");
  const std::regex channel_ref(R"((c\d+)(?: \([^)]*\))?)"); // "c1 (a.add_one)" or "c1"
  bool in_actor = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("# ", 0) == 0) {
      in_actor = line.rfind("# actor " + actor + " (", 0) == 0;
    } else if (std::regex_match(line, m, channel_line)) {
      values[m[1]] = m[2];
    } else if (in_actor && std::regex_match(line, m, op_line)) {
      const std::string kind = m[1], rest = m[2];
      if (kind == "COMPUTE") {
        names.push_back(rest.substr(0, rest.find('(')));
        continue;
      }
      for (std::sregex_iterator c(rest.begin(), rest.end(), channel_ref), end; c != end; ++c)
        names.push_back(kind + " " + c->str(1) + " (" + values[c->str(1)] + ")");
    }
  }
  return names;
}

// The complete events of track `tid`, in time order.
// "graphs.cg.cpp:<n>", n the first line of graphs.cg.cpp holding `text`:
// where a trace says a COMPUTE is bound.
std::string source_line(const std::string& text) {
  std::ifstream source(std::string(CG_E2E_SOURCES) + "/graphs.cg.cpp");
  int n = 0;
  for (std::string line; std::getline(source, line);)
    if (++n, line.find(text) != std::string::npos)
      return "graphs.cg.cpp:" + std::to_string(n);
  ADD_FAILURE() << "graphs.cg.cpp has no line with " << text;
  return "";
}

std::vector<json> track(const json& trace, int tid) {
  std::vector<json> events;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == tid)
      events.push_back(e);
  std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
    return a["ts"].get<double>() < b["ts"].get<double>();
  });
  return events;
}

std::map<std::string, int> thread_ids(const json& trace) {
  std::map<std::string, int> tids;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tids[e["args"]["name"]] = e["tid"];
  return tids;
}

TEST_F(Profile, TheTraceNamesEveryOperationInScheduleOrderWithFlowsFromWritesToReads) {
  const std::string path = temp_path("diamond.json");
  constexpr int kExecutions = 5;
  {
    cg::LaunchOptions options;
    options.profile = path;
    auto graph = cg::launch<&diamond>(options);
    for (int i = 0; i < kExecutions; ++i)
      ASSERT_EQ(graph.execute(i).get(), 2 * i + 2);
  } // teardown writes the trace
  const json trace = read_json(path);
  std::filesystem::remove(path);

  EXPECT_EQ(trace["otherData"]["graph"], "diamond");
  EXPECT_EQ(trace["otherData"]["dropped_events"],
            (json{{"a", 0}, {"b", 0}, {"c", 0}, {"driver", 0}}));
  const std::map<std::string, int> tids = thread_ids(trace);
  EXPECT_EQ(tids, (std::map<std::string, int>{{"driver", 0}, {"a", 1}, {"b", 2}, {"c", 3}}));

  for (const std::string actor : {"a", "b", "c"}) {
    SCOPED_TRACE("actor " + actor);
    const std::vector<std::string> expected = scheduled_names("diamond", actor);
    ASSERT_FALSE(expected.empty());
    const std::vector<json> events = track(trace, tids.at(actor));
    ASSERT_EQ(events.size(), expected.size() * kExecutions);
    for (std::size_t i = 0; i < events.size(); ++i) {
      const json& e = events[i];
      EXPECT_EQ(e["name"], expected[i % expected.size()]) << i;
      EXPECT_EQ(e["args"]["execution"], i / expected.size()) << i;
      if (e["cat"] == "compute") {
        EXPECT_EQ(e["args"]["loc"], source_line("c.bind<&Calculator::sum>(a.bind"));
      } else {
        EXPECT_EQ(e["args"]["bytes"], sizeof(int)) << e;
      }
    }
  }
  // diamond.schedule.txt, exactly: c reads both channels before its sum.
  EXPECT_EQ(scheduled_names("diamond", "c"),
            (std::vector<std::string>{"READ c1 (a.add_one)", "READ c2 (b.add_one)", "c.sum",
                                      "WRITE c3 (c.sum)"}));

  // The driver: execute() hands over the input, get() reads the result.
  std::map<std::string, int> driver_names;
  for (const json& e : track(trace, 0))
    ++driver_names[e["name"]];
  EXPECT_EQ(driver_names, (std::map<std::string, int>{{"WRITE c0 (input #0)", kExecutions},
                                                      {"execute", kExecutions},
                                                      {"READ c3 (c.sum)", kExecutions},
                                                      {"get", kExecutions}}));

  // A flow from each write to each read of it: c0 to a and b, c1 and c2 to
  // c, c3 to the driver; each bound to its writer's and reader's track.
  std::map<int, std::pair<int, std::string>> starts; // id -> writer tid, channel
  std::multiset<std::tuple<std::string, int, int>> flows;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "s")
      starts[e["id"]] = {e["tid"], e["name"]};
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "f") {
      EXPECT_EQ(e["bp"], "e");
      const auto& [writer, channel] = starts.at(e["id"]);
      EXPECT_EQ(e["name"], channel);
      flows.insert({channel, writer, e["tid"]});
    }
  std::multiset<std::tuple<std::string, int, int>> expected_flows;
  for (int i = 0; i < kExecutions; ++i) {
    expected_flows.insert({"c0 (input #0)", 0, 1});
    expected_flows.insert({"c0 (input #0)", 0, 2});
    expected_flows.insert({"c1 (a.add_one)", 1, 3});
    expected_flows.insert({"c2 (b.add_one)", 2, 3});
    expected_flows.insert({"c3 (c.sum)", 3, 0});
  }
  EXPECT_EQ(flows, expected_flows);
}

// Runs `command` in a shell; its stdout, and its exit status in `status`.
std::string run(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    out.append(buffer, n);
  const int raw = ::pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

std::string diamond_trace(const std::string& name, int executions) {
  const std::string path = temp_path(name);
  cg::LaunchOptions options;
  options.profile = path;
  auto graph = cg::launch<&diamond>(options);
  for (int i = 0; i < executions; ++i)
    EXPECT_EQ(graph.execute(i).get(), 2 * i + 2);
  return path; // written as `graph` goes
}

TEST_F(Profile, CgProfileSummaryFollowsTheCriticalPathOfTheLastExecution) {
  const std::string trace = diamond_trace("summary.json", 20);
  int status = -1;
  const json summary =
      json::parse(run(std::string(CG_PROFILE_TOOL) + " summary " + trace + " --json", status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary["graph"], "diamond");
  ASSERT_EQ(summary["actors"].size(), 3u);
  for (const json& actor : summary["actors"]) {
    const double total = actor["compute"].get<double>() + actor["read_wait"].get<double>() +
                         actor["write"].get<double>() + actor["idle"].get<double>();
    EXPECT_NEAR(total, 1.0, 1e-6) << actor;
    EXPECT_GT(actor["compute"].get<double>(), 0) << actor;
  }
  const double bubble = summary["bubble_fraction"].get<double>();
  EXPECT_GT(bubble, 0);
  EXPECT_LE(bubble, 1);
  // c reads c1, then c2: the read that ends last is c2's, and b is on the
  // path, unless c2 was there when c looked: that READ took no time, it
  // ends with c1's, and a (whose value c waited for) is on the path.
  EXPECT_EQ(summary["critical_path"]["execution"], 19);
  std::vector<std::string> steps;
  for (const json& step : summary["critical_path"]["steps"])
    steps.push_back(step["track"].get<std::string>() + " " + step["operation"].get<std::string>());
  const std::vector<std::string> through_b{
      "driver WRITE c0 (input #0)", "b READ c0 (input #0)",  "b b.add_one",
      "b WRITE c2 (b.add_one)",     "c READ c2 (b.add_one)", "c c.sum",
      "c WRITE c3 (c.sum)",         "driver READ c3 (c.sum)"};
  const std::vector<std::string> through_a{
      "driver WRITE c0 (input #0)", "a READ c0 (input #0)",  "a a.add_one",
      "a WRITE c1 (a.add_one)",     "c READ c1 (a.add_one)", "c c.sum",
      "c WRITE c3 (c.sum)",         "driver READ c3 (c.sum)"};
  EXPECT_TRUE(steps == through_b || steps == through_a) << summary["critical_path"];
  // The same as a table.
  const std::string text = run(std::string(CG_PROFILE_TOOL) + " summary " + trace, status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("critical path of execution 19:\n  driver     WRITE c0 (input #0)"),
            std::string::npos)
      << text;
  std::filesystem::remove(trace);
}

TEST_F(Profile, CostsMeasuredByAProfileAreWhatCgcSchedulesWith) {
  const std::string trace = diamond_trace("costs.json", 50);
  const std::string costs = temp_path("diamond.costs.json");
  int status = -1;
  const std::string text = run(std::string(CG_PROFILE_TOOL) + " costs " + trace, status);
  ASSERT_EQ(status, 0);
  std::ofstream(costs) << text;
  const json measured = json::parse(text);
  EXPECT_EQ(measured["format"], "cg-costs");
  EXPECT_EQ(measured["version"], 1);
  ASSERT_EQ(measured["costs"].size(), 3u) << measured;
  const double a = measured["costs"]["a.add_one"], b = measured["costs"]["b.add_one"];
  const double c = measured["costs"]["c.sum"];
  EXPECT_GT(a, 0);

  // cgc schedules the graph with them: one execution takes the longer of a
  // and b, then c (the simulator counts no time for channels).
  const std::string out = temp_path("diamond.cgc");
  run(std::string(CG_CGC) + " " + CG_E2E_SOURCES + "/graphs.cg.cpp -o " + out +
          " --graph diamond --schedule=cost --costs=" + costs + " -- -I" + CG_RUNTIME_INCLUDE +
          " -DCG_E2E_GRAPHS_CONFIGURED=1 2>&1",
      status);
  ASSERT_EQ(status, 0);
  std::ifstream schedule(out + "/diamond.schedule.txt");
  std::stringstream body;
  body << schedule.rdbuf();
  const std::string all = body.str();
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(all, m, std::regex(R"(one execution takes ([0-9.e+-]+) cost units)")))
      << all;
  EXPECT_NEAR(std::stod(m[1]), std::max(a, b) + c, 0.01 * (std::max(a, b) + c)) << all;
  std::filesystem::remove_all(out);
  std::filesystem::remove(costs);
  std::filesystem::remove(trace);
}

// Runs cgc on graph `graph` of graphs.cg.cpp with `flags`; its schedule.txt.
std::string schedule_of(const std::string& graph, const std::string& flags) {
  const std::string out = temp_path(graph + ".cgc");
  int status = -1;
  const std::string errors =
      run(std::string(CG_CGC) + " " + CG_E2E_SOURCES + "/graphs.cg.cpp -o " + out + " --graph " +
              graph + " --emit=schedule " + flags + " -- -I" + CG_RUNTIME_INCLUDE +
              " -DCG_E2E_GRAPHS_CONFIGURED=1 2>&1",
          status);
  EXPECT_EQ(status, 0) << errors;
  std::ifstream schedule(out + "/" + graph + ".schedule.txt");
  std::stringstream body;
  body << schedule.rdbuf();
  std::filesystem::remove_all(out);
  return body.str();
}

// The COMPUTEs of `actor` in a schedule.txt, in order: "a.left", ...
std::vector<std::string> computes_of(const std::string& schedule, const std::string& actor) {
  std::vector<std::string> out;
  std::istringstream in(schedule);
  bool inside = false;
  static const std::regex compute(R"(\s+\d+\s+COMPUTE\s+([\w.#]+)\(.*)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0)
      inside = line.rfind("# actor " + actor + " ", 0) == 0;
    std::smatch m;
    if (inside && std::regex_match(line, m, compute))
      out.push_back(m[1]);
  }
  return out;
}

double makespan_of(const std::string& schedule) {
  std::smatch m;
  if (!std::regex_search(schedule, m,
                         std::regex(R"(one execution takes ([0-9.e+-]+) cost units)"))) {
    ADD_FAILURE() << "no makespan in " << schedule;
    return 0;
  }
  return std::stod(m[1]);
}

TEST_F(Profile, MeasuredCostsOrderAGraphOtherwiseThanUnitCostsAndShortenIt) {
  // a binds left (behind b's 3 ms stage) before right (behind c's quick one).
  const std::string trace = temp_path("reorder.json");
  {
    cg::LaunchOptions options;
    options.profile = trace;
    auto graph = cg::launch<&reorder>(options);
    for (int i = 0; i < 15; ++i)
      EXPECT_EQ(graph.execute(i).get(), std::make_tuple(i, i));
  }
  int status = -1;
  const std::string costs = temp_path("reorder.costs.json");
  std::ofstream(costs) << run(std::string(CG_PROFILE_TOOL) + " costs " + trace, status);
  ASSERT_EQ(status, 0);

  const std::string unit = schedule_of("reorder", "--schedule=cost");
  const std::string measured = schedule_of("reorder", "--schedule=cost --costs=" + costs);
  const std::string bound = schedule_of("reorder", "--schedule=bind --costs=" + costs);
  EXPECT_EQ(computes_of(unit, "a"), (std::vector<std::string>{"a.left", "a.right"})) << unit;
  EXPECT_EQ(computes_of(measured, "a"), (std::vector<std::string>{"a.right", "a.left"}))
      << measured;
  // Under the measured costs: ~3 + 2 ms (right runs while b works) against
  // ~3 + 2 + 2 ms in bind order.
  EXPECT_LT(makespan_of(measured), 0.85 * makespan_of(bound)) << measured << bound;
  std::filesystem::remove(costs);
  std::filesystem::remove(trace);
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

TEST_F(Profile, CgProfileTimelinePicturesTheLastExecutions) {
  const std::string trace = diamond_trace("timeline.json", 6);
  int status = -1;
  const std::string svg =
      run(std::string(CG_PROFILE_TOOL) + " timeline " + trace + " --executions 2", status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_NE(svg.find(">graph 'diamond': executions 4 to 5, "), std::string::npos) << svg;
  // A box per operation of executions 4 and 5, as many as the trace holds.
  std::ifstream in(trace);
  const json events = json::parse(in)["traceEvents"];
  std::size_t operations = 0;
  for (const json& event : events)
    if (event["ph"] == "X" && event["args"]["execution"].get<int>() >= 4)
      ++operations;
  EXPECT_EQ(count(svg, "<rect class=\"op\""), operations);
  // A row per track, the driver's first.
  static const std::regex track(R"(<text class="track"[^>]*>(\w+)</text>)");
  std::vector<std::string> rows;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), track); it != std::sregex_iterator();
       ++it)
    rows.push_back((*it)[1]);
  EXPECT_EQ(rows, (std::vector<std::string>{"driver", "a", "b", "c"}));
  // A value's trips, per execution: the input to a and to b, a's and b's
  // results to c, c's to the driver.
  EXPECT_EQ(count(svg, "<line class=\"flow\""), 2u * 5u);
  EXPECT_NE(svg.find("<title>c.sum (execution 5): "), std::string::npos);

  EXPECT_EQ(
      run(std::string(CG_PROFILE_TOOL) + " timeline " + trace + " --executions 0 2>&1", status),
      "cg-profile: --executions takes a number from 1 to 999999, not '0'\n");
  EXPECT_EQ(status, 2);
  std::filesystem::remove(trace);
}

// Device work (a CUDA IPC copy, an NCCL transfer: recorded only on a GPU,
// tests/gpu) is on a GPU track of its actor's, tid 1000000 + the actor's,
// shown under it. cg-profile keeps it out of the actors' shares and the
// critical path, says how busy each GPU track was, and draws it. Here b's
// GPU track is added to a real trace by hand: 3 us of device work in
// execution 5.
TEST_F(Profile, CgProfileShowsAnActorsDeviceWorkOnItsGpuTrack) {
  const std::string trace = diamond_trace("gpu.json", 6);
  json document;
  {
    std::ifstream in(trace);
    document = json::parse(in);
  }
  double b_read_at = -1;
  for (const json& e : document["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == 2 && e["cat"] == "read" && e["args"]["execution"] == 5)
      b_read_at = e["ts"].get<double>();
  ASSERT_GE(b_read_at, 0) << "no READ of b's in execution 5";
  json& events = document["traceEvents"];
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", 1},
                    {"tid", 1000002},
                    {"args", {{"name", "b (GPU)"}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_sort_index"},
                    {"pid", 1},
                    {"tid", 1000002},
                    {"args", {{"sort_index", 5}}}});
  events.push_back({{"ph", "X"},
                    {"name", "GPU READ c0 (input #0)"},
                    {"cat", "device"},
                    {"pid", 1},
                    {"tid", 1000002},
                    {"ts", b_read_at},
                    {"dur", 3.0},
                    {"args", {{"execution", 5}, {"channel", 0}, {"bytes", 8}}}});
  std::ofstream(trace) << document.dump();

  int status = -1;
  const json summary =
      json::parse(run(std::string(CG_PROFILE_TOOL) + " summary " + trace + " --json", status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary["actors"].size(), 3u) << "a GPU track is no actor";
  ASSERT_EQ(summary["gpu_tracks"].size(), 1u);
  EXPECT_EQ(summary["gpu_tracks"][0]["track"], "b (GPU)");
  EXPECT_NEAR(summary["gpu_tracks"][0]["busy"].get<double>(),
              3.0 / summary["window_us"].get<double>(), 1e-9);
  for (const json& step : summary["critical_path"]["steps"])
    EXPECT_NE(step["track"], "b (GPU)");
  const std::string text = run(std::string(CG_PROFILE_TOOL) + " summary " + trace, status);
  EXPECT_NE(text.find("\nb (GPU)         "), std::string::npos) << text;
  EXPECT_NE(text.find("% busy with the ports' device work\n"), std::string::npos) << text;

  const std::string svg =
      run(std::string(CG_PROFILE_TOOL) + " timeline " + trace + " --executions 2", status);
  ASSERT_EQ(status, 0);
  static const std::regex row(R"(<text class="track"[^>]*>([^<]+)</text>)");
  std::vector<std::string> rows;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), row); it != std::sregex_iterator();
       ++it)
    rows.push_back((*it)[1]);
  EXPECT_EQ(rows, (std::vector<std::string>{"driver", "a", "b", "b (GPU)", "c"}));
  EXPECT_NE(svg.find("<title>GPU READ c0 (input #0) (execution 5): "), std::string::npos) << svg;
  std::filesystem::remove(trace);
}

// A short run: a's first READ waits from launch (0 us) for the first
// execute() (1000 us). The window is from there to the last operation
// (1020 us), and a's READ counts only its last 2 us.
TEST_F(Profile, CgProfileSummaryCountsFromTheFirstExecutionNotFromLaunch) {
  const std::string path = temp_path("short-run.json");
  auto slice = [](const char* name, const char* category, int tid, double ts, double dur,
                  int channel) {
    json args = {{"execution", 0}};
    if (channel >= 0)
      args["channel"] = channel;
    return json{{"ph", "X"},  {"name", name}, {"cat", category}, {"pid", 1},
                {"tid", tid}, {"ts", ts},     {"dur", dur},      {"args", args}};
  };
  const json trace = {
      {"otherData", {{"graph", "short"}}},
      {"traceEvents",
       {{{"ph", "M"},
         {"name", "thread_name"},
         {"pid", 1},
         {"tid", 0},
         {"args", {{"name", "driver"}}}},
        {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "a"}}}},
        slice("READ c0 (input #0)", "read", 1, 0, 1002, 0),
        slice("execute", "execute", 0, 1000, 2, -1),
        slice("WRITE c0 (input #0)", "write", 0, 1000, 1, 0),
        slice("a.f", "compute", 1, 1002, 10, -1),
        slice("WRITE c1 (a.f)", "write", 1, 1012, 2, 1),
        slice("get", "get", 0, 1002, 18, -1),
        slice("READ c1 (a.f)", "read", 0, 1002, 18, 1)}}};
  std::ofstream(path) << trace.dump();
  int status = -1;
  const json summary =
      json::parse(run(std::string(CG_PROFILE_TOOL) + " summary " + path + " --json", status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary["window_start_us"].get<double>(), 1000.0);
  EXPECT_EQ(summary["window_us"].get<double>(), 20.0);
  ASSERT_EQ(summary["actors"].size(), 1u);
  EXPECT_EQ(
      summary["actors"][0],
      (json{{"actor", "a"}, {"compute", 0.5}, {"read_wait", 0.1}, {"write", 0.1}, {"idle", 0.3}}));
  EXPECT_EQ(summary["bubble_fraction"].get<double>(), 0.5);
  const std::string text = run(std::string(CG_PROFILE_TOOL) + " summary " + path, status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(text.substr(0, text.find('\n', text.find('\n') + 1) + 1),
            "graph 'short': 20.0 us profiled, from the first execution (t=1000.0 us)\n"
            "actor             compute  read wait    write     idle\n")
      << text;
  EXPECT_NE(text.find("\na                   50.0%      10.0%    10.0%    30.0%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nbubble fraction: 50.0% "), std::string::npos) << text;
  std::filesystem::remove(path);
}

// Every flow arrow of a real run starts (at its WRITE) no later than it ends
// (at its READ), though a READ may wait from long before its WRITE: the
// actors wait from launch for the first execution, and here for each next.
TEST_F(Profile, EveryFlowOfAProfiledRunStartsInItsWriteAndNoLaterThanItEnds) {
  const std::string path = temp_path("flows.json");
  constexpr int kExecutions = 16;
  {
    cg::LaunchOptions options;
    options.profile = path;
    auto graph = cg::launch<&diamond>(options);
    for (int i = 0; i < kExecutions; ++i) {
      ASSERT_EQ(graph.execute(i).get(), 2 * i + 2);
      std::this_thread::sleep_for(std::chrono::microseconds(500 * (i % 3)));
    }
  }
  const json trace = read_json(path);
  std::filesystem::remove(path);
  std::map<std::uint64_t, json> starts;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "s")
      starts[e["id"].get<std::uint64_t>()] = e;
  ASSERT_EQ(starts.size(), 5u * kExecutions);
  std::size_t ends = 0;
  for (const json& f : trace["traceEvents"]) {
    if (f["ph"] != "f")
      continue;
    ++ends;
    const json& s = starts.at(f["id"].get<std::uint64_t>());
    EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>()) << s << " -> " << f;
    // Bound to a WRITE of its channel on its writer's track.
    bool in_write = false;
    for (const json& w : track(trace, s["tid"].get<int>()))
      in_write |= w["cat"] == "write" && w["name"] == "WRITE " + s["name"].get<std::string>() &&
                  w["ts"].get<double>() <= s["ts"].get<double>() &&
                  s["ts"].get<double>() <= w["ts"].get<double>() + w["dur"].get<double>();
    EXPECT_TRUE(in_write) << s;
  }
  EXPECT_EQ(ends, starts.size());
}

TEST_F(Profile, CgProfileRefusesWhatIsNotATrace) {
  const std::string path = temp_path("not-a-trace.json");
  std::ofstream(path) << "{\"format\": \"cg-costs\"}";
  int status = -1;
  const std::string out = run(std::string(CG_PROFILE_TOOL) + " summary " + path + " 2>&1", status);
  EXPECT_EQ(status, 2);
  EXPECT_EQ(out, "cg-profile: '" + path + "' is not a Chrome trace (no \"traceEvents\" array)\n");
  EXPECT_EQ(run(std::string(CG_PROFILE_TOOL) + " costs /nonexistent.json 2>&1", status),
            "cg-profile: cannot read '/nonexistent.json'\n");
  EXPECT_EQ(status, 2);
  run(std::string(CG_PROFILE_TOOL) + " 2>&1", status);
  EXPECT_EQ(status, 2);
  std::filesystem::remove(path);
}

// The trace of `executions` of same_actor launched with `given` (and a
// profile file); four events an execution on each track.
json same_actor_trace(int executions, const cg::LaunchOptions& given) {
  const std::string path = temp_path("same_actor.json");
  {
    cg::LaunchOptions options = given;
    options.profile = path;
    auto graph = cg::launch<&same_actor>(options);
    for (int i = 0; i < executions; ++i)
      EXPECT_EQ(graph.execute(i).get(), i + 2);
  }
  const json trace = read_json(path);
  std::filesystem::remove(path);
  return trace;
}

json dropped_after(int executions, const cg::LaunchOptions& given) {
  return same_actor_trace(executions, given)["otherData"]["dropped_events"];
}

TEST_F(Profile, ARingKeepsTheLastExecutionsAndCountsWhatItDropped) {
  cg::LaunchOptions options;
  options.profile_executions = 3;
  const json trace = same_actor_trace(10, options);
  // a: READ, two computes of one method told apart, WRITE; the driver:
  // WRITE, execute, READ, get. Four events an execution each: 40 made, 12 kept.
  EXPECT_EQ(trace["otherData"]["dropped_events"], (json{{"a", 28}, {"driver", 28}}));
  const std::vector<json> events = track(trace, 1);
  ASSERT_EQ(events.size(), 12u);
  const std::vector<std::string> expected = scheduled_names("same_actor", "a");
  EXPECT_EQ(expected, (std::vector<std::string>{"READ c0 (input #0)", "a.add_one#1", "a.add_one#2",
                                                "WRITE c1 (a.add_one#2)"}));
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["name"], expected[i % 4]);
    EXPECT_EQ(events[i]["args"]["execution"], 7 + i / 4);
  }
  EXPECT_EQ(events[1]["args"]["loc"], source_line("auto once = a.bind"));
  EXPECT_EQ(events[2]["args"]["loc"], source_line("g.output(a.bind<&Calculator::add_one>(once))"));
}

// Once a future is asked for, a collector thread reads the results, into
// a ring of its own: the driver's track still shows each execution's READ,
// after get() has taken the first ones itself, and counts what both rings
// dropped.
TEST_F(Profile, ResultsReadForFuturesAreOnTheDriversTrackToo) {
  const std::string path = temp_path("same_actor_futures.json");
  {
    cg::LaunchOptions options;
    options.profile = path;
    options.profile_executions = 4;
    auto graph = cg::launch<&same_actor>(options);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(graph.execute(i).get(), i + 2);
    for (int i = 3; i < 10; ++i)
      ASSERT_EQ(graph.execute(i).get_future().get(), i + 2);
  }
  const json trace = read_json(path);
  std::filesystem::remove(path);
  // The caller's ring (4 events an execution, 16 kept): WRITE and execute
  // of each, READ and get of the first 3: 26 made, the last 16 kept (from
  // execution 2's READ on). The collector's (one event an execution, 4
  // kept): the READs of executions 3 to 9.
  EXPECT_EQ(trace["otherData"]["dropped_events"]["driver"], 10 + 3);
  std::map<std::string, std::vector<int>> executions; // name -> executions kept, in time order
  for (const json& e : track(trace, 0))
    executions[e["name"]].push_back(e["args"]["execution"]);
  EXPECT_EQ(executions,
            (std::map<std::string, std::vector<int>>{{"WRITE c0 (input #0)", {3, 4, 5, 6, 7, 8, 9}},
                                                     {"execute", {3, 4, 5, 6, 7, 8, 9}},
                                                     {"READ c1 (a.add_one#2)", {2, 6, 7, 8, 9}},
                                                     {"get", {2}}}));
}

TEST_F(Profile, RingsKeepTenThousandExecutionsUnlessTheOptionsOrTheEnvironmentSayOtherwise) {
  {
    cg_test::ScopedEnv unset("CG_PROFILE_EXECUTIONS", nullptr);
    EXPECT_EQ(dropped_after(10'002, {}), (json{{"a", 8}, {"driver", 8}}));
  }
  cg_test::ScopedEnv env("CG_PROFILE_EXECUTIONS", "3");
  EXPECT_EQ(dropped_after(10, {}), (json{{"a", 28}, {"driver", 28}}));
  cg::LaunchOptions five; // the options win
  five.profile_executions = 5;
  EXPECT_EQ(dropped_after(10, five), (json{{"a", 20}, {"driver", 20}}));
}

TEST_F(Profile, AnExecutionCountInTheEnvironmentThatIsNoneIsRefused) {
  cg::LaunchOptions options;
  options.record_profile = true;
  for (const char* bad : {"0", "ten", "-3", "12 ", "4294967296"}) {
    cg_test::ScopedEnv env("CG_PROFILE_EXECUTIONS", bad);
    try {
      auto graph = cg::launch<&same_actor>(options);
      ADD_FAILURE() << "launched with CG_PROFILE_EXECUTIONS=" << bad;
    } catch (const cg::LaunchError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("the environment variable CG_PROFILE_EXECUTIONS is '") + bad +
                    "'; it must be a number of executions from 1 to 4294967295 (or unset)");
    }
  }
  // Without a profile it is not read.
  cg_test::ScopedEnv env("CG_PROFILE_EXECUTIONS", "ten");
  auto graph = cg::launch<&same_actor>();
  EXPECT_EQ(graph.execute(1).get(), 3);
}

// Rings larger than the memory left are refused at launch, saying how much
// of the segment the profile takes and how to ask for less.
TEST_F(Profile, RingsLargerThanTheMemoryLeftAreALaunchErrorSayingHowToAskForFewer) {
  cg::LaunchOptions options;
  options.record_profile = true;
  options.profile_executions = 4'294'967'295;
  try {
    auto graph = cg::launch<&same_actor>(options);
    FAIL() << "launched with rings for 4294967295 executions";
  } catch (const cg::LaunchError& e) {
    // same_actor: 4 events an execution on a's ring and the driver's, 1 on
    // its collector's; 40 bytes each: 1.4 TiB.
    EXPECT_TRUE(std::regex_match(
        e.what(),
        std::regex("cannot create the channels of graph 'same_actor': cg: cannot reserve 1\\.4 "
                   "TiB of shared memory for 'memfd:cg\\.same_actor': [0-9.]+ [KMGT]iB is what "
                   "the memory available \\(MemAvailable in /proc/meminfo\\) leaves: Cannot "
                   "allocate memory; the profile's rings of 4294967295 executions take 1\\.4 TiB "
                   "of it \\(fewer: LaunchOptions::profile_executions or "
                   "CG_PROFILE_EXECUTIONS\\)")))
        << e.what();
  }
}

TEST_F(Profile, StatsCountEveryTaskAndEveryExecutionsLatency) {
  cg::LaunchOptions options;
  options.record_profile = true; // no file
  auto graph = cg::launch<&same_actor>(options);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(graph.execute(i).get(), i + 2);
  const cg::GraphStats stats = graph.stats();
  EXPECT_EQ(stats.graph, "same_actor");
  EXPECT_EQ(stats.dropped_events, 0u);
  ASSERT_EQ(stats.tasks.size(), 2u);
  EXPECT_EQ(stats.tasks[0].task, "a.add_one#1");
  EXPECT_EQ(stats.tasks[0].loc, source_line("auto once = a.bind"));
  EXPECT_EQ(stats.tasks[0].compute.count, 20u);
  EXPECT_EQ(stats.tasks[0].read_wait.count, 20u);
  EXPECT_EQ(stats.tasks[1].task, "a.add_one#2");
  EXPECT_EQ(stats.tasks[1].compute.count, 20u);
  EXPECT_EQ(stats.tasks[1].read_wait.count, 0u); // its input comes from a.add_one#1, in process
  EXPECT_EQ(stats.latency.count, 20u);
  EXPECT_GT(stats.latency.p50_us, 0);
  EXPECT_LE(stats.latency.p50_us, stats.latency.p90_us);
  EXPECT_LE(stats.latency.p90_us, stats.latency.p99_us);
  EXPECT_NE(cg::format_stats(stats).find("a.add_one#1        compute         20 "),
            std::string::npos)
      << cg::format_stats(stats);
}

TEST_F(Profile, CgProfileInTheEnvironmentWritesOneFilePerGraph) {
  const std::string pattern = temp_path("{graph}.json");
  cg_test::ScopedEnv env("CG_PROFILE", pattern.c_str());
  {
    auto graph = cg::launch<&same_actor>();
    EXPECT_EQ(graph.execute(1).get(), 3);
    // What is recorded so far, on demand.
    const std::string now = temp_path("now.json");
    graph.write_profile(now);
    EXPECT_EQ(track(read_json(now), 1).size(), 4u);
    std::filesystem::remove(now);
  }
  const std::string written = temp_path("same_actor.json");
  EXPECT_EQ(read_json(written)["otherData"]["graph"], "same_actor");
  std::filesystem::remove(written);
}

TEST_F(Profile, WriteProfileWithoutAProfileSaysHowToRecordOne) {
  cg_test::ScopedEnv env("CG_PROFILE", nullptr);
  auto graph = cg::launch<&same_actor>();
  try {
    graph.write_profile(temp_path("never.json"));
    FAIL() << "expected cg::Error";
  } catch (const cg::Error& e) {
    EXPECT_STREQ(e.what(), "graph 'same_actor' records no profile: launch it with "
                           "cg::LaunchOptions::profile or the environment variable CG_PROFILE "
                           "set to a file (or LaunchOptions::record_profile)");
  }
  EXPECT_FALSE(std::filesystem::exists(temp_path("never.json")));
}

TEST_F(Profile, AProfileThatCannotBeWrittenIsAnErrorNamingTheFile) {
  cg::LaunchOptions options;
  options.profile = temp_path("unused.json");
  auto graph = cg::launch<&same_actor>(options);
  try {
    graph.write_profile("/nonexistent-directory/trace.json");
    FAIL() << "expected cg::Error";
  } catch (const cg::Error& e) {
    EXPECT_STREQ(e.what(), "cannot write the profile of graph 'same_actor' to "
                           "'/nonexistent-directory/trace.json': No such file or directory");
  }
  graph.teardown();
  std::filesystem::remove(temp_path("unused.json"));
}

// A trace of diamond, 10 executions, recording one in 4 (`options` says how,
// or the environment does).
json sampled_diamond_trace(const std::string& name, cg::LaunchOptions options) {
  const std::string path = temp_path(name);
  {
    options.profile = path;
    auto graph = cg::launch<&diamond>(options);
    for (int i = 0; i < 10; ++i)
      EXPECT_EQ(graph.execute(i).get(), 2 * i + 2);
    const cg::GraphStats stats = graph.stats();
    EXPECT_EQ(stats.profile_every, 4u);
    EXPECT_EQ(stats.tasks.size(), 3u);
    for (const cg::TaskStats& task : stats.tasks)
      EXPECT_EQ(task.compute.count, 3u) << task.task; // executions 0, 4 and 8
    EXPECT_EQ(stats.latency.count, 3u);
    const std::string table = cg::format_stats(stats);
    EXPECT_NE(table.find("graph 'diamond'\n1 in 4 executions recorded: counts are of those, "
                         "percentiles over them\n"),
              std::string::npos)
        << table;
  }
  const json trace = read_json(path);
  std::filesystem::remove(path);
  return trace;
}

// Executions 0, 4 and 8 of 10, whole: on every track each recorded
// execution has every operation of its schedule, in order, and no other
// execution has any.
void expect_one_in_4_whole(const json& trace) {
  EXPECT_EQ(trace["otherData"]["profile_every"], 4);
  EXPECT_EQ(trace["otherData"]["dropped_events"],
            (json{{"a", 0}, {"b", 0}, {"c", 0}, {"driver", 0}}));
  const std::map<std::string, int> tids = thread_ids(trace);
  for (const std::string actor : {"a", "b", "c"}) {
    SCOPED_TRACE("actor " + actor);
    const std::vector<std::string> expected = scheduled_names("diamond", actor);
    ASSERT_FALSE(expected.empty());
    const std::vector<json> events = track(trace, tids.at(actor));
    ASSERT_EQ(events.size(), expected.size() * 3);
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i]["name"], expected[i % expected.size()]) << i;
      EXPECT_EQ(events[i]["args"]["execution"], 4 * (i / expected.size())) << i;
    }
  }
  std::map<std::string, std::vector<int>> driver; // name -> executions, in time order
  for (const json& e : track(trace, 0))
    driver[e["name"]].push_back(e["args"]["execution"]);
  EXPECT_EQ(driver, (std::map<std::string, std::vector<int>>{{"WRITE c0 (input #0)", {0, 4, 8}},
                                                             {"execute", {0, 4, 8}},
                                                             {"READ c3 (c.sum)", {0, 4, 8}},
                                                             {"get", {0, 4, 8}}}));
}

TEST_F(Profile, OneExecutionInFourIsRecordedWholeAsProcessesAndAsThreads) {
  for (const cg::Mode mode : {cg::Mode::processes, cg::Mode::threads}) {
    SCOPED_TRACE(mode == cg::Mode::threads ? "threads" : "processes");
    cg::LaunchOptions options;
    options.mode = mode;
    options.profile_every = 4;
    expect_one_in_4_whole(sampled_diamond_trace("one_in_4.json", options));
  }
}

TEST_F(Profile, OneExecutionInFourIsRecordedWholeWhenTheEnvironmentSaysSo) {
  cg_test::ScopedEnv env("CG_PROFILE_EVERY", "4");
  for (const cg::Mode mode : {cg::Mode::processes, cg::Mode::threads}) {
    SCOPED_TRACE(mode == cg::Mode::threads ? "threads" : "processes");
    cg::LaunchOptions options;
    options.mode = mode;
    expect_one_in_4_whole(sampled_diamond_trace("one_in_4_env.json", options));
  }
}

TEST_F(Profile, CgProfileSaysASampledProfileIsSampledAndScalesItsShares) {
  const std::string path = temp_path("sampled.json");
  {
    cg::LaunchOptions options;
    options.profile = path;
    options.profile_every = 4;
    auto graph = cg::launch<&diamond>(options);
    for (int i = 0; i < 10; ++i)
      ASSERT_EQ(graph.execute(i).get(), 2 * i + 2);
  }
  int status = -1;
  const json summary =
      json::parse(run(std::string(CG_PROFILE_TOOL) + " summary " + path + " --json", status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary["profile_every"], 4);
  EXPECT_EQ(summary["critical_path"]["execution"], 8); // the last recorded
  for (const json& actor : summary["actors"]) {
    const double total = actor["compute"].get<double>() + actor["read_wait"].get<double>() +
                         actor["write"].get<double>() + actor["idle"].get<double>();
    EXPECT_NEAR(total, 1.0, 1e-6) << actor;
  }
  const std::string text = run(std::string(CG_PROFILE_TOOL) + " summary " + path, status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("\n1 in 4 executions recorded: the shares below are the recorded "
                      "executions' time times 4\n"),
            std::string::npos)
      << text;
  const std::string costs =
      run(std::string(CG_PROFILE_TOOL) + " costs " + path + " 2>&1 >/dev/null", status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(costs, "cg-profile: 1 in 4 executions recorded: the medians are of those\n");
  const std::string svg =
      run(std::string(CG_PROFILE_TOOL) + " timeline " + path + " --executions 2", status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(svg.find("graph 'diamond': executions 4 to 8"), std::string::npos) << svg;
  EXPECT_NE(svg.find(" (1 in 4 executions recorded)</text>"), std::string::npos) << svg;
  std::filesystem::remove(path);
}

TEST_F(Profile, ASampleThatIsNoneIsRefusedNamingTheFieldOrTheVariable) {
  for (const std::uint32_t bad : {0u, 1'000'001u, 4'294'967'295u}) {
    cg::LaunchOptions options;
    options.record_profile = true;
    options.profile_every = bad;
    try {
      auto graph = cg::launch<&same_actor>(options);
      ADD_FAILURE() << "launched with profile_every " << bad;
    } catch (const cg::LaunchError& e) {
      EXPECT_EQ(std::string(e.what()), "cg::LaunchOptions::profile_every is " +
                                           std::to_string(bad) +
                                           "; it must be from 1 (every execution) to 1000000");
    }
  }
  cg::LaunchOptions options;
  options.record_profile = true;
  for (const char* bad : {"0", "eight", "-3", "8 ", "1000001", "99999999999"}) {
    cg_test::ScopedEnv env("CG_PROFILE_EVERY", bad);
    try {
      auto graph = cg::launch<&same_actor>(options);
      ADD_FAILURE() << "launched with CG_PROFILE_EVERY=" << bad;
    } catch (const cg::LaunchError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("the environment variable CG_PROFILE_EVERY is '") + bad +
                    "'; it must be a number from 1 (every execution) to 1000000 (or unset)");
    }
  }
}

} // namespace
