// fault_corruption_test.cpp - stray writes into a live graph's shared memory
// become clear errors at the driver, never a crash or a garbage value.
//
// The test finds the driver's mapping of the graph's segment (an anonymous
// memfd, named "cg.<graph>" in /proc/self/maps), walks its channels by their
// headers and flips bytes of a published result before get() reads it.
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include "actor/segment.hpp"
#include "shm/channel_layout.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Corruption = cg_test::NoLeftovers;

/// The driver's mapping of graph `graph`'s segment.
std::span<std::byte> graph_segment(const std::string& graph) {
  const std::span<std::byte> segment = cg_test::graph_segment_mapping(graph);
  if (segment.empty())
    ADD_FAILURE() << "no mapping of graph '" << graph << "' in this process";
  return segment;
}

/// The channels of a segment, in order, found by walking their headers.
std::vector<cg::detail::ChannelHeader*> channels_of(std::span<std::byte> segment) {
  std::vector<cg::detail::ChannelHeader*> channels;
  if (segment.empty())
    return channels;
  auto align64 = [](std::size_t n) { return (n + 63) & ~std::size_t{63}; };
  const auto& header = *reinterpret_cast<const cg::detail::SegmentHeader*>(segment.data());
  std::size_t offset = align64(sizeof(cg::detail::SegmentHeader));
  for (std::uint32_t i = 0; i < header.channel_count; ++i) {
    auto* channel = reinterpret_cast<cg::detail::ChannelHeader*>(segment.data() + offset);
    channels.push_back(channel);
    offset += align64(channel->footprint);
  }
  return channels;
}

cg::detail::SlotHeader* first_slot(cg::detail::ChannelHeader* channel) {
  return cg::detail::slot_header(channel, channel->readers, channel->slot_stride, 0);
}

/// Waits until the first message of `channel` is published.
bool first_message_published(cg::detail::ChannelHeader* channel) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (first_slot(channel)->sequence.load() != 1) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// The message of a cg::Error that `get` throws, or what went wrong instead.
template <class Get> std::string error_of(Get get) {
  try {
    get();
    return "no error";
  } catch (const cg::TaskError& e) {
    return std::string("a TaskError: ") + e.what();
  } catch (const cg::Error& e) {
    return e.what();
  }
}

TEST_F(Corruption, ImpossibleSizeInAResultSlotIsAClearErrorNotACrash) {
  auto graph = cg::launch<&repeater>();
  auto ref = graph.execute(5);
  auto channels = channels_of(graph_segment("repeater"));
  ASSERT_EQ(channels.size(), 2u);
  ASSERT_TRUE(first_message_published(channels[1]));
  first_slot(channels[1])->size.store(0xFFFF'FFF0u);
  const std::string expected = "result channel 1 of graph 'repeater' is corrupt: its shared "
                               "memory holds impossible values; the graph cannot execute any more";
  EXPECT_EQ(error_of([&] { ref.get(); }), expected);
  EXPECT_EQ(error_of([&] { graph.execute(1); }), expected) << "the graph stays stopped";
}

TEST_F(Corruption, CorruptLengthPrefixOfAResultIsAClearErrorAndTheGraphStaysUsable) {
  auto graph = cg::launch<&repeater>();
  auto ref = graph.execute(5);
  auto channels = channels_of(graph_segment("repeater"));
  ASSERT_EQ(channels.size(), 2u);
  ASSERT_TRUE(first_message_published(channels[1]));
  const std::uint64_t length = 6; // one more than the 5 bytes that follow
  std::memcpy(cg::detail::message_payload(first_slot(channels[1])), &length, sizeof length);
  EXPECT_EQ(error_of([&] { ref.get(); }),
            "the result of execution 0 of graph 'repeater' cannot be decoded (corrupted in shared "
            "memory?): cg: length prefix 6 exceeds the 5 remaining bytes");
  EXPECT_EQ(graph.execute(3).get(), "xxx");
}

TEST_F(Corruption, OverflowReferenceNamingAnotherBufferIsAClearErrorNotGarbage) {
  cg::LaunchOptions options;
  options.slot_bytes = 1024;
  auto graph = cg::launch<&repeater>(options);
  auto ref = graph.execute(1 << 20);
  auto channels = channels_of(graph_segment("repeater"));
  ASSERT_EQ(channels.size(), 2u);
  ASSERT_TRUE(first_message_published(channels[1]));
  cg::detail::SlotHeader* slot = first_slot(channels[1]);
  ASSERT_EQ(slot->storage.load(), static_cast<std::uint32_t>(cg::detail::Storage::overflow));
  slot->overflow_generation.store(slot->overflow_generation.load() + 1);
  EXPECT_EQ(error_of([&] { ref.get(); }),
            "result channel 1 of graph 'repeater' is corrupt: its shared memory holds impossible "
            "values; the graph cannot execute any more");
}

} // namespace
