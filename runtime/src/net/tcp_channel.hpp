// net/tcp_channel.hpp - a framed, ordered, checked message stream over a connected TCP socket.
//
// Between actors on different hosts a channel is a TCP stream instead of a
// shared-memory ring. TcpWriter and TcpReader give it the shape of the ring's
// API (a status per call, a MessageKind per message, a Deadline per wait, a
// payload the reader sees in place); the relays of net/scale_out.hpp move
// messages between the two.
//
//   // The writing actor (cg::connect_channel in net/tcp_setup.hpp makes one; or
//   // from any connected TCP socket, which the writer then owns):
//   cg::TcpWriter writer(fd);
//   if (writer.send(cg::MessageKind::value, bytes, cg::Deadline::max()) != cg::ChannelStatus::ok)
//     report(writer.error());
//
//   // The reading actor (cg::TcpChannelListener::accept makes one):
//   cg::TcpReader reader(fd);
//   cg::TcpReader::Message m;
//   switch (reader.receive(m, std::chrono::steady_clock::now() + 5s)) {
//     case cg::ChannelStatus::ok: use(m.kind, m.payload); break;  // valid until the next receive
//     case cg::ChannelStatus::corrupt: throw cg::ChannelError(std::string(reader.error()));
//     ...
//   }
//
// Every message is one frame (net/frame.hpp): a 32-byte little-endian
// header {magic, version, kind, sequence, length, its own CRC-32C}, the
// payload, and the CRC-32C of header and payload; on a stream with a key (every
// one the set-up makes), then a Poly1305 tag of header and payload under it
// (net/frame_auth.hpp), so that bytes rewritten on the way are caught too. The writer numbers
// frames 0, 1, 2, ...; the reader accepts only the next number, so TCP's own guarantees are
// checked, not assumed (a proxy, a reconnect or a bug that drops or repeats data is caught).
//
// Contract
// - receive() returns ok and the next message, or:
//     timeout  the deadline passed; nothing is lost, call again (a partly
//              received frame is kept and completed by the next call);
//     closed   the peer closed the stream (fault() peer_closed, or truncated
//              when it did so inside a frame), the connection failed
//              (connection_error) or close() was called (closed_locally);
//     corrupt  the next frame is bad: bad_magic, bad_version, bad_header,
//              checksum_mismatch, bad_kind, lost_frame (its sequence is ahead:
//              frames were lost), reordered_frame (behind: a frame came again
//              or out of order), too_large (its length exceeds max_payload),
//              bad_tag (its tag does not match: rewritten, or not the peer's);
//     too_large no memory for a frame within max_payload (no_memory).
//   A bad frame is never delivered, and a reader that reported closed, corrupt
//   or too_large keeps reporting it: the stream cannot be trusted past a bad
//   frame. error() then says what happened in one sentence naming the frame,
//   e.g. "lost frame: expected sequence 3, got 5 (2 missing)".
// - send() writes one whole frame (header, payload and checksum in
//   writev-style calls, no copy of the payload; the checksum computed piece
//   by piece just before each goes; start() and finish() are its two halves)
//   or returns: timeout (the deadline passed
//   before any byte of it was sent: nothing happened, call again; if it passes
//   mid-frame the stream is shut down, fault() send_timeout, and later calls
//   return closed), closed (the peer is gone, or close() was called),
//   too_large (the payload exceeds max_payload; nothing sent, the stream stays
//   usable).
// - Deadline::max() waits forever; a deadline in the past looks once.
// - Memory: the reader keeps one buffer, as large as the largest frame so far
//   (and at least 64 KiB); a 64 MiB payload is received straight into it (one
//   copy, kernel to user) and delivered in place. Hot paths allocate nothing
//   and never throw.
// - TCP_NODELAY is set on the socket. It is left in blocking mode (calls that
//   must not block pass MSG_DONTWAIT), so that waiting with Deadline::max()
//   is a single blocking recv()/sendmsg() rather than poll() plus a call.
// - Threading: one thread uses a writer (reader) at a time; close() may be
//   called from any thread and wakes a blocked send() or receive().
#pragma once

#include "net/frame.hpp"
#include "net/host_stream.hpp"
#include <cg/detail/borrowed_runs.hpp>
#include <cg/detail/channel.hpp>

#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace cg {

// Frames larger than this are refused unless a writer and reader agree on more.
inline constexpr std::uint64_t tcp_default_max_payload = std::uint64_t{1} << 30; // 1 GiB

// The writing end. Owns its socket. Movable (not while in use), not copyable.
class TcpWriter final : public detail::HostWriter {
public:
  TcpWriter() = default; // reports closed
  // Takes ownership of `fd`, a connected TCP socket; tags every frame under
  // `key` (none: untagged, as a bare socket's peer expects).
  explicit TcpWriter(int fd, std::uint64_t max_payload = tcp_default_max_payload,
                     const detail::FrameKey& key = {}) noexcept;
  TcpWriter(TcpWriter&& other) noexcept;
  TcpWriter& operator=(TcpWriter&& other) noexcept;
  TcpWriter(const TcpWriter&) = delete;
  TcpWriter& operator=(const TcpWriter&) = delete;
  ~TcpWriter() override;

  // send() sends `payload` as the next frame (see the contract above);
  // start() sends what the socket's buffer takes now, finish() the rest
  // (net/host_stream.hpp).
  ChannelStatus start(MessageKind kind, std::span<const std::byte> payload) noexcept override;
  ChannelStatus finish(Deadline deadline) noexcept override;

  // Sending from the caller's memory (cg/detail/borrowed_runs.hpp): start()
  // for a payload whose `runs` are not in `payload` but where they point,
  // which must stay as they are until the frame is sent or forget_runs().
  // The frame on the wire is the same.
  ChannelStatus start_borrowing(MessageKind kind, std::span<const std::byte> payload,
                                std::span<const detail::BorrowedRun> runs) noexcept;
  // Sends more of the pending frame until it is whole or `until` passes;
  // unlike finish(), a deadline that passes mid-frame leaves it pending, the
  // stream intact. Failures as send()'s.
  ChannelStatus advance(Deadline until) noexcept;
  // Bytes of the pending frame (header and payload) not yet sent.
  std::size_t unsent() const noexcept {
    return pending_ ? detail::frame_header_bytes + payload_.size() + trailer_bytes() - done_ : 0;
  }
  // Payload bytes of the pending frame already sent.
  std::size_t payload_sent() const noexcept {
    return std::min(payload_.size(), done_ > detail::frame_header_bytes
                                         ? done_ - detail::frame_header_bytes
                                         : std::size_t{0});
  }
  // The runs' bytes from payload_sent() on are in the payload now: the rest
  // of the frame goes from there.
  void forget_runs() noexcept { runs_ = {}; }

  // Ends the stream: frames already sent still reach the reader, which then
  // sees closed (peer_closed). Wakes a send() blocked in another thread.
  void close() noexcept override;

  // Gives up the socket (which the caller then owns); the writer reports closed.
  int release_fd() noexcept;

  std::uint64_t sent() const noexcept { return next_; } // frames sent = the next sequence number
  int fd() const noexcept { return fd_; }
  // What the frames are tagged under (a UCX stream that starts from this
  // connection takes it over; tests forge frames with it).
  const detail::FrameKey& key() const noexcept { return key_; }

private:
  // How push() treats a socket that is full.
  enum class Wait { no, until_sent, until_sent_or_deadline };
  ChannelStatus push(Wait wait, Deadline deadline) noexcept;
  template <class Take>
  void for_each_piece(std::size_t from, std::size_t to, Take&& take) const noexcept;
  void checksum_ahead() noexcept;
  // The checksum, and the tag where there is a key.
  std::size_t trailer_bytes() const noexcept {
    return detail::frame_trailer_bytes + (key_.set() ? detail::frame_tag_bytes : 0);
  }

  int fd_ = -1;
  std::uint64_t max_payload_ = tcp_default_max_payload;
  std::uint64_t next_ = 0;
  std::atomic<bool> closing_{false};
  // The frame being sent: its header, its payload, its trailer, how many of
  // their bytes have gone, and how far its checksum has got.
  std::byte head_[detail::frame_header_bytes] = {};
  std::span<const std::byte> payload_;
  std::span<const detail::BorrowedRun> runs_; // parts of payload_ that are elsewhere
  std::byte trailer_[detail::frame_trailer_bytes + detail::frame_tag_bytes] = {};
  std::size_t done_ = 0;
  detail::FrameKey key_;
  detail::FrameTag tag_;    // like crc_, with the header's own 32 bytes
  std::uint32_t crc_ = 0;   // of the header and the first checked_ payload bytes
  std::size_t checked_ = 0; // payload bytes
  bool sealed_ = false;     // the trailer holds the whole checksum
};

// The reading end. Owns its socket and its receive buffer. Movable (not while
// in use), not copyable.
class TcpReader final : public detail::HostReader {
public:
  TcpReader() = default; // reports closed
  // Takes ownership of `fd`, a connected TCP socket; takes only frames
  // tagged under `key` (none: untagged frames).
  explicit TcpReader(int fd, std::uint64_t max_payload = tcp_default_max_payload,
                     const detail::FrameKey& key = {}) noexcept;
  TcpReader(TcpReader&& other) noexcept;
  TcpReader& operator=(TcpReader&& other) noexcept;
  TcpReader(const TcpReader&) = delete;
  TcpReader& operator=(const TcpReader&) = delete;
  ~TcpReader() override;

  // Waits for the next frame and checks it (see the contract above). On ok,
  // `message.payload` points into the reader's buffer until the next receive().
  ChannelStatus receive(Message& message, Deadline deadline) noexcept override;

  // Stops reading: this and every later receive() return closed. Wakes a
  // receive() blocked in another thread.
  void close() noexcept override;

  // Gives up the socket (which the caller then owns); the reader reports closed.
  int release_fd() noexcept;

  std::uint64_t received() const noexcept {
    return next_;
  } // frames delivered = the next expected sequence
  int fd() const noexcept { return fd_; }
  const detail::FrameKey& key() const noexcept { return key_; }

private:
  ChannelStatus fill(std::size_t frame_bytes, Deadline deadline) noexcept;
  bool make_room(std::size_t frame_bytes) noexcept;
  void advance_checksum() noexcept;
  ChannelStatus check_header() noexcept;
  std::size_t trailer_bytes() const noexcept {
    return detail::frame_trailer_bytes + (key_.set() ? detail::frame_tag_bytes : 0);
  }

  int fd_ = -1;
  std::uint64_t max_payload_ = tcp_default_max_payload;
  std::uint64_t next_ = 0; // sequence number of the next frame
  std::atomic<bool> closing_{false};

  // Received bytes: buffer_[begin_, end_) is not yet delivered; the frame being
  // assembled starts at begin_.
  std::byte* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  // The frame being assembled, once its header has been read and checked.
  bool have_header_ = false;
  std::size_t frame_bytes_ = 0; // header + payload + trailer
  std::uint32_t crc_ = 0;       // over the frame's first crc_bytes_ bytes
  std::size_t crc_bytes_ = 0;
  detail::FrameKey key_;
  detail::FrameTag tag_; // over the same bytes (with the header's checksum fields)
};

} // namespace cg
