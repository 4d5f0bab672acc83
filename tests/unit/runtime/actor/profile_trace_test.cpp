// profile_trace_test.cpp - device work in a profile (actor/profile_trace.hpp):
// its events keep their nanoseconds when the rest turn from ticks, and the
// trace shows them on a GPU track of their actor's; and the flow arrows from
// each WRITE to its READ, which never end before they start.
#include "actor/profile_trace.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using cg::detail::ProfiledOp;
using cg::detail::ProfileEvent;
using cg::detail::ProfileTrack;

int run_nothing(cg::ActorProcess&) { return 0; }

// input -> a --c1--> b -> driver: a writes c1 over CUDA IPC, b reads it.
constexpr std::array<cg::detail::ActorSpec, 2> kActors{{{"a", &run_nothing}, {"b", &run_nothing}}};
constexpr std::array<int, 1> kReadByA{0};
constexpr std::array<int, 1> kReadByB{1};
constexpr std::array<int, 1> kReadByDriver{-1};
constexpr std::array<cg::detail::ChannelSpec, 3> kChannels{{
    {-1, kReadByA},
    {0, kReadByB},
    {1, kReadByDriver},
}};
constexpr std::array<std::uint32_t, 1> kInputs{0};
constexpr std::array<std::uint32_t, 1> kOutputs{2};
constexpr std::array<const char*, 3> kValues{"input #0", "a.make", "b.use"};
constexpr cg::detail::GraphSpec kSpec{"g",      kActors, kChannels, kInputs,
                                      kOutputs, {},      false,     {kValues, {}}};

ProfileEvent event(ProfiledOp op, std::uint32_t channel, std::int64_t start, std::int64_t end,
                   std::uint64_t bytes = 0) {
  return {0, start, end, bytes, op, 0, channel};
}

// Ticks at 2 ns each from the origin; device work in nanoseconds already.
TEST(ProfileTrace, DeviceWorkKeepsItsNanosecondsAndComesInTimeOrder) {
  ProfileTrack b{"b", {}, 0};
  b.events.push_back(event(ProfiledOp::read, 1, 100, 200));                    // ticks
  b.events.push_back(event(ProfiledOp::device_read, 1, 1'000'150, 1'000'180)); // ns
  b.events.push_back(event(ProfiledOp::compute, 0, 200, 300));                 // ticks
  std::vector<ProfileTrack> tracks{b};
  cg::detail::ticks_to_ns(tracks, {0, 1'000'000}, {1000, 1'002'000});
  const std::vector<ProfileEvent>& events = tracks[0].events;
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].op, ProfiledOp::device_read) << "first in time, once the rest are ns";
  EXPECT_EQ(events[0].start, 1'000'150) << "left as it was";
  EXPECT_EQ(events[0].end, 1'000'180);
  EXPECT_EQ(events[1].op, ProfiledOp::read);
  EXPECT_EQ(events[1].start, 1'000'200);
  EXPECT_EQ(events[1].end, 1'000'400);
  EXPECT_EQ(events[2].op, ProfiledOp::compute);
  EXPECT_EQ(events[2].start, 1'000'400);
}

TEST(ProfileTrace, DeviceWorkIsOnAGpuTrackOfItsActorsAndFlowsStayBetweenHostOperations) {
  // a writes c1 (host 10..20 us, its copy on the GPU 15..40 us); b reads it
  // (host 12..45 us, its copy on the GPU 41..44 us).
  ProfileTrack a{"a", {}, 0}, b{"b", {}, 0}, driver{"driver", {}, 0};
  a.events = {event(ProfiledOp::write, 1, 10'000, 20'000, 64),
              event(ProfiledOp::device_write, 1, 15'000, 40'000, 64)};
  b.events = {event(ProfiledOp::read, 1, 12'000, 45'000, 64),
              event(ProfiledOp::device_read, 1, 41'000, 44'000, 64)};
  std::vector<ProfileTrack> tracks{a, b, driver};
  std::ostringstream out;
  cg::detail::write_chrome_trace(out, kSpec, tracks);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  std::map<int, std::string> names;
  std::vector<nlohmann::json> slices, flows;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    else if (e["ph"] == "X")
      slices.push_back(e);
    else if (e["ph"] == "s" || e["ph"] == "f")
      flows.push_back(e);
  }
  EXPECT_EQ(
      names,
      (std::map<int, std::string>{
          {0, "driver"}, {1, "a"}, {2, "b"}, {1'000'001, "a (GPU)"}, {1'000'002, "b (GPU)"}}));
  ASSERT_EQ(slices.size(), 4u);
  std::map<std::string, nlohmann::json> by_name;
  for (const nlohmann::json& s : slices)
    by_name[s["name"].get<std::string>()] = s;
  const nlohmann::json& copy_out = by_name.at("GPU WRITE c1 (a.make)");
  EXPECT_EQ(copy_out["cat"], "device");
  EXPECT_EQ(copy_out["tid"], 1'000'001);
  EXPECT_EQ(copy_out["ts"].get<double>(), 5.0) << "microseconds from the earliest event (10 us)";
  EXPECT_EQ(copy_out["dur"].get<double>(), 25.0);
  EXPECT_EQ(copy_out["args"]["bytes"], 64);
  const nlohmann::json& copy_in = by_name.at("GPU READ c1 (a.make)");
  EXPECT_EQ(copy_in["tid"], 1'000'002);
  EXPECT_EQ(copy_in["dur"].get<double>(), 3.0);
  EXPECT_EQ(by_name.at("WRITE c1 (a.make)")["tid"], 1);
  // One flow, from a's WRITE to b's READ: device work is no flow's end.
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0]["tid"], 1);
  EXPECT_EQ(flows[1]["tid"], 2);
}

// A trace without device work has no GPU tracks.
TEST(ProfileTrace, NoDeviceWorkNoGpuTrack) {
  ProfileTrack a{"a", {}, 0}, b{"b", {}, 0}, driver{"driver", {}, 0};
  a.events = {event(ProfiledOp::write, 1, 10'000, 20'000, 64)};
  std::vector<ProfileTrack> tracks{a, b, driver};
  std::ostringstream out;
  cg::detail::write_chrome_trace(out, kSpec, tracks);
  EXPECT_EQ(out.str().find("(GPU)"), std::string::npos);
}

// The ("s", "f") timestamps, in trace microseconds, of the one flow of a
// trace where a writes c1 over `write` and b reads it over `read` (ns).
std::pair<double, double> flow_of(std::pair<std::int64_t, std::int64_t> write,
                                  std::pair<std::int64_t, std::int64_t> read) {
  ProfileTrack a{"a", {}, 0}, b{"b", {}, 0}, driver{"driver", {}, 0};
  a.events = {event(ProfiledOp::write, 1, write.first, write.second, 64)};
  b.events = {event(ProfiledOp::read, 1, read.first, read.second, 64)};
  std::vector<ProfileTrack> tracks{a, b, driver};
  std::ostringstream out;
  cg::detail::write_chrome_trace(out, kSpec, tracks);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  double from = -1, to = -1;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "s")
      from = e["ts"].get<double>();
    if (e["ph"] == "f")
      to = e["ts"].get<double>();
  }
  return {from, to};
}

TEST(ProfileTrace, AFlowLeavesTheMiddleOfItsWriteAndReachesTheMiddleOfItsRead) {
  // WRITE 10..20 us, READ 18..30 us; the earliest event (10 us) is 0.
  EXPECT_EQ(flow_of({10'000, 20'000}, {18'000, 30'000}), std::make_pair(5.0, 14.0));
}

TEST(ProfileTrace, AFlowToAReadThatWaitedFromBeforeTheWriteDoesNotEndBeforeItStarts) {
  // The READ waited from 2 us (its middle, 12 us, is before the WRITE's,
  // 15 us): the flow reaches it where it leaves the WRITE. The earliest
  // event (2 us) is 0.
  EXPECT_EQ(flow_of({10'000, 20'000}, {2'000, 22'000}), std::make_pair(13.0, 13.0));
  // Done at 14 us, before the WRITE's middle (the message was out before
  // the WRITE recorded its end): the flow leaves at the READ's end.
  EXPECT_EQ(flow_of({10'000, 20'000}, {2'000, 14'000}), std::make_pair(12.0, 12.0));
}

TEST(ProfileTrace, AFlowBetweenClocksThatDisagreeLeavesAtTheWritesStartAndDoesNotGoBack) {
  // Another host's READ ends (9 us) before the WRITE starts (10 us).
  EXPECT_EQ(flow_of({10'000, 20'000}, {4'000, 9'000}), std::make_pair(6.0, 6.0));
}

} // namespace
