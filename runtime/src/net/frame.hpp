// net/frame.hpp - the wire format of a frame of a channel between hosts (internal).
//
// Spelled out once here: both transports of a stream between hosts read and
// write frames (net/tcp_channel.hpp, net/ucx_channel.hpp), the channel set-up
// (net/tcp_setup.hpp) sends its handshake as frames, and tests
// forge frames byte by byte to check that every fault is caught.
//
// A frame is a 32-byte header, `length` payload bytes and a 4-byte trailer.
// Every field is little-endian:
//
//   offset size field
//        0    4 magic     0x46544743, the bytes "CGTF"
//        4    2 version   3
//        6    2 kind      0 value, 1 error (cg::MessageKind); 2 hello, 3 verdict,
//                         4 challenge (set-up only)
//        8    8 sequence  0 for a stream's first data frame, then +1 per frame
//       16    8 length    payload bytes
//       24    4 reserved  0
//       28    4 header    CRC-32C of the 28 bytes before it
//       32      payload
//   32 + length 4 checksum CRC-32C of the 32 header bytes (offsets 24 to 31 taken
//                         as 0), then the payload
//
// The header's own checksum is checked before its length is believed: a
// corrupted length would otherwise have a reader wait for bytes that never
// come (version 1 had no such field: its offset 28 was reserved).
//
// The frame's checksum follows the payload (version 2 carried it at offset
// 24) so that a writer computes it as it sends: each piece just before the
// socket copies it, from the cache, instead of a pass over the whole payload
// before its first byte may leave. That pass cost a 64 MiB transfer between
// two hosts a fifth of its time (docs/hosts.md).
//
// Set-up frames (challenge, hello, verdict) always carry sequence 0 and are not counted:
// the first data frame after a handshake is still sequence 0.
//
// On a connection the set-up made, every data frame is followed by a 16-byte
// tag (net/frame_auth.hpp): Poly1305 over its header and payload under a key
// of that connection, direction and place in the stream. A checksum catches
// what the wire breaks; the tag what someone on the path rewrites (a
// checksum they would recompute). Set-up frames carry none: the hello and the
// verdict prove the secret themselves, and the keys come from them.
#pragma once

#include "net/frame_auth.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cg {

// Why a call on a framed stream (a TCP or UCX channel between hosts) failed,
// beyond its ChannelStatus.
enum class FrameFault {
  none,
  peer_closed,       // the peer closed the connection between frames
  truncated,         // the peer closed the connection inside a frame
  connection_error,  // the socket failed (reset, ...)
  closed_locally,    // close() was called on this end
  send_timeout,      // the send deadline passed mid-frame; the stream was shut down
  bad_magic,         // the bytes where a header should start are not "CGTF"
  bad_version,       // a frame of another protocol version
  bad_header,        // a header that disagrees with the message carrying it (UCX)
  too_large,         // a payload exceeds max_payload
  no_memory,         // no buffer for a frame within max_payload
  checksum_mismatch, // the CRC-32C does not match the header and payload received
  bad_kind,          // a kind that is neither value nor error
  lost_frame,        // a sequence number ahead of the expected one
  reordered_frame,   // a sequence number behind the expected one
  bad_tag,           // the tag does not match: rewritten on the way, or not from the peer
};

const char* to_string(FrameFault fault) noexcept;

} // namespace cg

namespace cg::detail {

inline constexpr std::uint32_t frame_magic = 0x4654'4743u; // "CGTF" as little-endian bytes
inline constexpr std::uint16_t frame_version = 3;
inline constexpr std::size_t frame_header_bytes = 32;
inline constexpr std::size_t frame_reserved_offset = 24;
inline constexpr std::size_t frame_header_checksum_offset = 28;
inline constexpr std::size_t frame_trailer_bytes = 4;

enum class FrameKind : std::uint16_t {
  value = 0,
  error = 1,
  hello = 2,
  verdict = 3,
  challenge = 4
};

struct FrameHeader {
  std::uint32_t magic = frame_magic;
  std::uint16_t version = frame_version;
  std::uint16_t kind = 0;
  std::uint64_t sequence = 0;
  std::uint64_t length = 0;
  std::uint32_t header_checksum = 0; // decoded; encoding computes it
};

// Writes frame_header_bytes: the fields of `header`, then the header's own
// checksum of them (header.header_checksum is not used).
void encode_frame_header(const FrameHeader& header, std::byte* out) noexcept;
FrameHeader decode_frame_header(const std::byte* in) noexcept; // reads frame_header_bytes

// The checksum a frame with this header and payload carries after the payload.
std::uint32_t frame_checksum(const FrameHeader& header,
                             std::span<const std::byte> payload) noexcept;
// The trailer: frame_trailer_bytes.
void encode_frame_trailer(std::uint32_t checksum, std::byte* out) noexcept;
std::uint32_t decode_frame_trailer(const std::byte* in) noexcept;
// A whole frame with this header and payload, as bytes: the set-up's
// frames, and the frames tests forge. With a key, followed by its tag, as
// frame `place` of that key's stream.
std::string encoded_frame(const FrameHeader& header, std::span<const std::byte> payload);
std::string encoded_frame(const FrameHeader& header, std::span<const std::byte> payload,
                          const FrameKey& key, std::uint64_t place);

// The CRC-32C of an encoded header with its last 8 bytes (reserved, header
// checksum) taken as 0: where a frame's checksum starts before the payload
// is fed in.
std::uint32_t frame_header_checksum(const std::byte* encoded) noexcept;

// What the header checksum field of an encoded header must say.
std::uint32_t header_checksum_of(const std::byte* encoded) noexcept;

// The checks every reader of frames makes, in this order, before it believes
// a data frame. Each returns FrameFault::none, or the fault with one sentence in
// `error` naming the frame (`next`: the sequence number expected).
//
// Once the header is in (`header_crc`: header_checksum_of its bytes): magic,
// version, the header's checksum, and a length within `max_payload` (the
// length says how much more to read).
FrameFault check_frame_start(const FrameHeader& header, std::uint32_t header_crc,
                             std::uint64_t next, std::uint64_t max_payload,
                             std::span<char> error) noexcept;
// Once the whole frame has passed check_frame_end, on a stream with a key:
// whether `carried` is the tag `computed` (bad_tag otherwise).
FrameFault check_frame_tag(const std::byte* computed, const std::byte* carried, std::uint64_t next,
                           std::span<char> error) noexcept;
// Once the whole frame is in (`crc`: the CRC-32C of its header and payload,
// `checked_bytes` of them, as frame_checksum computes it; `carried`: its
// trailer): the checksum before the kind and the sequence number, so that a
// corrupted sequence field is reported as the corruption it is, not as a
// lost frame.
FrameFault check_frame_end(const FrameHeader& header, std::uint32_t crc, std::uint32_t carried,
                           std::size_t checked_bytes, std::uint64_t next,
                           std::span<char> error) noexcept;

} // namespace cg::detail
