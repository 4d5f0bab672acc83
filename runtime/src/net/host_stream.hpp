// net/host_stream.hpp - one direction of a channel between hosts, whatever
// carries it (internal).
//
// A channel whose writer and reader live on different hosts is a stream of
// frames (net/frame.hpp): numbered, checksummed, never delivered when
// bad. Two transports carry it, with one contract (net/tcp_channel.hpp spells
// it out: the statuses, the faults, what a deadline means):
//   - UCX (net/ucx_channel.hpp): RDMA on InfiniBand and RoCE, TCP elsewhere,
//     as UCX chooses (UCX_TLS, UCX_NET_DEVICES);
//   - our own framed TCP stream (net/tcp_channel.hpp): faster than UCX's TCP
//     transport as measured here, and the only one in runtimes built without
//     UCX (a GPU bundle).
// The driver chooses (net/scale_out.hpp: host_transport_from_environment).
// Whoever moves messages between a stream and a ring (net/scale_out.hpp)
// sees only these two interfaces.
#pragma once

#include "net/frame.hpp"
#include <cg/detail/channel.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace cg::detail {

/// The capacity of a reader's receive buffer grown for a frame of `needed`
/// bytes from `current`: by half at least, 64 KiB at least, whole pages;
/// less, down to `needed`, where the system has less memory to give
/// (os/memory_room.hpp); 0 when it cannot give even `needed`. Such a buffer
/// would not fail to allocate: filling it would wake the OOM killer.
std::size_t receive_buffer_capacity(std::size_t needed, std::size_t current) noexcept;

/// The writing end of a stream between hosts.
///
/// A frame is sent in two steps, which send() takes together: start() hands
/// it to the transport without ever waiting, and finish() waits for what the
/// transport could not take at once. A ring's writer forwards its messages to
/// the stream itself with start(), where it must not wait (a wait the
/// schedule's proof of deadlock freedom does not know of), and leaves the
/// rest to the relay's finish() (net/scale_out.hpp).
class HostWriter {
public:
  virtual ~HostWriter() = default;
  /// Sends `payload` as the next frame: start(), then finish() within `deadline`.
  ChannelStatus send(MessageKind kind, std::span<const std::byte> payload,
                     Deadline deadline) noexcept {
    const ChannelStatus status = start(kind, payload);
    return status == ChannelStatus::ok ? finish(deadline) : status;
  }
  /// Starts sending `payload` as the next frame and returns without waiting:
  /// ok when the frame is on its way, whole unless pending(); then finish()
  /// sends the rest, and `payload` must stay as it is until it has. Failures
  /// as send()'s. Precondition: nothing pending.
  virtual ChannelStatus start(MessageKind kind, std::span<const std::byte> payload) noexcept = 0;
  /// Completes the frame start() left pending (ok at once if none is),
  /// waiting at most until `deadline`.
  virtual ChannelStatus finish(Deadline deadline) noexcept = 0;
  /// Part of a started frame is still to be sent (by finish()).
  bool pending() const noexcept { return pending_; }
  /// Ends the stream; wakes a send() or finish() blocked in another thread.
  virtual void close() noexcept = 0;
  /// Why the last send() failed.
  FrameFault fault() const noexcept { return fault_; }
  std::string_view error() const noexcept { return error_; }

protected:
  HostWriter() = default;
  HostWriter(const HostWriter&) = default;
  HostWriter& operator=(const HostWriter&) = default;

  /// Records why a send failed and returns `status`; the frame is no longer
  /// pending. The stream is broken from then on (every later send() returns
  /// closed) unless none of the frame went out: a payload too large, or a
  /// deadline that passed before its first byte (timeout with no fault).
  ChannelStatus fail(ChannelStatus status, FrameFault fault, const char* format, ...) noexcept
      __attribute__((format(printf, 4, 5)));
  /// The checks every start() makes before a frame of `payload_bytes` goes
  /// as frame `next`, whatever carries it: ok, or the failure, recorded as
  /// fail() does. Closed if the stream is broken or closing (`closing`: closed
  /// locally); closed, breaking the stream, while a frame is pending (start()'s
  /// precondition broken: the two would interleave); too_large past
  /// `max_payload`.
  ChannelStatus check_start(bool closing, std::uint64_t next, std::size_t payload_bytes,
                            std::uint64_t max_payload) noexcept;

  bool pending_ = false;
  bool broken_ = false;
  FrameFault fault_ = FrameFault::none;
  char error_[256] = {};
};

/// The reading end of a stream between hosts.
class HostReader {
public:
  using Message = ChannelReader::Message;
  virtual ~HostReader() = default;
  /// Waits for the next frame and checks it; on ok, `message.payload` points
  /// into the reader's buffer until the next receive().
  virtual ChannelStatus receive(Message& message, Deadline deadline) noexcept = 0;
  /// Stops reading; wakes a receive() blocked in another thread.
  virtual void close() noexcept = 0;
  /// Why receive() failed; a failure is final.
  FrameFault fault() const noexcept { return fault_; }
  std::string_view error() const noexcept { return error_; }

protected:
  HostReader() = default;
  HostReader(const HostReader&) = default;
  HostReader& operator=(const HostReader&) = default;

  /// Records why a receive failed and returns `status`, which every later
  /// receive() returns too.
  ChannelStatus fail(ChannelStatus status, FrameFault fault, const char* format, ...) noexcept
      __attribute__((format(printf, 4, 5)));
  /// The same, where error_ already says why (the frame checks wrote it).
  ChannelStatus fail(ChannelStatus status, FrameFault fault) noexcept;

  ChannelStatus failed_ = ChannelStatus::ok;
  FrameFault fault_ = FrameFault::none;
  char error_[256] = {};
};

} // namespace cg::detail
