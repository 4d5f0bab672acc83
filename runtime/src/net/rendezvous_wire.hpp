// net/rendezvous_wire.hpp - What the rendezvous server and its client
// both say: the protocol's name and limits, and the reading and writing of its
// lines (the protocol itself is documented in net/rendezvous.hpp).
//
// Every line after HELLO, and every counted payload, carries a tag: the
// handshake proves the secret, but a relay on the path could pass it through
// and then rewrite a PUBLISH. So each connection gets two keys, one per
// direction, derived from the secret, the graph and both nonces (fresh on
// every connection), and each line ends in " <tag>": Poly1305 over the line
// under a one-time key for its place in that direction's stream, as frames
// are tagged (net/frame_auth.hpp). The place is the one the reader counts,
// never sent, so a line rewritten, dropped, replayed, reordered, reflected
// back or taken from another connection fails its tag.
#pragma once

#include "net/frame_auth.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cg::detail::rendezvous_wire {

inline constexpr std::string_view protocol = "cg-rendezvous/3";
// The longest line either side accepts, newline excluded.
inline constexpr std::size_t max_line = 4096;

// What each side of a HELLO proves: the graph, both nonces and its role, so a
// proof is good for one connection and one direction only.
std::string proof_message(std::string_view role, std::string_view graph,
                          std::string_view server_nonce, std::string_view client_nonce);

// The keys of one connection, after its HELLO: client -> server and back.
struct LineKeys {
  FrameKey to_server;
  FrameKey to_client;
};
LineKeys line_keys(const Secret& secret, std::string_view graph, std::string_view server_nonce,
                   std::string_view client_nonce);

// What a tag adds to a line: a space and 32 hexadecimal digits.
inline constexpr std::size_t line_tag_chars = 1 + 2 * frame_tag_bytes;

// The sending end of one direction: tags lines and payloads in the order sent.
class LineTagger {
public:
  LineTagger() = default;
  explicit LineTagger(const FrameKey& key) : key_(key) {}
  bool keyed() const noexcept { return key_.set(); }
  // "<text> <tag>\n".
  std::string line(std::string_view text);
  // The payload, then its frame_tag_bytes of tag.
  std::string payload(std::string_view bytes);

private:
  FrameKey key_;
  std::uint64_t next_ = 0;
};

// The receiving end of one direction: checks each line and payload against
// the tag due at its place. After one fails, every later one fails too.
class LineChecker {
public:
  LineChecker() = default;
  explicit LineChecker(const FrameKey& key) : key_(key) {}
  bool keyed() const noexcept { return key_.set(); }
  // The line (without its newline) less its tag; nothing if the tag is not
  // the one due, or there is no key.
  std::optional<std::string> line(std::string_view tagged);
  // Whether `tag` (frame_tag_bytes) is the one due for these payload bytes.
  bool payload(std::string_view bytes, std::string_view tag);

private:
  FrameKey key_;
  std::uint64_t next_ = 0;
  bool broken_ = false;
};

// The fields of a line, separated by single spaces (empty fields kept).
std::vector<std::string_view> fields(std::string_view line);

// A decimal number that is the whole of `text`; nothing otherwise.
std::optional<std::uint64_t> number(std::string_view text);

// The error both sides give when actors never published before the deadline.
std::string missing_message(std::string_view graph, const std::vector<std::string>& missing);

} // namespace cg::detail::rendezvous_wire
