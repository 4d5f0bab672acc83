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
  virtual TcpFault fault() const noexcept = 0;
  virtual std::string_view error() const noexcept = 0;
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
  virtual TcpFault fault() const noexcept = 0;
  virtual std::string_view error() const noexcept = 0;
};

} // namespace cg::detail
