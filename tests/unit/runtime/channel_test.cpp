// channel_test.cpp — tests of the shared-memory channel ring (cg/detail/channel.hpp).
//
// The ring is the data path of every compiled graph, so these tests pin down
// ordering (every reader sees every message once, in order), back-pressure (the
// writer waits for the slowest reader), values larger than a slot (delivered
// whole through overflow buffers, never truncated, nothing left in /dev/shm),
// prompt wake-ups on close, refusal to read corrupted memory, and that it all
// works across a fork()ed process.
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
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../../support/proc_status.hpp"
#include "shm/channel_layout.hpp"
#include "shm/shm.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// 64-byte aligned, zero-filled memory for one channel.
class ChannelMemory {
public:
  explicit ChannelMemory(std::size_t bytes) : size_((bytes + 63) / 64 * 64) {
    data_ = std::aligned_alloc(64, size_);
    std::memset(data_, 0, size_);
  }
  ~ChannelMemory() { std::free(data_); }
  ChannelMemory(const ChannelMemory&) = delete;
  ChannelMemory& operator=(const ChannelMemory&) = delete;
  void* data() const { return data_; }

private:
  std::size_t size_;
  void* data_;
};

// A channel together with the memory it lives in.
struct TestChannel {
  explicit TestChannel(const cg::ChannelConfig& config)
      : memory(cg::channel_footprint(config)), channel(cg::Channel::create(memory.data(), config)) {
  }
  ChannelMemory memory;
  cg::Channel channel;
};

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

cg::ChannelStatus write_text(cg::ChannelWriter& writer, const std::string& text,
                             cg::MessageKind kind = cg::MessageKind::value,
                             cg::Deadline deadline = in(10s)) {
  std::span<std::byte> payload;
  const cg::ChannelStatus status = writer.acquire(text.size(), payload, deadline);
  if (status != cg::ChannelStatus::ok)
    return status;
  EXPECT_EQ(payload.size(), text.size());
  std::memcpy(payload.data(), text.data(), text.size());
  writer.publish(kind, text.size());
  return status;
}

std::string text_of(const cg::ChannelReader::Message& message) {
  return std::string(reinterpret_cast<const char*>(message.payload.data()), message.payload.size());
}

std::string content_for(std::uint64_t i) {
  return "message #" + std::to_string(i) + std::string(i % 37, 'a' + i % 26);
}

TEST(Channel, FootprintIsACacheLineMultipleAndZeroForInvalidConfigs) {
  const cg::ChannelConfig config{4, 100, 2};
  const std::size_t footprint = cg::channel_footprint(config);
  EXPECT_EQ(footprint % 64, 0u);
  EXPECT_GE(footprint, 4u * 100u);
  EXPECT_GT(cg::channel_footprint({5, 100, 2}), footprint);
  EXPECT_GT(cg::channel_footprint({4, 100, 3}), footprint);
  EXPECT_EQ(cg::channel_footprint({0, 100, 1}), 0u);
  EXPECT_EQ(cg::channel_footprint({4, 100, 0}), 0u);
  EXPECT_EQ(cg::channel_footprint({UINT32_MAX, UINT32_MAX, UINT32_MAX}) % 64, 0u);
}

TEST(Channel, AttachSeesTheCreatedChannelAndRejectsForeignMemory) {
  const cg::ChannelConfig config{3, 256, 2};
  TestChannel t(config);
  ASSERT_TRUE(t.channel.valid());
  const cg::Channel attached = cg::Channel::attach(t.memory.data());
  ASSERT_TRUE(attached.valid());
  EXPECT_EQ(attached.config().slots, 3u);
  EXPECT_EQ(attached.config().slot_bytes, 256u);
  EXPECT_EQ(attached.config().readers, 2u);

  ChannelMemory zeros(4096);
  EXPECT_FALSE(cg::Channel::attach(zeros.data()).valid());
  EXPECT_FALSE(cg::Channel().valid());

  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  header->version += 1;
  EXPECT_FALSE(attached.valid()) << "a different layout version must not be trusted";
  header->version -= 1;
  EXPECT_TRUE(attached.valid());

  EXPECT_FALSE(cg::Channel::create(static_cast<char*>(zeros.data()) + 8, config).valid())
      << "misaligned";
  EXPECT_FALSE(cg::Channel::create(zeros.data(), {0, 16, 1}).valid());
  EXPECT_FALSE(cg::Channel::create(nullptr, config).valid());
}

TEST(Channel, RoundTripsMessagesInOneThread) {
  TestChannel t({4, 128, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(cg::Channel::attach(t.memory.data()), 0);

  ASSERT_EQ(write_text(writer, "hello"), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, "it failed", cg::MessageKind::error), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, ""), cg::ChannelStatus::ok);
  EXPECT_EQ(writer.published(), 3u);

  cg::ChannelReader::Message m{};
  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(m.kind, cg::MessageKind::value);
  EXPECT_EQ(text_of(m), "hello");
  EXPECT_EQ(m.sequence, 0u);
  cg::ChannelReader::Message again{};
  ASSERT_EQ(reader.acquire(again, in(1s)), cg::ChannelStatus::ok)
      << "acquire before release repeats";
  EXPECT_EQ(again.sequence, 0u);
  reader.release();

  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(m.kind, cg::MessageKind::error);
  EXPECT_EQ(text_of(m), "it failed");
  EXPECT_EQ(m.sequence, 1u);
  reader.release();

  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(m.payload.size(), 0u);
  EXPECT_EQ(m.sequence, 2u);
  reader.release();

  const auto start = Clock::now();
  EXPECT_EQ(reader.acquire(m, in(50ms)), cg::ChannelStatus::timeout) << "nothing more to read";
  EXPECT_GE(Clock::now() - start, 50ms);
}

TEST(Channel, WrapsAroundTheRingAndReusesSlotsModuloK) {
  constexpr std::uint32_t k = 4;
  TestChannel t({k, 64, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  std::vector<const std::byte*> slot_of(3 * k);

  for (std::uint64_t round = 0; round < 3; ++round) {
    for (std::uint64_t i = round * k; i < (round + 1) * k; ++i) {
      ASSERT_EQ(write_text(writer, "m" + std::to_string(i) + std::string(i, '.')),
                cg::ChannelStatus::ok);
    }
    std::span<std::byte> payload;
    EXPECT_EQ(writer.acquire(1, payload, Clock::now()), cg::ChannelStatus::timeout)
        << "ring of K is full";

    for (std::uint64_t i = round * k; i < (round + 1) * k; ++i) {
      cg::ChannelReader::Message m{};
      ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
      EXPECT_EQ(m.sequence, i);
      EXPECT_EQ(text_of(m), "m" + std::to_string(i) + std::string(i, '.'));
      slot_of[i] = m.payload.data();
      reader.release();
    }
  }
  for (std::uint64_t i = 0; i < 2 * k; ++i)
    EXPECT_EQ(slot_of[i], slot_of[i + k]) << "message n uses slot n % K";
  for (std::uint64_t i = 1; i < k; ++i)
    EXPECT_NE(slot_of[0], slot_of[i]);
  EXPECT_EQ(writer.published(), 3u * k);
}

TEST(Channel, EveryReaderSeesEveryMessageInOrder) {
  constexpr std::uint64_t count = 10'000;
  constexpr std::uint32_t readers = 3;
  TestChannel t({10, 128, readers});
  std::atomic<int> failures{0};
  std::vector<std::uint64_t> received(readers, 0);

  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < readers; ++r) {
    threads.emplace_back([&, r] {
      cg::ChannelReader reader(t.channel, r);
      for (std::uint64_t i = 0; i < count; ++i) {
        cg::ChannelReader::Message m{};
        if (reader.acquire(m, in(30s)) != cg::ChannelStatus::ok || m.sequence != i ||
            text_of(m) != content_for(i)) {
          failures.fetch_add(1);
          return;
        }
        reader.release();
        received[r] = i + 1;
      }
    });
  }
  cg::ChannelWriter writer(t.channel);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (write_text(writer, content_for(i), cg::MessageKind::value, in(30s)) !=
        cg::ChannelStatus::ok) {
      t.channel.close(); // unblock the readers before failing
      ADD_FAILURE() << "writer failed at message " << i;
      break;
    }
  }
  for (std::thread& th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
  for (std::uint32_t r = 0; r < readers; ++r)
    EXPECT_EQ(received[r], count) << "reader " << r;
}

TEST(Channel, WriterWaitsForTheSlowestReader) {
  TestChannel t({2, 64, 2});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader fast(t.channel, 0);
  cg::ChannelReader slow(t.channel, 1);
  ASSERT_EQ(write_text(writer, "a"), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, "b"), cg::ChannelStatus::ok);
  cg::ChannelReader::Message m{};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fast.acquire(m, in(1s)), cg::ChannelStatus::ok);
    fast.release();
  }

  std::span<std::byte> payload;
  const auto start = Clock::now();
  EXPECT_EQ(writer.acquire(1, payload, in(100ms)), cg::ChannelStatus::timeout)
      << "slot 0 still holds message 0 for the slow reader";
  EXPECT_GE(Clock::now() - start, 100ms);

  ASSERT_EQ(slow.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "a");
  EXPECT_EQ(writer.acquire(1, payload, Clock::now()), cg::ChannelStatus::timeout)
      << "acquired is not released";
  slow.release();
  ASSERT_EQ(writer.acquire(1, payload, Clock::now()), cg::ChannelStatus::ok);
  writer.publish(cg::MessageKind::value, 1);

  // A writer sleeping on a full ring is woken by a release from another thread.
  std::atomic<cg::ChannelStatus> status{cg::ChannelStatus::corrupt};
  std::thread blocked([&] {
    std::span<std::byte> p;
    status = writer.acquire(1, p, in(10s));
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(status.load(), cg::ChannelStatus::corrupt) << "must still be waiting";
  ASSERT_EQ(slow.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "b");
  slow.release(); // the last release of message 1 frees slot 1 for message 3
  const auto released = Clock::now();
  blocked.join();
  EXPECT_EQ(status.load(), cg::ChannelStatus::ok);
  EXPECT_LT(Clock::now() - released, 1s);
}

[[noreturn]] void echo_child_on(cg::SharedSegment segment, std::size_t second_offset);

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

// Names in /dev/shm made by these processes (cg::unique_segment_name() starts
// with the creator's pid; tests running beside us may make others).
std::set<std::string> dev_shm_names_of(std::initializer_list<pid_t> pids) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename();
    for (pid_t pid : pids) {
      if (name.rfind("cg." + std::to_string(pid) + ".", 0) == 0)
        names.insert(name);
    }
  }
  return names;
}

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
  EXPECT_EQ(overflow_mappings(), 2) << "the writer's and the reader's";
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
  EXPECT_EQ(overflow_mappings(), 2) << "the reader no longer maps the first buffer";
  for (std::uint32_t i = 0; i < 5; ++i)
    round_trip(100, 3 + i);
  EXPECT_EQ(overflow_mappings(), 1) << "nor, a ring of messages later, the second: the writer's";
  round_trip(2 * kMiB, 9);
  EXPECT_EQ(overflow_mappings(), 2) << "mapped again when used again";
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

TEST(Channel, SixtyFourMebibytesCrossProcessesThroughOneKibibyteSlotsLeavingNothingInDevShm) {
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
  EXPECT_EQ(dev_shm_names_of({getpid(), pid}), std::set<std::string>{})
      << "overflow buffers have no name to leak";
  requests.close();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  reaper.reaped = true;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child exit code (10+ = failure inside the child)";
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

TEST(Channel, CloseWakesBlockedReader) {
  TestChannel t({2, 64, 1});
  std::atomic<cg::ChannelStatus> status{cg::ChannelStatus::ok};
  std::atomic<bool> done{false};
  std::thread blocked([&] {
    cg::ChannelReader reader(t.channel, 0);
    cg::ChannelReader::Message m{};
    status = reader.acquire(m, cg::Deadline::max());
    done = true;
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(done.load()) << "the reader must be waiting";
  const auto closed_at = Clock::now();
  t.channel.close();
  blocked.join();
  EXPECT_LT(Clock::now() - closed_at, 1s);
  EXPECT_EQ(status.load(), cg::ChannelStatus::closed);
}

TEST(Channel, CloseWakesBlockedWriter) {
  TestChannel t({1, 64, 1});
  cg::ChannelWriter writer(t.channel);
  ASSERT_EQ(write_text(writer, "x"), cg::ChannelStatus::ok);
  std::atomic<cg::ChannelStatus> status{cg::ChannelStatus::ok};
  std::atomic<bool> done{false};
  std::thread blocked([&] {
    std::span<std::byte> payload;
    status = writer.acquire(1, payload, cg::Deadline::max());
    done = true;
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(done.load()) << "the writer must be waiting";
  const auto closed_at = Clock::now();
  cg::Channel::attach(t.memory.data()).close();
  blocked.join();
  EXPECT_LT(Clock::now() - closed_at, 1s);
  EXPECT_EQ(status.load(), cg::ChannelStatus::closed);
}

TEST(Channel, ClosedChannelRefusesEveryoneEvenWithPendingMessages) {
  TestChannel t({4, 64, 1});
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  ASSERT_EQ(write_text(writer, "pending"), cg::ChannelStatus::ok);
  EXPECT_FALSE(t.channel.closed());
  t.channel.close();
  EXPECT_TRUE(t.channel.closed());
  cg::ChannelReader::Message m{};
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::closed);
  EXPECT_EQ(write_text(writer, "more"), cg::ChannelStatus::closed);
  EXPECT_STREQ(cg::to_string(cg::ChannelStatus::closed), "closed");

  cg::ChannelWriter unbound;
  std::span<std::byte> payload;
  EXPECT_EQ(unbound.acquire(1, payload, Clock::now()), cg::ChannelStatus::closed);
}

TEST(Channel, CorruptedSlotIsReportedNotRead) {
  const cg::ChannelConfig config{2, 64, 1};
  TestChannel t(config);
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  ASSERT_EQ(write_text(writer, "fine"), cg::ChannelStatus::ok);

  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  cg::detail::SlotHeader* slot =
      cg::detail::slot_header(header, config.readers, header->slot_stride, 0);
  ASSERT_EQ(slot->size.load(), 4u) << "the test must poke the real size field";
  cg::ChannelReader::Message m{};

  slot->size.store(0xFFFF'FFFFu);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt);
  slot->size.store(65);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt) << "one past slot_bytes";
  slot->size.store(4);

  slot->kind.store(7);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt) << "unknown message kind";
  slot->kind.store(0);

  slot->sequence.store(5);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt)
      << "sequence ahead of the expected one";
  slot->sequence.store(1);

  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok) << "restored: readable again";
  EXPECT_EQ(text_of(m), "fine");
  reader.release();

  cg::detail::reader_state(header, 0)->consumed.store(1000);
  cg::ChannelWriter fresh_writer(t.channel); // no cached view of the readers' progress
  std::span<std::byte> payload;
  EXPECT_EQ(fresh_writer.acquire(1, payload, in(1s)), cg::ChannelStatus::corrupt)
      << "reader claims unpublished messages";
}

// Child side of the cross-process tests: echo each request reversed until the
// request channel closes. Only _exit codes report back (no gtest in the child).
[[noreturn]] void echo_child_on(cg::SharedSegment segment, std::size_t second_offset) {
  try {
    const cg::Channel requests = cg::Channel::attach(segment.data());
    const cg::Channel replies =
        cg::Channel::attach(static_cast<std::byte*>(segment.data()) + second_offset);
    if (!requests.valid() || !replies.valid())
      _exit(10);
    cg::ChannelReader reader(requests, 0);
    cg::ChannelWriter writer(replies);
    for (;;) {
      cg::ChannelReader::Message m{};
      const cg::ChannelStatus status = reader.acquire(m, in(20s));
      if (status == cg::ChannelStatus::closed)
        _exit(0);
      if (status != cg::ChannelStatus::ok)
        _exit(11);
      std::span<std::byte> out;
      if (writer.acquire(m.payload.size(), out, in(20s)) != cg::ChannelStatus::ok)
        _exit(12);
      for (std::size_t i = 0; i < m.payload.size(); ++i)
        out[i] = m.payload[m.payload.size() - 1 - i];
      writer.publish(m.kind, m.payload.size());
      reader.release();
    }
  } catch (...) {
    _exit(13);
  }
}

[[noreturn]] void echo_child(const std::string& segment_name, std::size_t second_offset) {
  try {
    echo_child_on(cg::SharedSegment::open(segment_name), second_offset);
  } catch (...) {
    _exit(14);
  }
}

TEST(Channel, WorksAcrossProcessesThroughASharedSegment) {
  const cg::ChannelConfig config{3, 512, 1};
  const std::size_t footprint = cg::channel_footprint(config);
  cg::SharedSegment segment = cg::SharedSegment::create(cg::unique_segment_name(), 2 * footprint);
  cg::Channel requests = cg::Channel::create(segment.data(), config);
  const cg::Channel replies =
      cg::Channel::create(static_cast<std::byte*>(segment.data()) + footprint, config);
  ASSERT_TRUE(requests.valid());
  ASSERT_TRUE(replies.valid());

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    echo_child(segment.name(), footprint);
  // Whatever happens below: no leaked name, no orphaned child.
  struct Cleanup {
    cg::SharedSegment& segment;
    pid_t pid;
    bool reaped = false;
    ~Cleanup() {
      segment.unlink();
      if (!reaped) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } cleanup{segment, pid};

  cg::ChannelWriter writer(requests);
  cg::ChannelReader reader(replies, 0);
  constexpr int count = 1000;
  int mismatches = 0;
  for (int i = 0; i < count; ++i) {
    std::string text = content_for(static_cast<std::uint64_t>(i) * 7) + std::string(i % 400, 'z');
    const auto kind = i % 10 == 0 ? cg::MessageKind::error : cg::MessageKind::value;
    ASSERT_EQ(write_text(writer, text, kind, in(20s)), cg::ChannelStatus::ok) << i;
    cg::ChannelReader::Message m{};
    ASSERT_EQ(reader.acquire(m, in(20s)), cg::ChannelStatus::ok) << i;
    const std::string expected(text.rbegin(), text.rend());
    if (text_of(m) != expected || m.kind != kind || m.sequence != static_cast<std::uint64_t>(i))
      ++mismatches;
    reader.release();
  }
  EXPECT_EQ(mismatches, 0);
  requests.close();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  cleanup.reaped = true;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child exit code (10+ = failure inside the child)";
}

} // namespace
