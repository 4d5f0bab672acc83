// net/frame_auth.hpp - the keys and tags that authenticate every frame between hosts (internal).
//
// The handshake (net/tcp_setup.hpp) proves the launch's secret, but a relay on
// the path could pass it through unchanged and then rewrite what follows: a
// CRC-32C is recomputed by anyone. So each connection the set-up makes gets
// two keys of its own, one per direction, derived from the secret and the
// handshake that opened it (both nonces: fresh on every connection), and
// every data frame carries a tag after its trailer (net/frame.hpp):
// Poly1305 (libsodium's crypto_onetimeauth) over the frame's 32 header bytes
// and its payload, under a one-time key derived from the direction's key and
// the frame's place in the stream (BLAKE2b, crypto_kdf). The place is the one
// the reader expects, never the number the frame carries, so a frame dropped,
// repeated, reordered, reflected back or taken from another connection fails
// its tag even where someone on the path rewrote its header to look right.
//
// Integrity, not secrecy: payloads still travel in the clear. Poly1305 is
// computed as bytes go and arrive, beside the checksum, piece by piece
// (FrameTag), so a large frame is still never read twice.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cg::detail {

class Secret;

inline constexpr std::size_t frame_tag_bytes = 16;

// The key of one direction of one connection. A default one is none: its
// stream's frames go without a tag and are taken without one (a stream a
// test makes from a bare socket; every connection the set-up makes has keys).
class FrameKey {
public:
  static constexpr std::size_t bytes = 32;
  FrameKey() = default;
  explicit FrameKey(const std::array<unsigned char, bytes>& key) noexcept : key_(key), set_(true) {}
  FrameKey(const FrameKey&) = default;
  FrameKey& operator=(const FrameKey&) = default;
  ~FrameKey();

  bool set() const noexcept { return set_; }
  const unsigned char* data() const noexcept { return key_.data(); }

private:
  std::array<unsigned char, bytes> key_{};
  bool set_ = false;
};

// The keys of one connection: writer -> reader, and the channel that
// returns on it, reader -> writer.
struct ConnectionKeys {
  FrameKey to_reader;
  FrameKey to_writer;
};

// Both directions' keys for the connection whose handshake `handshake`
// describes (graph, channel, actors and both nonces): keyed BLAKE2b under
// the launch's secret, so that only the two peers that proved it know them.
ConnectionKeys connection_keys(const Secret& secret, std::string_view handshake);

// The tag of one frame, computed piece by piece.
class FrameTag {
public:
  // Starts the tag of frame `sequence` of the stream whose key is `key`.
  // Without a key, the tag is 16 zero bytes and nothing is computed.
  void begin(const FrameKey& key, std::uint64_t sequence) noexcept;
  void update(const std::byte* bytes, std::size_t size) noexcept;
  // Writes frame_tag_bytes to `tag`.
  void finish(std::byte* tag) noexcept;

private:
  bool keyed_ = false;
  alignas(16) unsigned char state_[256] = {}; // crypto_onetimeauth_state
};

// The tag of frame `sequence` with these header and payload bytes, at once.
void frame_tag(const FrameKey& key, std::uint64_t sequence, const std::byte* header,
               const std::byte* payload, std::size_t size, std::byte* tag) noexcept;

// Whether two tags are equal, compared in constant time.
bool tags_equal(const std::byte* a, const std::byte* b) noexcept;

} // namespace cg::detail
