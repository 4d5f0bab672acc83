// profile_sampling_test.cpp - the driver's test of which executions a
// sampled profile records (graph/runtime_profiling.hpp's ProfileSampling),
// which does without a division: it must say what profile_records() says,
// for every sample and execution number, the largest ones included.
#include "graph/runtime_profiling.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using cg::detail::ProfileSampling;

TEST(ProfileSampling, RecordsTheExecutionsWhoseNumberIsAMultipleOfTheSample) {
  const ProfileSampling four(4);
  std::vector<std::uint64_t> recorded;
  for (std::uint64_t n = 0; n < 13; ++n)
    if (four.records(n))
      recorded.push_back(n);
  EXPECT_EQ(recorded, (std::vector<std::uint64_t>{0, 4, 8, 12}));
  EXPECT_EQ(four.every(), 4u);
  EXPECT_EQ(ProfileSampling().every(), 1u);
  EXPECT_EQ(ProfileSampling(0).every(), 1u);
}

TEST(ProfileSampling, SaysWhatADivisionSaysForEverySampleAndExecution) {
  std::vector<std::uint32_t> samples;
  for (std::uint32_t every = 1; every <= 130; ++every)
    samples.push_back(every);
  for (std::uint32_t every : {192u, 1000u, 1024u, 4096u, 65'537u, 999'999u, 1'000'000u})
    samples.push_back(every);
  for (const std::uint32_t every : samples) {
    const ProfileSampling sampling(every);
    auto agrees = [&](std::uint64_t n) {
      EXPECT_EQ(sampling.records(n), cg::detail::profile_records(n, every))
          << "execution " << n << ", 1 in " << every;
    };
    for (std::uint64_t n = 0; n < 3000; ++n)
      agrees(n);
    // Around multiples far up, and the largest numbers there are.
    for (std::uint64_t m : {std::uint64_t{1} << 32, std::uint64_t{1} << 40, UINT64_MAX / every - 1,
                            UINT64_MAX / every}) {
      const std::uint64_t n = m * every;
      for (std::uint64_t d = 0; d < 3; ++d) {
        agrees(n + d);
        agrees(n - d);
      }
    }
    for (std::uint64_t d = 0; d < 3; ++d)
      agrees(UINT64_MAX - d);
  }
}

} // namespace
