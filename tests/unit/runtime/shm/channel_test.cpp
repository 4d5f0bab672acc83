// channel_test.cpp - tests of the shared-memory channel ring (cg/detail/channel.hpp).
//
// The ring is the data path of every compiled graph, so these tests pin down
// ordering (every reader sees every message once, in order), back-pressure (the
// writer waits for the slowest reader), prompt wake-ups on close, refusal to
// read corrupted memory, and that it all works across a fork()ed process.
// Values larger than a slot are overflow_test.cpp's.
#include <cg/detail/channel.hpp>
#include <cg/serialize.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "channel_fixture.hpp"
#include "shm/channel_layout.hpp"
#include "shm/shm.hpp"

namespace {

using namespace channel_fixture;

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
  EXPECT_EQ(attached.config().max_in_flight, 3u);
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

// A small message is published on its slot header's own cache line, so the
// reader's core fetches one line for it; a larger one goes after the header.
TEST(Channel, AMessageOfAtMostFortyBytesTravelsOnItsSlotHeadersLine) {
  const cg::ChannelConfig config{2, 128, 1};
  TestChannel t(config);
  cg::ChannelWriter writer(t.channel);
  cg::ChannelReader reader(t.channel, 0);
  auto* header = static_cast<cg::detail::ChannelHeader*>(t.memory.data());
  auto slot = [&](std::uint32_t index) {
    return cg::detail::slot_header(header, config.readers, header->slot_stride, index);
  };
  const auto storage = [](cg::detail::SlotHeader* s) {
    return static_cast<cg::detail::Storage>(s->storage.load());
  };
  ASSERT_EQ(cg::detail::header_payload_bytes, 40u);
  const std::string forty(40, 'h'), forty_one(41, 's');
  ASSERT_EQ(write_text(writer, forty), cg::ChannelStatus::ok);
  ASSERT_EQ(write_text(writer, forty_one), cg::ChannelStatus::ok);
  EXPECT_EQ(storage(slot(0)), cg::detail::Storage::header);
  EXPECT_EQ(std::memcmp(cg::detail::header_payload(slot(0)), forty.data(), 40), 0);
  EXPECT_EQ(cg::detail::message_payload(slot(0)), cg::detail::header_payload(slot(0)));
  EXPECT_EQ(storage(slot(1)), cg::detail::Storage::slot);
  EXPECT_EQ(std::memcmp(cg::detail::slot_payload(slot(1)), forty_one.data(), 41), 0);
  EXPECT_EQ(cg::detail::message_payload(slot(1)), cg::detail::slot_payload(slot(1)));

  cg::ChannelReader::Message m{};
  slot(0)->size.store(41);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt) << "past the header's line";
  slot(0)->size.store(40);
  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), forty);
  reader.release();
  slot(1)->size.store(129);
  EXPECT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::corrupt) << "one past slot_bytes";
  slot(1)->size.store(41);
  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), forty_one);
  reader.release();

  // Acquired small, written, then acquired again larger (an input made in
  // place, then encoded): what was written is found in the larger area.
  std::span<std::byte> area;
  ASSERT_EQ(writer.acquire(8, area, in(1s)), cg::ChannelStatus::ok);
  std::memcpy(area.data(), "abcdefgh", 8);
  ASSERT_EQ(writer.acquire(100, area, in(1s)), cg::ChannelStatus::ok);
  ASSERT_EQ(area.size(), 100u);
  EXPECT_EQ(std::memcmp(area.data(), "abcdefgh", 8), 0);
  std::memset(area.data() + 8, 'z', 92);
  writer.publish(cg::MessageKind::value, 100);
  EXPECT_EQ(storage(slot(0)), cg::detail::Storage::slot);
  ASSERT_EQ(reader.acquire(m, in(1s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "abcdefgh" + std::string(92, 'z'));
  reader.release();
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
