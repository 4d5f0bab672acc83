// net/ucx_channel.hpp - a channel between hosts carried by UCX (internal).
//
// UCX (Debian libucx-dev, its UCP tag API) picks the fastest way between two
// hosts: RDMA over InfiniBand or RoCE (verbs, rdmacm), TCP elsewhere, shared
// memory between processes of one machine; UCX_TLS and UCX_NET_DEVICES choose
// by hand. Small frames go eagerly; large ones by UCX's rendezvous protocol,
// straight from the writer's memory into the reader's buffer (RDMA where the
// transport has it), and are delivered in place.
//
// A stream starts from a TCP channel connection that the authenticated
// set-up made (net/tcp_setup.hpp), and keeps it as its *control*:
//   1. the reader makes a UCX worker of its own and sends, over the control
//      connection, its worker address and a fresh random 64-bit tag;
//   2. the writer makes its worker and an endpoint to that address, and sends
//      every frame with that tag;
//   3. an end that goes away closes the control connection, and the other end
//      sees it at once (and a silent host through the control connection's
//      liveness timeout, net/socket.hpp).
// So only a peer that proved the launch's secret learns where to send, and
// frames from anywhere else would need to guess both the worker's address and
// the tag. Every frame still carries the header of net/frame.hpp
// (sequence number, length, CRC-32C) and the tag of its control connection's
// key (net/frame_auth.hpp), as does the offer of step 1 (tagged as the stream's
// place 2^64 - 1, which no frame reaches): a lost, reordered, repeated,
// corrupted or rewritten frame is a `corrupt` status, never a delivered value.
//
// The contract is TcpWriter's and TcpReader's (net/tcp_channel.hpp), with
// these differences:
//   - send() returns when UCX is done with the payload (the caller may reuse
//     it): for a large frame, when the reader has received it. A deadline that
//     passes while UCX still holds the payload breaks the stream
//     (send_timeout): a send cannot be taken back.
//   - receive() takes each frame whole; the buffer grows to the largest frame
//     (a frame over max_payload is refused before a byte of it is received).
//   - Threading: one thread uses an end at a time (its worker is
//     single-threaded); close() may be called from any thread.
//
// Under ASan or TSan, run with UCX_MEM_EVENTS=no in the environment (the
// test presets do): UCX's memory hooks patch madvise, mmap and malloc beneath
// the sanitizers' interceptors, and UCX reads the setting as its library loads.
#pragma once

#include "net/host_stream.hpp"
#include "net/socket.hpp"
#include "net/tcp_channel.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace cg::detail {

class UcxEnd; // a worker, its wake-up descriptor and the control connection

/// The writing end of a UCX stream.
class UcxWriter final : public HostWriter {
public:
  /// Reads the reader's worker address and tag from `control` (a writer's
  /// connection after the set-up's handshake; the stream takes it over) and
  /// connects. Null, with `error` saying why, on failure.
  static std::unique_ptr<UcxWriter> connect(TcpWriter control, Deadline deadline,
                                            std::string& error,
                                            std::uint64_t max_payload = tcp_default_max_payload);
  ~UcxWriter() override;

  ChannelStatus start(MessageKind kind, std::span<const std::byte> payload) noexcept override;
  ChannelStatus finish(Deadline deadline) noexcept override;
  void close() noexcept override;
  std::uint64_t sent() const noexcept { return next_; }

  /// Sends `frame` as one message exactly as it is: for tests that forge bad
  /// frames (a skipped sequence number, a wrong checksum). Counts nothing.
  ChannelStatus send_forged(std::span<const std::byte> frame, Deadline deadline) noexcept;

private:
  UcxWriter() = default;
  ChannelStatus start_pieces(std::size_t count, bool counted) noexcept;

  std::unique_ptr<UcxEnd> end_;
  void* endpoint_ = nullptr; // ucp_ep_h
  std::uint64_t tag_ = 0;
  std::uint64_t max_payload_ = tcp_default_max_payload;
  std::uint64_t next_ = 0;
  FrameKey key_; // the control connection's: frames are tagged under it
  std::size_t trailer_bytes() const noexcept {
    return frame_trailer_bytes + (key_.set() ? frame_tag_bytes : 0);
  }
  // The frame being sent, which UCX may read until it is done: its header
  // and trailer, and the pieces (laid out as UCX's ucp_dt_iov_t) of header,
  // payload and trailer.
  std::byte head_[frame_header_bytes] = {};
  std::byte trailer_[frame_trailer_bytes + frame_tag_bytes] = {};
  struct Piece {
    const void* buffer;
    std::size_t length;
  };
  Piece pieces_[3] = {};
  std::byte small_[1024] = {}; // a small frame, copied whole
  void* request_ = nullptr;    // UCX's request for it while pending (ucs_status_ptr_t)
  bool counted_ = false;       // it takes a sequence number (a forged one does not)
};

/// The reading end of a UCX stream.
class UcxReader final : public HostReader {
public:
  /// Makes the reader's worker and sends its address and a fresh tag over
  /// `control` (a reader's connection after the set-up's handshake; the
  /// stream takes it over). Null, with `error` saying why, on failure.
  static std::unique_ptr<UcxReader> offer(TcpReader control, Deadline deadline, std::string& error,
                                          std::uint64_t max_payload = tcp_default_max_payload);
  ~UcxReader() override;

  ChannelStatus receive(Message& message, Deadline deadline) noexcept override;
  void close() noexcept override;
  std::uint64_t received() const noexcept { return next_; }

private:
  UcxReader() = default;
  ChannelStatus take(void* message, std::size_t bytes) noexcept;

  std::unique_ptr<UcxEnd> end_;
  std::uint64_t tag_ = 0;
  std::uint64_t max_payload_ = tcp_default_max_payload;
  std::uint64_t next_ = 0;
  FrameKey key_;
  std::size_t trailer_bytes() const noexcept {
    return frame_trailer_bytes + (key_.set() ? frame_tag_bytes : 0);
  }
  std::byte* buffer_ = nullptr;
  std::size_t capacity_ = 0;
};

/// "UCX 1.13.1": the library's version, for logs and the benchmark.
std::string ucx_version();

} // namespace cg::detail
