// net/host_stream.cpp - what a stream between hosts does whatever carries it:
// its receive buffer grown within the memory room, and its errors kept as text.
#include "net/host_stream.hpp"

#include "os/memory_room.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace cg::detail {

std::size_t receive_buffer_capacity(std::size_t needed, std::size_t current) noexcept {
  constexpr std::size_t min_capacity = 64 * 1024, page = 4096;
  auto whole_pages = [](std::size_t bytes) { return (bytes + page - 1) / page * page; };
  const std::uint64_t room = memory_room().bytes;
  if (needed > room)
    return 0;
  const std::size_t grown = whole_pages(std::max({needed, current + current / 2, min_capacity}));
  return grown <= room ? grown : std::max(needed, static_cast<std::size_t>(room / page * page));
}

ChannelStatus HostWriter::fail(ChannelStatus status, FrameFault fault, const char* format,
                               ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error_, sizeof error_, format, args);
  va_end(args);
  fault_ = fault;
  pending_ = false;
  const bool nothing_sent = status == ChannelStatus::too_large ||
                            (status == ChannelStatus::timeout && fault == FrameFault::none);
  if (!nothing_sent)
    broken_ = true;
  return status;
}

ChannelStatus HostWriter::check_start(bool closing, std::uint64_t next, std::size_t payload_bytes,
                                      std::uint64_t max_payload) noexcept {
  using ull = unsigned long long;
  if (broken_)
    return ChannelStatus::closed; // error_ still says why
  if (closing) {
    return fail(ChannelStatus::closed, FrameFault::closed_locally,
                "the stream was closed locally after %llu frames", static_cast<ull>(next));
  }
  if (pending_) {
    return fail(ChannelStatus::closed, FrameFault::connection_error,
                "frame %llu: started while the one before it was still being sent",
                static_cast<ull>(next + 1));
  }
  if (payload_bytes > max_payload) {
    return fail(ChannelStatus::too_large, FrameFault::too_large,
                "frame %llu: payload of %zu bytes exceeds the limit of %llu",
                static_cast<ull>(next), payload_bytes, static_cast<ull>(max_payload));
  }
  return ChannelStatus::ok;
}

ChannelStatus HostReader::fail(ChannelStatus status, FrameFault fault, const char* format,
                               ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error_, sizeof error_, format, args);
  va_end(args);
  return fail(status, fault);
}

ChannelStatus HostReader::fail(ChannelStatus status, FrameFault fault) noexcept {
  fault_ = fault;
  failed_ = status;
  return status;
}

} // namespace cg::detail
