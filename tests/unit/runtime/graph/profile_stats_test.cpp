// profile_stats_test.cpp - percentiles and attribution of a profile's events
// (graph/profile_stats.hpp), from hand-made rings.
#include "actor/segment.hpp"
#include "graph/profile_stats.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace {

using cg::detail::ProfiledOp;
using cg::detail::ProfileEvent;
using cg::detail::ProfileTrack;

int run_nothing(cg::ActorProcess&) { return 0; }

// Actor a reads c0 and c1, computes twice (the second without a read of its
// own), writes c2 to the driver.
constexpr std::array<cg::detail::ActorSpec, 1> kActors{{{"a", &run_nothing}}};
constexpr std::array<int, 1> kReadByA{0};
constexpr std::array<int, 1> kReadByDriver{-1};
constexpr std::array<cg::detail::ChannelSpec, 3> kChannels{{
    {-1, kReadByA},
    {-1, kReadByA},
    {0, kReadByDriver},
}};
constexpr std::array<std::uint32_t, 2> kInputs{0, 1};
constexpr std::array<std::uint32_t, 1> kOutputs{2};
constexpr std::array<const char*, 3> kValues{"input #0", "input #1", "a.second"};
constexpr std::array<cg::detail::ComputeName, 2> kComputes{
    {{"a.first", "g.cg.cpp:10"}, {"a.second", "g.cg.cpp:11"}}};
constexpr std::array<std::span<const cg::detail::ComputeName>, 1> kActorComputes{kComputes};
constexpr cg::detail::GraphSpec kSpec{"g",      kActors, kChannels, kInputs,
                                      kOutputs, {},      false,     {kValues, kActorComputes}};

constexpr std::int64_t kUs = 1000;

ProfileEvent event(ProfiledOp op, std::uint32_t index, std::uint64_t execution,
                   std::int64_t start_us, std::int64_t duration_us) {
  return {execution, start_us * kUs, (start_us + duration_us) * kUs, 4, op, 0, index};
}

TEST(ProfileStats, PercentilesAreNearestRankAndReadsCountTowardsTheNextCompute) {
  // 100 executions: the first compute takes e + 1 us, its two reads 1 and
  // 2 us; the second takes 7 us; the driver sees each execution in 50 us.
  ProfileTrack actor{"a", {}, 3}, driver{"driver", {}, 0};
  for (std::uint64_t e = 0; e < 100; ++e) {
    const std::int64_t t = static_cast<std::int64_t>(e) * 100;
    actor.events.push_back(event(ProfiledOp::read, 0, e, t, 1));
    actor.events.push_back(event(ProfiledOp::read, 1, e, t + 1, 2));
    actor.events.push_back(
        event(ProfiledOp::compute, 0, e, t + 3, static_cast<std::int64_t>(e) + 1));
    actor.events.push_back(event(ProfiledOp::compute, 1, e, t + 90, 7));
    actor.events.push_back(event(ProfiledOp::write, 2, e, t + 97, 1));
    driver.events.push_back(event(ProfiledOp::write, 0, e, t, 0));
    driver.events.push_back(event(ProfiledOp::execute, 0, e, t, 0));
    driver.events.push_back(event(ProfiledOp::read, 2, e, t + 40, 10));
  }
  const std::vector<ProfileTrack> tracks{actor, driver};
  const cg::GraphStats stats = cg::detail::profile_stats(kSpec, tracks);

  EXPECT_EQ(stats.graph, "g");
  EXPECT_EQ(stats.dropped_events, 3u);
  ASSERT_EQ(stats.tasks.size(), 2u);
  const cg::TaskStats& first = stats.tasks[0];
  EXPECT_EQ(first.task, "a.first");
  EXPECT_EQ(first.actor, "a");
  EXPECT_EQ(first.loc, "g.cg.cpp:10");
  EXPECT_EQ(first.compute.count, 100u);
  EXPECT_DOUBLE_EQ(first.compute.p50_us, 50);
  EXPECT_DOUBLE_EQ(first.compute.p90_us, 90);
  EXPECT_DOUBLE_EQ(first.compute.p99_us, 99);
  EXPECT_EQ(first.read_wait.count, 100u);
  EXPECT_DOUBLE_EQ(first.read_wait.p50_us, 3); // both reads together
  const cg::TaskStats& second = stats.tasks[1];
  EXPECT_EQ(second.task, "a.second");
  EXPECT_EQ(second.compute.count, 100u);
  EXPECT_DOUBLE_EQ(second.compute.p99_us, 7);
  EXPECT_EQ(second.read_wait.count, 0u); // it reads nothing of its own
  EXPECT_EQ(stats.latency.count, 100u);
  EXPECT_DOUBLE_EQ(stats.latency.p50_us, 50);

  EXPECT_EQ(cg::format_stats(stats),
            "graph 'g' (older events dropped)\n"
            "task               what         count     p50 us     p90 us     p99 us  bound at\n"
            "a.first            compute        100      50.00      90.00      99.00  g.cg.cpp:10\n"
            "a.first            read wait      100       3.00       3.00       3.00\n"
            "a.second           compute        100       7.00       7.00       7.00  g.cg.cpp:11\n"
            "execute -> result  latency        100      50.00      50.00      50.00\n");
}

// Executions 0, 8 and 16 of a profile of one in 8: the counts are of those
// three, and the table says so above them.
TEST(ProfileStats, ASampledProfilesCountsSayTheyAreOfTheRecordedExecutions) {
  ProfileTrack actor{"a", {}, 0}, driver{"driver", {}, 0};
  for (std::uint64_t e = 0; e < 24; e += 8) {
    const std::int64_t t = static_cast<std::int64_t>(e) * 100;
    actor.events.push_back(event(ProfiledOp::compute, 0, e, t + 3, 2));
    actor.events.push_back(event(ProfiledOp::compute, 1, e, t + 5, 4));
    driver.events.push_back(event(ProfiledOp::execute, 0, e, t, 0));
    driver.events.push_back(event(ProfiledOp::read, 2, e, t + 10, 10));
  }
  const std::vector<ProfileTrack> tracks{actor, driver};
  const cg::GraphStats stats = cg::detail::profile_stats(kSpec, tracks, 8);
  EXPECT_EQ(stats.profile_every, 8u);
  EXPECT_EQ(stats.tasks[0].compute.count, 3u);
  EXPECT_EQ(stats.latency.count, 3u);
  EXPECT_EQ(cg::format_stats(stats),
            "graph 'g'\n"
            "1 in 8 executions recorded: counts are of those, percentiles over them\n"
            "task               what         count     p50 us     p90 us     p99 us  bound at\n"
            "a.first            compute          3       2.00       2.00       2.00  g.cg.cpp:10\n"
            "a.second           compute          3       4.00       4.00       4.00  g.cg.cpp:11\n"
            "execute -> result  latency          3      20.00      20.00      20.00\n");
  EXPECT_EQ(cg::detail::profile_stats(kSpec, tracks).profile_every, 1u) << "unsampled by default";
}

TEST(ProfileStats, NothingRecordedIsNoCountAndNoPercentile) {
  const std::vector<ProfileTrack> tracks{{"a", {}, 0}, {"driver", {}, 0}};
  const cg::GraphStats stats = cg::detail::profile_stats(kSpec, tracks);
  ASSERT_EQ(stats.tasks.size(), 2u);
  EXPECT_EQ(stats.tasks[0].compute.count, 0u);
  EXPECT_EQ(stats.tasks[0].compute.p50_us, 0);
  EXPECT_EQ(stats.latency.count, 0u);
}

TEST(ProfileRings, HoldTheEventsOfEachParticipantsExecutions) {
  // a: two reads, two computes, one write; the driver: two input writes,
  // execute, one result read, get; its collector thread: one result read.
  EXPECT_EQ(cg::detail::profile_events_per_execution(kSpec, 0), 5u);
  EXPECT_EQ(cg::detail::profile_events_per_execution(kSpec, 1), 5u);
  EXPECT_EQ(cg::detail::profile_events_per_execution(kSpec, 2), 1u);
  // An actor with no channel and no names still gets a ring of one event
  // per execution (a ring of none would be a division by zero).
  static constexpr std::array<cg::detail::ActorSpec, 1> kLonely{{{"lonely", &run_nothing}}};
  static constexpr cg::detail::GraphSpec kLonelySpec{"lonely", kLonely, {}, {}, {}, {}};
  EXPECT_EQ(cg::detail::profile_events_per_execution(kLonelySpec, 0), 1u);
}

TEST(ProfileRings, AreFoundThroughTheSegmentsTableAndCheckedAgainstItsSize) {
  cg::detail::SegmentContents contents;
  contents.geometry.max_in_flight = 2;
  contents.geometry.slot_bytes = 256;
  contents.geometry.profile_executions = 7;
  std::vector<std::byte> memory(cg::detail::segment_bytes(kSpec, contents) + 64);
  // Aligned as a mapping is.
  const auto offset = (64 - reinterpret_cast<std::uintptr_t>(memory.data()) % 64) % 64;
  std::span<std::byte> segment(memory.data() + offset, memory.size() - 64);
  const cg::detail::WrittenSegment written = cg::detail::write_segment(segment, kSpec, contents);
  // a, the driver, the driver's collector thread.
  for (std::uint32_t who = 0; who < 3; ++who) {
    cg::detail::ProfileRing* ring = cg::detail::profile_ring(segment, *written.header, who);
    ASSERT_NE(ring, nullptr) << who;
    EXPECT_EQ(ring->capacity, who < 2 ? 7 * 5u : 7u) << who;
    EXPECT_EQ(ring->written.load(), 0u);
  }
  EXPECT_EQ(cg::detail::profile_ring(segment, *written.header, 3), nullptr); // no such participant
  // A ring claiming more events than the segment holds is not used.
  cg::detail::profile_ring(segment, *written.header, 1)->capacity = segment.size();
  EXPECT_EQ(cg::detail::profile_ring(segment, *written.header, 1), nullptr);
  // Without a profile there are no rings.
  contents.geometry.profile_executions = 0;
  std::vector<std::byte> plain(cg::detail::segment_bytes(kSpec, contents) + 64);
  const auto plain_offset = (64 - reinterpret_cast<std::uintptr_t>(plain.data()) % 64) % 64;
  std::span<std::byte> plain_segment(plain.data() + plain_offset, plain.size() - 64);
  const auto unprofiled = cg::detail::write_segment(plain_segment, kSpec, contents);
  EXPECT_EQ(cg::detail::profile_ring(plain_segment, *unprofiled.header, 0), nullptr);
}

} // namespace
