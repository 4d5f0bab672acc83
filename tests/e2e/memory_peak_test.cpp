// memory_peak_test.cpp - what one large value in flight costs the driver's
// process at most, and what it keeps afterwards: in threads mode the actors'
// memory is this process's too, so the whole chain counts.
//
// A 200 MiB value goes driver -> a -> b -> driver (graph bytes_chain). The
// peak is this process's VmHWM from a reset (5 to /proc/self/clear_refs),
// less what it held before (the input among it). Under a sanitizer the value
// is 16 MiB and its memory goes unmeasured: AddressSanitizer's quarantine
// keeps what is freed (256 MiB), ThreadSanitizer's shadow grows with every
// byte touched; what teardown releases is checked in every build.
#include "../support/proc_status.hpp"
#include "../support/runtime_memfds.hpp"
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <future>
#include <string>
#include <vector>

namespace {

using MemoryPeak = cg_test::NoLeftovers;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMeasured = false;
constexpr std::size_t kValueBytes = std::size_t{16} << 20;
#else
constexpr bool kMeasured = true;
constexpr std::size_t kValueBytes = std::size_t{200} << 20;
#endif

constexpr long kValueKiB = static_cast<long>(kValueBytes >> 10); // as /proc counts
// What the runtime, the allocator and the test's own bookkeeping may add to
// the copies counted below.
constexpr long kSlackKiB = 32 * 1024;
// Memory, not speed: a loaded machine takes its time over 200 MiB.
constexpr std::chrono::milliseconds kSlowGet{120'000};

void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::vector<std::uint8_t> pattern(std::size_t bytes) {
  std::vector<std::uint8_t> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i)
    v[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));
  return v;
}

std::string mib(long kib) { return std::to_string(kib / 1024) + " MiB"; }

// The peak while a value crosses the chain, and what is still held once its
// result is in the caller's hands: at most three copies at once (the one
// being read, the one being made, and one on its way to be freed), and the
// result alone afterwards.
struct Costs {
  long peak = 0;
  long after = 0;
};

void expect_within(const Costs& costs, const char* how) {
  if (!kMeasured)
    return;
  EXPECT_LE(costs.peak, 3 * kValueKiB + kSlackKiB)
      << mib(kValueKiB) << " through a chain, " << how << ": the process's peak grew by "
      << mib(costs.peak) << ", more than three copies of the value";
  EXPECT_LE(costs.after, kValueKiB + kSlackKiB)
      << mib(kValueKiB) << " through a chain, " << how << ": " << mib(costs.after)
      << " more is held once the result is in, more than the result itself";
}

TEST_F(MemoryPeak, ALargeValueThroughAChainAndGetPeaksAtThreeCopiesAndKeepsOnlyTheResult) {
  auto graph = cg::launch<&bytes_chain>();
  (void)graph.execute(pattern(16)).get(); // the actors' start-up is not the value's
  const std::vector<std::uint8_t> input = pattern(kValueBytes);
  reset_peak();
  const long before = cg_test::status_kib("VmRSS");
  const std::vector<std::uint8_t> output = graph.execute(input).get(kSlowGet);
  const Costs costs{cg_test::status_kib("VmHWM") - before, cg_test::status_kib("VmRSS") - before};
  EXPECT_TRUE(output == input);
  expect_within(costs, "taken by get()");
}

TEST_F(MemoryPeak, ALargeValueThroughAChainAndAFuturePeaksAtThreeCopiesAndKeepsOnlyTheResult) {
  auto graph = cg::launch<&bytes_chain>();
  (void)graph.execute(pattern(16)).get();
  const std::vector<std::uint8_t> input = pattern(kValueBytes);
  reset_peak();
  const long before = cg_test::status_kib("VmRSS");
  std::future<std::vector<std::uint8_t>> future = graph.execute(input).get_future();
  ASSERT_EQ(future.wait_for(kSlowGet), std::future_status::ready);
  const std::vector<std::uint8_t> output = future.get();
  // The collector thread lets go of the bytes it decoded the value from
  // just after it sets the future; it collects the next execution only
  // once it has.
  (void)graph.execute(pattern(16)).get();
  const Costs costs{cg_test::status_kib("VmHWM") - before, cg_test::status_kib("VmRSS") - before};
  EXPECT_TRUE(output == input);
  expect_within(costs, "taken through a future");
}

// What a graph holds goes with teardown(), not with the graph object (a
// graph kept for its statistics, or a ref, holds none of it): its shared
// memory, its descriptors of it, and a large result collected for a ref
// that never took it.
TEST_F(MemoryPeak, TeardownReleasesEveryBufferDescriptorAndUntakenResultWhileTheGraphLives) {
  const std::vector<std::uint8_t> input = pattern(kValueBytes);
  const long before = cg_test::status_kib("VmRSS");
  auto graph = cg::launch<&bytes_chain>();
  ASSERT_TRUE(graph.execute(input).get(kSlowGet) == input);
  cg::Ref<std::vector<std::uint8_t>> untaken = graph.execute(input);
  ASSERT_TRUE(graph.execute(input).get(kSlowGet) == input); // collects `untaken` on the way
  std::future<std::vector<std::uint8_t>> future = graph.execute(input).get_future();
  ASSERT_EQ(future.wait_for(kSlowGet), std::future_status::ready);
  ASSERT_TRUE(future.get() == input);
  ASSERT_NE(cg_test::memfd_mappings(), std::vector<std::string>{})
      << "a running graph maps its segment: the checks below would prove nothing";
  graph.teardown();
  EXPECT_EQ(cg_test::memfd_mappings(), std::vector<std::string>{})
      << "teardown() returned with the runtime's shared memory still mapped";
  EXPECT_EQ(cg_test::memfd_descriptors(), std::vector<std::string>{})
      << "teardown() returned with descriptors of the runtime's shared memory open";
  const long kept = cg_test::status_kib("VmRSS") - before;
  if (kMeasured) {
    EXPECT_LE(kept, kSlackKiB) << "teardown() returned with " << mib(kept)
                               << " more resident than before launch";
  }
  EXPECT_THROW((void)untaken.get(), cg::ChannelClosedError);
}

} // namespace
