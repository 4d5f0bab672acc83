// targets_test.cpp - the benchmarks' judge (targets.hpp) says met only where a
// figure meets its target, and the targets are the project's.
#include "targets.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using cg_bench::judge;
using cg_bench::target;
using cg_bench::Verdict;

TEST(Targets, ALatencyMeetsItsTargetOnlyAtOrBelowTheBaselineTimesTheLimit) {
  const cg_bench::Target& round_trip = target("round_trip"); // <= 1.0x OpenMPI
  EXPECT_EQ(judge(round_trip, 0.40, 0.40), Verdict::met);
  EXPECT_EQ(judge(round_trip, 0.41, 0.40), Verdict::missed);
  const cg_bench::Target& remote = target("remote_round_trip"); // <= 1.2x
  EXPECT_EQ(judge(remote, 12.0, 10.0), Verdict::met);
  EXPECT_EQ(judge(remote, 12.1, 10.0), Verdict::missed);
}

TEST(Targets, ABandwidthMeetsItsTargetOnlyAtOrAboveTheBaselineTimesTheLimit) {
  const cg_bench::Target& large_hop = target("large_hop"); // >= 0.95x memcpy
  EXPECT_EQ(judge(large_hop, 9.5, 10.0), Verdict::met);
  EXPECT_EQ(judge(large_hop, 9.4, 10.0), Verdict::missed);
}

TEST(Targets, AbsoluteLimitsAreTheDesignsNotLooserOnes) {
  // The rows a benchmark once judged by 500,000 executions/s and 10 s.
  EXPECT_EQ(judge(target("pipelined"), 1'800'000), Verdict::missed);
  EXPECT_EQ(judge(target("pipelined"), 2'000'000), Verdict::met);
  EXPECT_EQ(judge(target("cgc_10k"), 2.48), Verdict::missed);
  EXPECT_EQ(judge(target("cgc_10k"), 1.9), Verdict::met);
  EXPECT_EQ(judge(target("cgc_1k"), 1.01), Verdict::missed);
  EXPECT_EQ(judge(target("scheduler_100k"), 0.99), Verdict::met);
}

TEST(Targets, TheSmallMessageRowsAreJudgedAtOnceOpenMpisTimeNotAbove) {
  // cg_bench judges fan-out 1->1, 1->2 and 1->4 by fan_out, and the one hop of
  // 8 B and of 1 KiB by small_hop, in both modes.
  EXPECT_EQ(judge(target("fan_out"), 2.0, 2.0), Verdict::met);
  EXPECT_EQ(judge(target("fan_out"), 2.02, 2.0), Verdict::missed);
  EXPECT_EQ(judge(target("small_hop"), 1.0, 1.0), Verdict::met);
  EXPECT_EQ(judge(target("small_hop"), 1.01, 1.0), Verdict::missed);
  EXPECT_EQ(cg_bench::describe(target("fan_out")), "<= 1x OpenMPI send/recv");
  EXPECT_EQ(cg_bench::describe(target("small_hop")), "<= 1x OpenMPI send + 8 B reply");
}

TEST(Targets, AnAddedCostMeetsItsTargetOnlyWithinTheAllowance) {
  const cg_bench::Target& python = target("python_round_trip"); // <= C++ + 2 us
  EXPECT_EQ(judge(python, 3.9, 2.0), Verdict::met);
  EXPECT_EQ(judge(python, 4.1, 2.0), Verdict::missed);
}

TEST(Targets, AFailedMeasurementIsNeverMet) {
  // A baseline that did not run leaves the row unjudged, never met; our own
  // figure of 0 is a run that failed.
  EXPECT_EQ(judge(target("round_trip"), 0.4, 0), Verdict::unjudged);
  EXPECT_EQ(judge(target("large_hop"), 0, 10.0), Verdict::missed);
  EXPECT_EQ(judge(target("pipelined"), 0), Verdict::missed);
  EXPECT_STREQ(cg_bench::word(Verdict::unjudged), "no baseline");
  EXPECT_STREQ(cg_bench::word(Verdict::missed), "MISSED");
}

TEST(Targets, DescriptionsSayTheLimitAndTheBaseline) {
  EXPECT_EQ(cg_bench::describe(target("round_trip")), "<= 1x OpenMPI ping-pong");
  EXPECT_EQ(cg_bench::describe(target("large_hop")), ">= 0.95x one memcpy");
  EXPECT_EQ(cg_bench::describe(target("cgc_10k")), "<= 2 s");
  EXPECT_EQ(cg_bench::describe(target("pipelined")), ">= 2000000 exec/s");
  EXPECT_EQ(cg_bench::describe(target("python_round_trip")), "<= the C++ driver + 2 us");
}

TEST(Targets, EveryTargetHasOneNameAndALimit) {
  std::set<std::string> names;
  for (const cg_bench::Target& t : cg_bench::targets) {
    EXPECT_TRUE(names.insert(std::string(t.id)).second) << t.id << " is named twice";
    EXPECT_GT(t.limit, 0) << t.id;
    EXPECT_FALSE(t.what.empty()) << t.id;
  }
}

} // namespace
