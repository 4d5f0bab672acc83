// channel_fixture.hpp - what the shared-memory channel's tests share
// (channel_test.cpp, overflow_test.cpp): a channel in memory of its own, its
// messages as text, and the child that echoes a channel across processes.
#pragma once

#include <cg/detail/channel.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "shm/shm.hpp"

namespace channel_fixture {

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

inline cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

inline cg::ChannelStatus write_text(cg::ChannelWriter& writer, const std::string& text,
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

inline std::string text_of(const cg::ChannelReader::Message& message) {
  return std::string(reinterpret_cast<const char*>(message.payload.data()), message.payload.size());
}

inline std::string content_for(std::uint64_t i) {
  return "message #" + std::to_string(i) + std::string(i % 37, 'a' + i % 26);
}

// Child side of the cross-process tests: echo each request reversed until the
// request channel closes. Only _exit codes report back (no gtest in the child).
[[noreturn]] inline void echo_child_on(cg::SharedSegment segment, std::size_t second_offset) {
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

} // namespace channel_fixture
