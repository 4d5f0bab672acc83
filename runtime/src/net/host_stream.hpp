// net/host_stream.hpp — one direction of a channel between hosts, whatever
// carries it (internal).
//
// A channel whose writer and reader live on different hosts is a stream of
// frames (net/tcp_frame.hpp): numbered, checksummed, never delivered when
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

#include "net/tcp_frame.hpp"
#include <cg/detail/channel.hpp>

#include <span>
#include <string_view>

namespace cg::detail {

/// The writing end of a stream between hosts.
class HostWriter {
public:
  virtual ~HostWriter() = default;
  /// Sends `payload` as the next frame.
  virtual ChannelStatus send(MessageKind kind, std::span<const std::byte> payload,
                             Deadline deadline) noexcept = 0;
  /// Ends the stream; wakes a send() blocked in another thread.
  virtual void close() noexcept = 0;
  /// Why the last send() failed.
  TcpFault fault() const noexcept { return fault_; }
  std::string_view error() const noexcept { return error_; }

protected:
  HostWriter() = default;
  HostWriter(const HostWriter&) = default;
  HostWriter& operator=(const HostWriter&) = default;

  /// Records why a send failed and returns `status`. The stream is broken
  /// from then on (every later send() returns closed) unless none of the
  /// frame went out: a payload too large, or a deadline that passed before
  /// its first byte (timeout with no fault).
  ChannelStatus fail(ChannelStatus status, TcpFault fault, const char* format, ...) noexcept
      __attribute__((format(printf, 4, 5)));

  bool broken_ = false;
  TcpFault fault_ = TcpFault::none;
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
  TcpFault fault() const noexcept { return fault_; }
  std::string_view error() const noexcept { return error_; }

protected:
  HostReader() = default;
  HostReader(const HostReader&) = default;
  HostReader& operator=(const HostReader&) = default;

  /// Records why a receive failed and returns `status`, which every later
  /// receive() returns too.
  ChannelStatus fail(ChannelStatus status, TcpFault fault, const char* format, ...) noexcept
      __attribute__((format(printf, 4, 5)));
  /// The same, where error_ already says why (the frame checks wrote it).
  ChannelStatus fail(ChannelStatus status, TcpFault fault) noexcept;

  ChannelStatus failed_ = ChannelStatus::ok;
  TcpFault fault_ = TcpFault::none;
  char error_[256] = {};
};

} // namespace cg::detail
