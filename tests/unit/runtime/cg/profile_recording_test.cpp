// profile_recording_test.cpp - how an actor records its operations
// (cg/detail/profile.hpp's ActorProfile, cg/ports.hpp's ports): each one
// starts where the one before it ended; a READ whose message was there at
// the first look reads no clock and ends where it began, one that waited
// ends when its message came; and a sampled profile records whole
// executions, the same ones profile_records() names.
#include <cg/detail/profile.hpp>
#include <cg/ports.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <set>
#include <thread>
#include <vector>

namespace {

using cg::detail::ActorProfile;
using cg::detail::ProfiledOp;
using cg::detail::ProfileEvent;
using cg::detail::ProfileRing;

// A ring of `capacity` events in memory of its own, laid out as the
// segment lays one out (the ring's header, then its events).
class Ring {
public:
  explicit Ring(std::uint64_t capacity)
      : memory_(std::aligned_alloc(64, sizeof(ProfileRing) + capacity * sizeof(ProfileEvent))) {
    ring_ = new (memory_) ProfileRing;
    ring_->written.store(0);
    ring_->capacity = capacity;
  }
  ~Ring() { std::free(memory_); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  ProfileRing* get() const { return ring_; }
  // What was recorded, in the order it was (the ring has not wrapped).
  std::vector<ProfileEvent> events() const {
    const auto* first = reinterpret_cast<const ProfileEvent*>(ring_ + 1);
    return {first, first + ring_->written.load()};
  }

private:
  void* memory_;
  ProfileRing* ring_;
};

// A channel in memory of its own.
struct TestChannel {
  explicit TestChannel(const cg::ChannelConfig& config)
      : memory(std::aligned_alloc(64, cg::channel_footprint(config))),
        channel(cg::Channel::create(memory, config)) {}
  ~TestChannel() { std::free(memory); }
  TestChannel(const TestChannel&) = delete;
  TestChannel& operator=(const TestChannel&) = delete;
  void* memory;
  cg::Channel channel;
};

// How many different clock readings the events hold, besides `ready` (when
// the first READ began to wait): each is one clock read.
std::size_t clock_reads(const std::vector<ProfileEvent>& events, std::int64_t ready) {
  std::set<std::int64_t> ticks;
  for (const ProfileEvent& event : events) {
    ticks.insert(event.start);
    ticks.insert(event.end);
  }
  ticks.erase(ready);
  return ticks.size();
}

TEST(ProfileRecording, AReadWhoseMessageWasWaitingReadsNoClockAndEndsWhereItBegan) {
  Ring ring(8);
  ActorProfile profile;
  profile.recorder = cg::detail::ProfileRecorder(ring.get());
  profile.last = 1'000; // no clock reads this: only the tick before it can
  profile.read_without_wait(3, 16);
  const std::vector<ProfileEvent> events = ring.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].op, ProfiledOp::read);
  EXPECT_EQ(events[0].index, 3u);
  EXPECT_EQ(events[0].start, 1'000);
  EXPECT_EQ(events[0].end, 1'000);
  EXPECT_EQ(events[0].bytes, 16u);
  EXPECT_EQ(events[0].execution, 0u);
  EXPECT_EQ(profile.last, 1'000);
}

// An input port's READ, its task's COMPUTE and an output port's WRITE: the
// READ found its message waiting, so the execution reads the clock twice
// (the COMPUTE's end, the WRITE's end) where it read it three times when
// every operation read the clock.
TEST(ProfileRecording, AnExecutionWhoseReadDidNotWaitReadsTheClockTwice) {
  TestChannel in({2, 64, 1}), out({2, 64, 1});
  Ring ring(8);
  ActorProfile profile;
  profile.recorder = cg::detail::ProfileRecorder(ring.get());
  cg::InputPort<int> input(cg::ChannelReader(in.channel, 0), 0, "a", &profile);
  cg::OutputPort<int> output(cg::ChannelWriter(out.channel), 1, 64, "a", "add_one", &profile);
  cg::OutputPort<int> driver(cg::ChannelWriter(in.channel), 0, 64, "driver", "", nullptr);
  ASSERT_TRUE(driver.write(cg::Result<int>(41)));

  profile.last = cg::detail::profile_clock(); // as ActorProcess::ready() does
  const std::int64_t ready = profile.last;
  cg::Result<int> value;
  ASSERT_TRUE(input.read(value));
  profile.computed();
  ASSERT_TRUE(output.write(cg::Result<int>(value.value() + 1)));

  const std::vector<ProfileEvent> events = ring.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].op, ProfiledOp::read);
  EXPECT_EQ(events[0].start, ready);
  EXPECT_EQ(events[0].end, ready) << "it did not wait";
  EXPECT_EQ(events[0].bytes, sizeof(int));
  EXPECT_EQ(events[1].op, ProfiledOp::compute);
  EXPECT_EQ(events[1].start, ready);
  EXPECT_GT(events[1].end, ready);
  EXPECT_EQ(events[2].op, ProfiledOp::write);
  EXPECT_EQ(events[2].start, events[1].end);
  EXPECT_GT(events[2].end, events[1].end);
  EXPECT_EQ(clock_reads(events, ready), 2u);
}

TEST(ProfileRecording, AReadThatWaitedEndsWhenItsMessageCame) {
  TestChannel in({2, 64, 1});
  Ring ring(8);
  ActorProfile profile;
  profile.recorder = cg::detail::ProfileRecorder(ring.get());
  cg::InputPort<int> input(cg::ChannelReader(in.channel, 0), 0, "a", &profile);
  profile.last = cg::detail::profile_clock();
  const std::int64_t ready = profile.last;
  std::int64_t written = 0;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cg::OutputPort<int> driver(cg::ChannelWriter(in.channel), 0, 64, "driver", "", nullptr);
    written = cg::detail::profile_clock();
    driver.write(cg::Result<int>(7));
  });
  cg::Result<int> value;
  ASSERT_TRUE(input.read(value));
  writer.join();
  EXPECT_EQ(value.value(), 7);
  const std::vector<ProfileEvent> events = ring.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].start, ready);
  EXPECT_GT(events[0].end, written) << "it waited for the message";
  EXPECT_EQ(profile.last, events[0].end);
}

TEST(ProfileRecording, ExecutionsAreRecordedWhenTheirNumberIsAMultipleOfTheSample) {
  EXPECT_TRUE(cg::detail::profile_records(0, 4));
  EXPECT_FALSE(cg::detail::profile_records(3, 4));
  EXPECT_TRUE(cg::detail::profile_records(8, 4));
  EXPECT_FALSE(cg::detail::profile_records(9, 4));
  EXPECT_TRUE(cg::detail::profile_records(9, 1));
}

// Ten executions of READ, COMPUTE, WRITE, one in four recorded: executions
// 0, 4 and 8, each whole, each READ waiting from when the execution before
// it ended (not from the last one recorded).
TEST(ProfileRecording, ASampledActorRecordsEveryOperationOfOneExecutionInFour) {
  Ring ring(64);
  ActorProfile profile;
  profile.recorder = cg::detail::ProfileRecorder(ring.get());
  profile.every = 4;
  profile.last = cg::detail::profile_clock();
  std::vector<std::int64_t> ended; // when each execution ended, by the clock
  for (int execution = 0; execution < 10; ++execution) {
    profile.record(ProfiledOp::read, 0, 4);
    profile.computed();
    profile.record(ProfiledOp::write, 1, 4);
    ended.push_back(cg::detail::profile_clock());
    profile.next_execution();
  }
  const std::vector<ProfileEvent> events = ring.events();
  ASSERT_EQ(events.size(), 9u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].execution, 4 * (i / 3)) << i;
    EXPECT_EQ(events[i].op,
              (std::array{ProfiledOp::read, ProfiledOp::compute, ProfiledOp::write})[i % 3])
        << i;
  }
  EXPECT_EQ(events[1].index, 0u) << "the execution's first COMPUTE";
  EXPECT_EQ(events[4].index, 0u) << "counted afresh in a recorded execution";
  // Execution 4's READ waited from when execution 3 ended.
  EXPECT_GT(events[3].start, ended[3]);
  EXPECT_LE(events[3].start, events[3].end);
  EXPECT_EQ(events[4].start, events[3].end);
}

} // namespace
