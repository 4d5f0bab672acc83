// overflow_test.cpp - tests of the values larger than a channel's slot
// (cg/detail/channel.hpp, shm/overflow.hpp): delivered whole through overflow
// buffers to every reader, never truncated, nothing mapped or open once writer
// and reader are gone; buffers reused, remade larger, observed (for pinning),
// let go; a corrupted reference
// or a buffer the system refuses reported, not read or crashed on.
#include <cg/detail/channel.hpp>
#include <cg/serialize.hpp>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../../support/proc_status.hpp"
#include "../../../support/runtime_memfds.hpp"
#include "channel_fixture.hpp"
#include "shm/channel_layout.hpp"
#include "shm/overflow.hpp"
#include "shm/shm.hpp"

namespace {

using namespace channel_fixture;

// Fills `bytes` with a pattern that differs per position and per `seed`.
void fill_pattern(std::span<std::byte> bytes, std::uint32_t seed) {
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>((i * 131 + (i >> 12) + seed) & 0xFF);
}

// Index of the first byte that breaks the pattern, or -1.
long first_mismatch(std::span<const std::byte> bytes, std::uint32_t seed) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != static_cast<std::byte>((i * 131 + (i >> 12) + seed) & 0xFF))
      return static_cast<long>(i);
  }
  return -1;
}

cg::ChannelStatus write_pattern(cg::ChannelWriter& writer, std::size_t bytes, std::uint32_t seed,
                                cg::Deadline deadline = in(10s)) {
  std::span<std::byte> payload;
  const cg::ChannelStatus status = writer.acquire(bytes, payload, deadline);
  if (status != cg::ChannelStatus::ok)
    return status;
  EXPECT_EQ(payload.size(), bytes);
  fill_pattern(payload, seed);
  writer.publish(cg::MessageKind::value, bytes);
  return status;
}

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

TEST(Channel, ValueLargerThanASlotIsDeliveredWholeToEveryReader) {
  constexpr std::uint32_t readers = 2;
  TestChannel t({4, 1 * kKiB, readers});
  cg::ChannelWriter writer(t.channel);
  ASSERT_EQ(write_pattern(writer, 64 * kMiB, 1), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, "small again"), cg::ChannelStatus::ok);
  ASSERT_EQ(write_pattern(writer, 1 * kKiB + 1, 2), cg::ChannelStatus::ok)
      << "one byte past the slot";
  EXPECT_EQ(t.channel.config().slot_bytes, 1 * kKiB) << "the ring itself never changes";

  std::vector<std::thread> threads;
  std::vector<std::string> failures(readers);
  for (std::uint32_t r = 0; r < readers; ++r) {
    threads.emplace_back([&, r] {
      cg::ChannelReader reader(t.channel, r);
      cg::ChannelReader::Message m{};
      if (reader.acquire(m, in(10s)) != cg::ChannelStatus::ok || m.payload.size() != 64 * kMiB ||
          first_mismatch(m.payload, 1) != -1) {
        failures[r] = "64 MiB value";
        return;
      }
      reader.release();
      if (reader.acquire(m, in(10s)) != cg::ChannelStatus::ok || text_of(m) != "small again") {
        failures[r] = "small value after a large one";
        return;
      }
      reader.release();
      if (reader.acquire(m, in(10s)) != cg::ChannelStatus::ok || m.payload.size() != 1 * kKiB + 1 ||
          first_mismatch(m.payload, 2) != -1 || m.sequence != 2) {
        failures[r] = "slot_bytes + 1 value";
        return;
      }
      reader.release();
    });
  }
  for (std::thread& th : threads)
    th.join();
  for (std::uint32_t r = 0; r < readers; ++r)
    EXPECT_EQ(failures[r], "") << "reader " << r;
}

// A message whose large runs are still in its writer's memory
// (cg/detail/borrowed_runs.hpp) is whole in the ring once published where
// no stream sends it: readers here read the channel's copy, never the
// caller's memory.
TEST(Channel, ABorrowedMessageWithNoStreamToSendItIsCopiedWholeBeforeItIsPublished) {
  TestChannel t({4, 1 * kKiB, 1});
  cg::ChannelWriter writer(t.channel);
  std::vector<std::uint8_t> value(2 * kMiB);
  for (std::size_t i = 0; i < value.size(); ++i)
    value[i] = static_cast<std::uint8_t>(i * 13);
  std::span<std::byte> area;
  ASSERT_EQ(writer.acquire(cg::encoded_size(value), area, in(1s)), cg::ChannelStatus::ok);
  cg::detail::BorrowedRuns runs;
  cg::Encoder encoder(area, &runs);
  cg::encode(encoder, value);
  ASSERT_EQ(runs.count, 1u);
  writer.publish_borrowed(cg::MessageKind::value, encoder.written(), runs, in(1s));
  const std::vector<std::uint8_t> sent = value;
  std::fill(value.begin(), value.end(), std::uint8_t{0});
  cg::ChannelReader reader(t.channel, 0);
  cg::ChannelReader::Message m{};
  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(cg::decode_all<std::vector<std::uint8_t>>(m.payload), sent);
}

// A message in an overflow buffer says how its pages may be let go once read
// (cg::InputPaging, which the driver's decoder uses): this process's resident
// memory drops by the value, and reading it again finds the same bytes. A
// message in its slot has no paging.
TEST(Channel, AReaderMayLetThePagesOfALargeValueGoAndStillReadItAgain) {
  TestChannel t({2, 1 * kKiB, 1});
  cg::ChannelWriter writer(t.channel);
  ASSERT_EQ(write_pattern(writer, 32 * kMiB, 5), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, "small"), cg::ChannelStatus::ok);
  cg::ChannelReader reader(t.channel, 0);
  cg::ChannelReader::Message m{};
  ASSERT_EQ(reader.acquire(m, in(10s)), cg::ChannelStatus::ok);
  ASSERT_NE(m.paging, nullptr);
  ASSERT_EQ(first_mismatch(m.payload, 5), -1);
  const long before = cg_test::resident_kib();
  m.paging->let_go(m.payload.data(), m.payload.size());
  const long dropped = before - cg_test::resident_kib();
  EXPECT_GE(dropped, 31 * 1024) << "KiB let go of a 32 MiB value";
  EXPECT_EQ(first_mismatch(m.payload, 5), -1) << "read again after its pages went";
  reader.release();
  ASSERT_EQ(reader.acquire(m, in(10s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "small");
  EXPECT_EQ(m.paging, nullptr);
  reader.release();
}

TEST(Channel, SlotKeepsItsOverflowBufferWhileLargeEnoughAndReplacesItWithALargerOne) {
  TestChannel t({1, 256, 1});
  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  auto round_trip = [&](std::size_t bytes, std::uint32_t seed) {
    ASSERT_EQ(write_pattern(writer, bytes, seed), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
    EXPECT_EQ(m.payload.size(), bytes);
    EXPECT_EQ(first_mismatch(m.payload, seed), -1) << bytes << " bytes";
    reader.release();
  };
  EXPECT_EQ(header->overflow_generations.load(), 0u) << "small values need no buffer";
  round_trip(100, 1);
  EXPECT_EQ(header->overflow_generations.load(), 0u);
  round_trip(1 * kMiB, 2);
  EXPECT_EQ(header->overflow_generations.load(), 1u) << "the first large value makes the buffer";
  round_trip(300, 3);
  round_trip(1 * kMiB, 4);
  round_trip(1000, 5);
  EXPECT_EQ(header->overflow_generations.load(), 1u) << "reused while large enough";
  round_trip(3 * kMiB, 6);
  EXPECT_EQ(header->overflow_generations.load(), 2u) << "replaced by a larger one";
  round_trip(2 * kMiB, 7);
  EXPECT_EQ(header->overflow_generations.load(), 2u);
}

// Hears what a reader maps or a writer makes, and what either unmaps (the
// GPU ports pin these buffers).
class RecordingObserver final : public cg::detail::MappingObserver {
public:
  void mapped(std::span<const std::byte> mapping) noexcept override {
    live.insert(mapping.data());
    sizes.push_back(mapping.size());
  }
  void unmapping(std::span<const std::byte> mapping) noexcept override {
    EXPECT_EQ(live.erase(mapping.data()), 1u) << "unmapped without having been mapped";
    ++unmapped;
  }
  std::set<const std::byte*> live;
  std::vector<std::size_t> sizes;
  int unmapped = 0;
};

// Four values through a one-slot ring, `observe` called after the first:
// the observer hears of the first value's buffer then, of no new one for a
// small value or one as large, and of a larger one in place of the first.
template <class Observe>
void expect_told_of_each_buffer(RecordingObserver& observer, cg::ChannelWriter& writer,
                                cg::ChannelReader& reader, Observe observe) {
  auto round_trip = [&](std::size_t bytes, std::uint32_t seed) {
    ASSERT_EQ(write_pattern(writer, bytes, seed), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
    EXPECT_EQ(first_mismatch(m.payload, seed), -1);
    reader.release();
  };
  round_trip(1 * kMiB, 1); // before the observer comes
  observe();
  ASSERT_EQ(observer.sizes.size(), 1u) << "told of the buffer of before";
  EXPECT_GE(observer.sizes[0], 1 * kMiB);
  round_trip(100, 2);
  round_trip(1 * kMiB, 3);
  EXPECT_EQ(observer.sizes.size(), 1u) << "the same buffer: none new";
  round_trip(3 * kMiB, 4);
  ASSERT_EQ(observer.sizes.size(), 2u) << "a larger buffer";
  EXPECT_GE(observer.sizes[1], 3 * kMiB);
  EXPECT_EQ(observer.unmapped, 1) << "in place of the smaller one";
  EXPECT_EQ(observer.live.size(), 1u);
}

TEST(Channel, AnObserverHearsOfEveryOverflowMappingAndOfItsUnmappingBeforeItGoes) {
  TestChannel t({1, 256, 1});
  cg::ChannelWriter writer(t.channel);
  RecordingObserver observer;
  {
    cg::ChannelReader reader(t.channel, 0);
    expect_told_of_each_buffer(observer, writer, reader,
                               [&] { reader.observe_mappings(&observer); });
  }
  EXPECT_EQ(observer.unmapped, 2) << "the reader unmaps the rest when it goes";
  EXPECT_TRUE(observer.live.empty());
}

// The same on the writing side: the buffers a writer makes, each told again
// before it goes.
TEST(Channel, AWritersObserverHearsOfEveryBufferItMakesAndOfItsUnmappingBeforeItGoes) {
  TestChannel t({1, 256, 1});
  RecordingObserver observer;
  {
    cg::ChannelWriter writer(t.channel);
    cg::ChannelReader reader(t.channel, 0);
    expect_told_of_each_buffer(observer, writer, reader,
                               [&] { writer.observe_mappings(&observer); });
    cg::ChannelWriter moved = std::move(writer); // the observer goes with the buffers
    EXPECT_EQ(observer.unmapped, 1);
  }
  EXPECT_EQ(observer.unmapped, 2) << "the writer unmaps the rest when it goes";
  EXPECT_TRUE(observer.live.empty());
}

// The only reader of a value of overflow_released_from bytes or more gives
// the buffer's pages back as it releases the message (its process's resident
// memory drops by the value: writer and reader share the one mapping here),
// and the writer reserves them again for the next value, which arrives whole.
// A smaller value keeps its buffer's pages for the next.
TEST(Channel, TheOnlyReaderOfAVeryLargeValueGivesItsPagesBackAndTheNextArrivesWhole) {
  TestChannel t({2, 1 * kKiB, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  auto given_back = [&](std::size_t bytes, std::uint32_t seed) {
    EXPECT_EQ(write_pattern(writer, bytes, seed), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    EXPECT_EQ(reader.acquire(m, in(10s)), cg::ChannelStatus::ok);
    EXPECT_EQ(first_mismatch(m.payload, seed), -1) << bytes << " bytes, seed " << seed;
    const long before = cg_test::resident_kib();
    reader.release();
    return (before - cg_test::resident_kib()) / 1024; // MiB
  };
  const std::size_t large = cg::detail::overflow_released_from;
  EXPECT_GE(given_back(large, 1), 127) << "MiB given back of the first value";
  EXPECT_GE(given_back(large, 2), 127) << "MiB given back of the second, in the same buffer";
  EXPECT_EQ(given_back(large - kMiB, 3), 0) << "MiB given back of a value a MiB smaller";
  EXPECT_EQ(static_cast<cg::detail::ChannelHeader*>(t.memory.data())->overflow_generations.load(),
            1u)
      << "one buffer for all three";
}

// A buffer a GPU port pinned (an observer hears of it) keeps its pages:
// the writer's, and the reader's mapping.
TEST(Channel, AVeryLargeValueInABufferPinnedOnEitherSideKeepsItsPages) {
  for (const bool writer_side : {true, false}) {
    TestChannel t({2, 1 * kKiB, 1});
    cg::ChannelWriter writer(t.channel);
    cg::ChannelReader reader(t.channel, 0);
    RecordingObserver observer;
    if (writer_side)
      writer.observe_mappings(&observer);
    else
      reader.observe_mappings(&observer);
    ASSERT_EQ(write_pattern(writer, cg::detail::overflow_released_from, 4), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(10s)), cg::ChannelStatus::ok);
    const long before = cg_test::resident_kib();
    reader.release();
    EXPECT_LT(before - cg_test::resident_kib(), 1024)
        << "KiB given back of a buffer pinned by the " << (writer_side ? "writer" : "reader");
    writer.observe_mappings(nullptr);
    reader.observe_mappings(nullptr);
  }
}

// Mappings of overflow buffers in this process (writer's and readers' alike).
int overflow_mappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);)
    count += line.find("/memfd:cg.overflow") != std::string::npos;
  return count;
}

TEST(Channel, OneLargeValueAtATimeReusesOneBufferWhicheverSlotItGoesTo) {
  TestChannel t({10, 256, 1});
  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  for (std::uint32_t i = 0; i < 25; ++i) {
    ASSERT_EQ(write_pattern(writer, 1 * kMiB, i), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
    EXPECT_EQ(first_mismatch(m.payload, i), -1) << "message " << i;
    reader.release();
  }
  EXPECT_EQ(header->overflow_generations.load(), 1u) << "one buffer, not one per slot";
  EXPECT_EQ(overflow_mappings(), 1) << "the writer's, which a reader of its process shares";
}

TEST(Channel, EveryLargeValueInFlightHasItsOwnBufferAndTheyAreReused) {
  TestChannel t({4, 256, 1});
  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  for (std::uint32_t round = 0; round < 3; ++round) {
    for (std::uint32_t i = 0; i < 3; ++i)
      ASSERT_EQ(write_pattern(writer, 1 * kMiB, 10 * round + i), cg::ChannelStatus::ok);
    ASSERT_EQ(write_text(writer, "small"), cg::ChannelStatus::ok);
    for (std::uint32_t i = 0; i < 3; ++i) {
      cg::ChannelReader::Message m{};
      ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
      EXPECT_EQ(first_mismatch(m.payload, 10 * round + i), -1) << round << "." << i;
      reader.release();
    }
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
    EXPECT_EQ(text_of(m), "small");
    reader.release();
  }
  EXPECT_EQ(header->overflow_generations.load(), 3u) << "three in flight at most";
}

// A value acquired, written and acquired again before it is published (a
// graph's input tensor made in place, then encoded) finds what was written:
// the same buffer, although one that now fits as well has come free first.
TEST(Channel, AcquiringAgainBeforePublishingGivesTheSameAreaWithWhatWasWritten) {
  TestChannel t({4, 256, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  ASSERT_EQ(write_pattern(writer, 1 * kMiB, 1), cg::ChannelStatus::ok); // buffer 0, held by:
  cg::ChannelReader::Message first{};
  ASSERT_EQ(reader.acquire(first, in(1s)), cg::ChannelStatus::ok);
  std::span<std::byte> written;
  ASSERT_EQ(writer.acquire(1 * kMiB, written, in(1s)), cg::ChannelStatus::ok); // buffer 1
  fill_pattern(written, 2);
  reader.release(); // buffer 0 is free again, and as good a fit

  std::span<std::byte> again;
  ASSERT_EQ(writer.acquire(1 * kMiB, again, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(again.data(), written.data());
  std::span<std::byte> smaller;
  ASSERT_EQ(writer.acquire(512 * kKiB, smaller, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(smaller.data(), written.data()) << "a smaller value that needs a buffer too";
  ASSERT_EQ(writer.acquire(1 * kMiB, again, in(1s)), cg::ChannelStatus::ok);
  writer.publish(cg::MessageKind::value, 1 * kMiB);
  cg::ChannelReader::Message second{};
  ASSERT_EQ(reader.acquire(second, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(first_mismatch(second.payload, 2), -1);
  reader.release();

  std::span<std::byte> in_slot;
  ASSERT_EQ(writer.acquire(100, in_slot, in(1s)), cg::ChannelStatus::ok);
  std::span<std::byte> slot_again;
  ASSERT_EQ(writer.acquire(200, slot_again, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(slot_again.data(), in_slot.data());
  EXPECT_EQ(slot_again.size(), 200u);
}

TEST(Channel, AReaderLetsGoOfBuffersTheWriterRemadeOrNoLongerUses) {
  TestChannel t({4, 256, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  auto round_trip = [&](std::size_t bytes, std::uint32_t seed) {
    ASSERT_EQ(write_pattern(writer, bytes, seed), cg::ChannelStatus::ok);
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
    EXPECT_EQ(first_mismatch(m.payload, seed), -1) << bytes << " bytes";
    reader.release();
  };
  round_trip(1 * kMiB, 1);
  round_trip(3 * kMiB, 2); // the writer remakes its one buffer larger
  EXPECT_EQ(overflow_mappings(), 2) << "the second, and the first while the reader shares it";
  for (std::uint32_t i = 0; i < 5; ++i)
    round_trip(100, 3 + i);
  EXPECT_EQ(overflow_mappings(), 1) << "a ring of messages later, the second alone: the writer's";
  round_trip(2 * kMiB, 9);
  EXPECT_EQ(overflow_mappings(), 1) << "shared again when used again, not mapped twice";
}

TEST(Channel, WriterDoesNotReuseAnOverflowBufferUntilEveryReaderReleasedIt) {
  TestChannel t({1, 256, 2});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader fast(t.channel, 0);
  cg::ChannelReader slow(t.channel, 1);
  ASSERT_EQ(write_pattern(writer, 4 * kMiB, 1), cg::ChannelStatus::ok);
  cg::ChannelReader::Message m{};
  ASSERT_EQ(fast.acquire(m, in(1s)), cg::ChannelStatus::ok);
  fast.release();
  cg::ChannelReader::Message held{};
  ASSERT_EQ(slow.acquire(held, in(1s)), cg::ChannelStatus::ok);

  std::span<std::byte> payload;
  EXPECT_EQ(writer.acquire(4 * kMiB, payload, in(100ms)), cg::ChannelStatus::timeout)
      << "the slow reader still reads the buffer";
  EXPECT_EQ(writer.acquire(16 * kMiB, payload, in(100ms)), cg::ChannelStatus::timeout)
      << "nor may it be replaced under the reader";
  EXPECT_EQ(first_mismatch(held.payload, 1), -1);
  slow.release();

  ASSERT_EQ(write_pattern(writer, 4 * kMiB, 2, in(1s)), cg::ChannelStatus::ok);
  ASSERT_EQ(slow.acquire(held, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(first_mismatch(held.payload, 2), -1);
}

// Each side's writer made its buffers and maps the other side's to read:
// once writer, reader and the child are gone, no process maps or holds any of
// them, so the kernel has freed them.
TEST(Channel, SixtyFourMebibytesCrossProcessesThroughOneKibibyteSlotsAndTheBuffersGoWithTheEnds) {
  const cg::ChannelConfig config{3, 1 * kKiB, 1};
  const std::size_t footprint = cg::channel_footprint(config);
  cg::SharedSegment segment = cg::SharedSegment::create_anonymous("cg.test", 2 * footprint);
  cg::Channel requests = cg::Channel::create(segment.data(), config);
  const cg::Channel replies =
      cg::Channel::create(static_cast<std::byte*>(segment.data()) + footprint, config);
  ASSERT_TRUE(requests.valid());
  ASSERT_TRUE(replies.valid());

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    echo_child_on(std::move(segment), footprint); // the child keeps the inherited mapping
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (!reaped) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } reaper{pid};

  std::set<ino_t> buffers;
  {
    cg::ChannelWriter writer(requests);
    cg::ChannelReader reader(replies, 0);
    for (std::size_t bytes : {64 * kMiB, std::size_t{10}, 64 * kMiB, 2 * kKiB}) {
      ASSERT_EQ(write_pattern(writer, bytes, static_cast<std::uint32_t>(bytes), in(20s)),
                cg::ChannelStatus::ok);
      cg::ChannelReader::Message m{};
      ASSERT_EQ(reader.acquire(m, in(20s)), cg::ChannelStatus::ok) << bytes;
      ASSERT_EQ(m.payload.size(), bytes);
      // The child echoes the bytes reversed.
      std::vector<std::byte> reversed(m.payload.rbegin(), m.payload.rend());
      EXPECT_EQ(first_mismatch(reversed, static_cast<std::uint32_t>(bytes)), -1) << bytes;
      reader.release();
    }
    buffers = cg_test::memfd_inodes(getpid(), "cg.overflow");
    for (ino_t buffer : cg_test::memfd_inodes(pid, "cg.overflow"))
      buffers.insert(buffer);
    EXPECT_GE(buffers.size(), 2u) << "ours and the child's";
  }
  EXPECT_EQ(cg_test::memfd_mappings(0, "cg.overflow"), std::vector<std::string>{})
      << "writer and reader unmap their buffers";
  EXPECT_EQ(cg_test::memfd_descriptors(0, "cg.overflow"), std::vector<std::string>{})
      << "the writer closes its buffers";
  requests.close();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  reaper.reaped = true;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child exit code (10+ = failure inside the child)";
  EXPECT_EQ(cg_test::holders_of(buffers), std::vector<std::string>{})
      << "no process maps or holds a buffer: their memory is freed";
}

TEST(Channel, CorruptedOverflowReferenceIsReportedNotRead) {
  const cg::ChannelConfig config{2, 256, 1};
  TestChannel t(config);
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  ASSERT_EQ(write_pattern(writer, 1 * kMiB, 9), cg::ChannelStatus::ok);

  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  cg::detail::SlotHeader* slot =
      cg::detail::slot_header(header, config.readers, header->slot_stride, 0);
  ASSERT_EQ(slot->storage.load(), static_cast<std::uint32_t>(cg::detail::Storage::overflow));
  ASSERT_EQ(slot->overflow_bytes.load(), 1 * kMiB) << "the test must poke the real fields";
  cg::ChannelReader::Message m{};

  slot->storage.store(7);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt) << "unknown storage";
  slot->storage.store(static_cast<std::uint32_t>(cg::detail::Storage::overflow));

  slot->overflow_generation.store(slot->overflow_generation.load() + 1);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt)
      << "a generation the buffer does not carry";
  slot->overflow_generation.store(slot->overflow_generation.load() - 1);

  slot->overflow_bytes.store(1 * kMiB + 64 * kKiB + 1);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt)
      << "more bytes than the buffer holds";
  slot->overflow_bytes.store(UINT64_MAX);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt);
  slot->overflow_bytes.store(1 * kMiB);

  const std::int32_t fd = slot->overflow_fd.load();
  slot->overflow_fd.store(-1);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt);
  std::FILE* plain_file = std::tmpfile();
  ASSERT_NE(plain_file, nullptr);
  ASSERT_EQ(std::fputs(std::string(2 * kMiB, 'p').c_str(), plain_file), 1);
  std::fflush(plain_file);
  slot->overflow_fd.store(fileno(plain_file));
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt)
      << "a file that is no (sealed) overflow buffer";
  std::fclose(plain_file);
  slot->overflow_fd.store(1000000);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::unmappable) << "no such descriptor";
  slot->overflow_fd.store(fd);

  const std::int32_t pid = slot->overflow_pid.load();
  slot->overflow_pid.store(0);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt);
  slot->overflow_pid.store(INT32_MAX);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::unmappable) << "no such process";
  slot->overflow_pid.store(pid);

  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok) << "restored: readable again";
  EXPECT_EQ(m.payload.size(), 1 * kMiB);
  EXPECT_EQ(first_mismatch(m.payload, 9), -1);
  reader.release();
  EXPECT_STREQ(cg::to_string(cg::ChannelStatus::unmappable), "unmappable");
}

TEST(Channel, OverflowBufferTheSystemRefusesIsTooLargeNotACrash) {
  // A child with a small file-size limit: memfds count against it. The limit
  // is checked before growing the file, so no SIGXFSZ kills the child.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit limit{4 * kMiB, 4 * kMiB};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
      _exit(10);
    TestChannel t({2, 256, 1});
    cg::ChannelWriter writer(t.channel);
    std::span<std::byte> payload;
    if (writer.acquire(8 * kMiB, payload, in(1s)) != cg::ChannelStatus::too_large)
      _exit(11);
    if (write_pattern(writer, 1 * kMiB, 1) != cg::ChannelStatus::ok)
      _exit(12); // within the limit
    if (write_text(writer, "small") != cg::ChannelStatus::ok)
      _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child exit code (10+ = failure inside the child)";
}

} // namespace
