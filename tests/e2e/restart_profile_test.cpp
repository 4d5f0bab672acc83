// restart_profile_test.cpp - what a profiled graph's statistics, trace and cg-profile say of an
// actor restarted in place.
//
// What is promised (docs/failures.md, "Restarts"; docs/profiling.md):
// GraphStats::restarts counts each actor's restarts as GraphHandle::restarts()
// does, and format_stats() prints a line for each actor restarted; the
// trace carries one "restart" instant on the actor's track, its args the
// restart's count, cause and the executions lost, which are exactly those
// whose get() ended in ActorDiedError with restarted() true; cg-profile's
// summary reports it; and the restarted actor's operations carry the
// executions they ran, numbered as the driver numbers them, not from 0 again.
// Threads mode has no restarts: its statistics name none.
#include "e2e_restart_graphs.cg.hpp"
#include "leftovers.hpp"
#include "restart_stream.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

using namespace cg_test::restarts;
using nlohmann::json;
using RestartProfiles = cg_test::NoLeftovers;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("cg-restart-profile-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// The options of the tests that read a restart in the profile: recorded, and
// one restart allowed.
cg::LaunchOptions profiled_once() {
  cg::LaunchOptions options = restart_options();
  options.record_profile = true;
  options.max_restarts = 1;
  return options;
}

// Kills actor a of counted_pair in the middle of a stream (killed_in_stream)
// and writes the profile to `path` once the graph is done: what each get() gave.
std::vector<Outcome> killed_a_profiled(const cg::LaunchOptions& options, const std::string& path) {
  Clock::duration recovered{};
  auto graph = cg::launch<&counted_pair>(options);
  std::vector<Outcome> outcomes = killed_in_stream(graph, "counted_pair", "a", recovered);
  graph.write_profile(path);
  return outcomes;
}

// What `command` printed on stdout; `status` its exit status.
std::string run(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    out.append(buffer, n);
  const int raw = ::pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

// cg-profile: the one CG_TEST_PROFILE_TOOL names, if set (break_restarts.sh
// gives one with a broken summary), else the one the build made.
std::string profile_tool() {
  const char* tool = std::getenv("CG_TEST_PROFILE_TOOL");
  return tool != nullptr ? tool : CG_PROFILE_TOOL;
}

// The tid of the track named `name` (its "thread_name" metadata), or -1.
int track_of(const json& trace, const std::string& name) {
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name)
      return e["tid"].get<int>();
  return -1;
}

TEST_F(RestartProfiles, StatsCountEachRestartOfAnActorAndTheTableSaysHowMany) {
  cg::LaunchOptions options = restart_options();
  options.record_profile = true;
  if (cg_test::threads_mode()) {
    auto graph = cg::launch<&counted_pair>(options);
    EXPECT_EQ(graph.execute(Values{0}).get(), (Values{0, 1, 1}));
    const cg::GraphStats stats = graph.stats();
    EXPECT_EQ(stats.restarts, (std::map<std::string, std::uint32_t>{}));
    EXPECT_EQ(cg::format_stats(stats).find("restarted"), std::string::npos)
        << cg::format_stats(stats);
    return;
  }
  options.actor_max_restarts = {{"b", 2}};
  auto graph = cg::launch<&counted_pair>(options);
  std::int64_t x = 0;
  EXPECT_EQ(graph.execute(Values{x++}).get(), (Values{0, 1, 1}));
  // None yet: no line for it.
  EXPECT_EQ(graph.stats().restarts, (std::map<std::string, std::uint32_t>{}));
  EXPECT_EQ(cg::format_stats(graph.stats()).find("restarted"), std::string::npos);
  ASSERT_TRUE(kill_until_value(graph, "counted_pair", "b", x));
  const cg::GraphStats once = graph.stats();
  EXPECT_EQ(once.restarts, (std::map<std::string, std::uint32_t>{{"b", 1}}));
  EXPECT_TRUE(cg::format_stats(once).ends_with("\nactor 'b' restarted 1 time\n"))
      << cg::format_stats(once);
  ASSERT_TRUE(kill_until_value(graph, "counted_pair", "b", x));
  const cg::GraphStats twice = graph.stats();
  EXPECT_EQ(twice.restarts, (std::map<std::string, std::uint32_t>{{"b", 2}}));
  EXPECT_EQ(twice.restarts, graph.restarts());
  EXPECT_TRUE(cg::format_stats(twice).ends_with("\nactor 'b' restarted 2 times\n"))
      << cg::format_stats(twice);
}

TEST_F(RestartProfiles, TheTraceMarksARestartOnTheActorsTrackWithTheExecutionsItLost) {
  const cg::LaunchOptions options = profiled_once();
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&counted_pair>(options);
  const std::string path = temp_path("marked.json");
  const std::vector<Outcome> outcomes = killed_a_profiled(options, path);
  const Lost lost = lost_executions(outcomes);
  ASSERT_EQ(lost.from, kKillAt);
  ASSERT_GE(lost.until, kKillAt + kInFlight);
  std::ifstream in(path);
  const json trace = json::parse(in);
  const int a = track_of(trace, "a");
  ASSERT_GT(a, 0);
  std::vector<json> marks;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "i")
      marks.push_back(e);
  ASSERT_EQ(marks.size(), 1u) << trace["traceEvents"].dump();
  const json& mark = marks[0];
  EXPECT_EQ(mark["name"], "restart");
  EXPECT_EQ(mark["tid"], a);
  EXPECT_EQ(mark["s"], "t");
  EXPECT_EQ(mark["args"], (json{{"count", 1},
                                {"of", 1},
                                {"cause", "killed by signal 9 (Killed)"},
                                {"lost_executions",
                                 std::to_string(lost.from) + "-" + std::to_string(lost.until - 1)},
                                {"lost", lost.until - lost.from}}));
  // Where the dead process stopped and the new one began: after a's last
  // COMPUTE before the loss, before its first after it.
  double last_before = -1, first_after = -1;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == a && e["cat"] == "compute") {
      const std::int64_t execution = e["args"]["execution"].get<std::int64_t>();
      const double ts = e["ts"].get<double>();
      if (execution < lost.from)
        last_before = std::max(last_before, ts);
      else if (first_after < 0 || ts < first_after)
        first_after = ts;
    }
  EXPECT_LT(last_before, mark["ts"].get<double>());
  EXPECT_GT(first_after, mark["ts"].get<double>());

  int status = -1;
  const std::string summary = run(profile_tool() + " summary " + path + " 2>&1", status);
  EXPECT_EQ(status, 0) << summary;
  const std::regex line("\nrestart of actor 'a' \\(1 of 1\\) at t=[0-9]+\\.[0-9] us: killed by "
                        "signal 9 \\(Killed\\); executions lost: " +
                        std::to_string(lost.from) + "-" + std::to_string(lost.until - 1) + " \\(" +
                        std::to_string(lost.until - lost.from) + "\\)\n$");
  EXPECT_TRUE(std::regex_search(summary, line)) << summary;
  const json summed = json::parse(run(profile_tool() + " summary " + path + " --json", status));
  ASSERT_EQ(summed["restarts"].size(), 1u) << summed.dump(2);
  EXPECT_EQ(summed["restarts"][0]["actor"], "a");
  EXPECT_EQ(summed["restarts"][0]["lost"], lost.until - lost.from);
  EXPECT_EQ(summed["restarts"][0]["at_us"], mark["ts"]);
  std::filesystem::remove(path);
}

TEST_F(RestartProfiles, ARestartedActorsOperationsCarryTheExecutionsItRanNotCountsFromZero) {
  const cg::LaunchOptions options = profiled_once();
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&counted_pair>(options);
  const std::string path = temp_path("numbered.json");
  const std::vector<Outcome> outcomes = killed_a_profiled(options, path);
  const Lost lost = lost_executions(outcomes);
  ASSERT_EQ(lost.from, kKillAt);
  std::ifstream in(path);
  const json trace = json::parse(in);
  const int a = track_of(trace, "a");
  // Each execution a ran, once, in order: those before the loss by the dead
  // process, those after it by the new one.
  std::vector<std::int64_t> ran, expected;
  std::vector<json> computes;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == a && e["cat"] == "compute")
      computes.push_back(e);
  std::stable_sort(computes.begin(), computes.end(), [](const json& l, const json& r) {
    return l["ts"].get<double>() < r["ts"].get<double>();
  });
  for (const json& e : computes)
    ran.push_back(e["args"]["execution"].get<std::int64_t>());
  for (std::int64_t x = 0; x < kExecutions; ++x)
    if (x < lost.from || x >= lost.until)
      expected.push_back(x);
  EXPECT_EQ(ran, expected);
  std::filesystem::remove(path);
}

} // namespace
