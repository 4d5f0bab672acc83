// large_values_test.cpp - what a large value costs the driver: memory bounded
// by the values in flight, and buffers reused from one execution to the next.
//
// Each test measures this process's peak resident memory (VmHWM) from a
// reset (writing 5 to /proc/self/clear_refs), so the tests before it do not
// count. Not under ASan: its quarantine keeps freed memory (256 MiB).
#include "../support/proc_status.hpp"
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

using LargeValues = cg_test::NoLeftovers;

constexpr long kMiB = 1024; // in KiB, what /proc/self/status counts in
// These tests measure memory, not speed: a loaded machine running them under
// AddressSanitizer took more than get()'s default 10 s for 200 MiB.
constexpr std::chrono::milliseconds kSlowGet{120'000};

// Starts a new peak: VmHWM is VmRSS from here on.
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::vector<std::uint8_t> pattern(std::size_t bytes) {
  std::vector<std::uint8_t> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i)
    v[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));
  return v;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPeakIsMeaningful = false;
#else
constexpr bool kPeakIsMeaningful = true;
#endif

// 200 MiB echoed through a chain of two actors. Beyond the input it was
// given, the driver holds at most the input's encoded copy (in its channel,
// until the first actor has read it and given its pages back) and the
// decoded result: two copies. The result as it arrived (in the last actor's
// channel, mapped to be read) is let go piece by piece as it is decoded. In
// threads mode the actors are in the process too (a reader shares its
// writer's mapping): three, when a has not yet freed its argument as b
// decodes its own (memory_peak_test.cpp bounds both modes to three).
TEST_F(LargeValues, TheDriverHoldsTwoCopiesOfALargeValueBeyondItsInput) {
  auto graph = cg::launch<&bytes_chain>();
  (void)graph.execute(pattern(16)).get();
  const std::vector<std::uint8_t> input = pattern(std::size_t{200} << 20);
  reset_peak();
  const long before = cg_test::status_kib("VmRSS");
  std::vector<std::uint8_t> output = graph.execute(input).get(kSlowGet);
  const long peak = cg_test::status_kib("VmHWM") - before;
  EXPECT_TRUE(output == input);
  const long copies = cg_test::threads_mode() ? 3 : 2;
  if (kPeakIsMeaningful) {
    EXPECT_LE(peak, copies * 200 * kMiB + 32 * kMiB)
        << "200 MiB through a chain: the driver's peak grew by " << peak / kMiB << " MiB";
  }
}

// The same through a future: the result is copied out of its channel by the
// collector thread, then decoded by get(). The copy lets the channel's pages
// go as it grows, but it and the decoded result both exist for a moment:
// three copies at most, in threads mode too.
TEST_F(LargeValues, AFutureHoldsThreeCopiesOfALargeValueBeyondItsInput) {
  auto graph = cg::launch<&bytes_chain>();
  (void)graph.execute(pattern(16)).get();
  const std::vector<std::uint8_t> input = pattern(std::size_t{200} << 20);
  reset_peak();
  const long before = cg_test::status_kib("VmRSS");
  std::future<std::vector<std::uint8_t>> future = graph.execute(input).get_future();
  ASSERT_EQ(future.wait_for(kSlowGet), std::future_status::ready);
  std::vector<std::uint8_t> output = future.get();
  const long peak = cg_test::status_kib("VmHWM") - before;
  EXPECT_TRUE(output == input);
  const long copies = 3;
  if (kPeakIsMeaningful) {
    EXPECT_LE(peak, copies * 200 * kMiB + 32 * kMiB)
        << "200 MiB through a chain and a future: the driver's peak grew by " << peak / kMiB
        << " MiB";
  }
}

// Twelve large values one after the other: the channels reuse one buffer
// each instead of filling every slot of their rings with one. In threads
// mode the last actor's buffer is out of the count at the start (the driver
// let its pages go as it decoded, from the mapping it shares with b) and in
// it again once b writes the next value: one buffer more.
TEST_F(LargeValues, OneLargeValueAtATimeKeepsOneBufferPerChannel) {
  auto graph = cg::launch<&bytes_chain>();
  const std::vector<std::uint8_t> input = pattern(std::size_t{32} << 20);
  (void)graph.execute(input).get(kSlowGet);
  reset_peak();
  const long before = cg_test::status_kib("VmRSS");
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(graph.execute(input).get(kSlowGet) == input) << "execution " << i;
  const long grown = cg_test::status_kib("VmHWM") - before;
  const long buffers = cg_test::threads_mode() ? 3 : 2;
  if (kPeakIsMeaningful) {
    EXPECT_LE(grown, buffers * 32 * kMiB)
        << "12 x 32 MiB through a chain: the driver's peak grew by " << grown / kMiB
        << " MiB (one buffer per slot: 640 MiB)";
  }
}

} // namespace
