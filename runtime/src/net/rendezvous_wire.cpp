// net/rendezvous_wire.cpp - The rendezvous protocol's shared lines and
// names (net/rendezvous_wire.hpp).
#include "net/rendezvous_wire.hpp"

#include "net/rendezvous.hpp"
#include "net/secret.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace cg {

namespace detail {

namespace {

constexpr std::size_t max_name = 128;

// A line and a payload are told apart by a first byte of their own, so that
// neither's tag can ever be offered as the other's.
constexpr std::byte line_kind{'L'};
constexpr std::byte payload_kind{'P'};

void compute_tag(const FrameKey& key, std::uint64_t place, std::byte kind, std::string_view bytes,
                 std::byte* tag) {
  FrameTag t;
  t.begin(key, place);
  t.update(&kind, 1);
  t.update(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  t.finish(tag);
}

std::string hex(const std::byte* bytes, std::size_t size) {
  constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out += digits[std::to_integer<unsigned>(bytes[i]) >> 4];
    out += digits[std::to_integer<unsigned>(bytes[i]) & 15];
  }
  return out;
}

} // namespace

std::string rendezvous_wire::proof_message(std::string_view role, std::string_view graph,
                                           std::string_view server_nonce,
                                           std::string_view client_nonce) {
  return std::string(rendezvous_wire::protocol) + " " + std::string(role) + " " +
         std::string(graph) + " " + std::string(server_nonce) + " " + std::string(client_nonce);
}

rendezvous_wire::LineKeys rendezvous_wire::line_keys(const Secret& secret, std::string_view graph,
                                                     std::string_view server_nonce,
                                                     std::string_view client_nonce) {
  const std::string context = std::string(protocol) + " " + std::string(graph) + " " +
                              std::string(server_nonce) + " " + std::string(client_nonce);
  return {FrameKey(secret.derive("cg-rendezvous client->server " + context)),
          FrameKey(secret.derive("cg-rendezvous server->client " + context))};
}

std::string rendezvous_wire::LineTagger::line(std::string_view text) {
  std::byte tag[frame_tag_bytes];
  compute_tag(key_, next_++, line_kind, text, tag);
  return std::string(text) + " " + hex(tag, sizeof tag) + "\n";
}

std::string rendezvous_wire::LineTagger::payload(std::string_view bytes) {
  std::byte tag[frame_tag_bytes];
  compute_tag(key_, next_++, payload_kind, bytes, tag);
  std::string out(bytes);
  out.append(reinterpret_cast<const char*>(tag), sizeof tag);
  return out;
}

std::optional<std::string> rendezvous_wire::LineChecker::line(std::string_view tagged) {
  if (broken_ || !key_.set() || tagged.size() < line_tag_chars ||
      tagged[tagged.size() - line_tag_chars] != ' ') {
    broken_ = true;
    return std::nullopt;
  }
  const std::string_view text = tagged.substr(0, tagged.size() - line_tag_chars);
  std::byte due[frame_tag_bytes];
  compute_tag(key_, next_++, line_kind, text, due);
  const std::string expected = hex(due, sizeof due);
  const std::string_view got = tagged.substr(tagged.size() - line_tag_chars + 1);
  std::byte equal_if_zero{0};
  for (std::size_t i = 0; i < expected.size(); ++i) // constant time
    equal_if_zero |= static_cast<std::byte>(expected[i] ^ got[i]);
  if (equal_if_zero != std::byte{0}) {
    broken_ = true;
    return std::nullopt;
  }
  return std::string(text);
}

bool rendezvous_wire::LineChecker::payload(std::string_view bytes, std::string_view tag) {
  if (broken_ || !key_.set() || tag.size() != frame_tag_bytes) {
    broken_ = true;
    return false;
  }
  std::byte due[frame_tag_bytes];
  compute_tag(key_, next_++, payload_kind, bytes, due);
  if (!tags_equal(due, reinterpret_cast<const std::byte*>(tag.data())))
    broken_ = true;
  return !broken_;
}

std::vector<std::string_view> rendezvous_wire::fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (start <= line.size()) {
    const std::size_t space = line.find(' ', start);
    const std::size_t stop = space == std::string_view::npos ? line.size() : space;
    fields.push_back(line.substr(start, stop - start));
    if (space == std::string_view::npos)
      break;
    start = space + 1;
  }
  return fields;
}

std::optional<std::uint64_t> rendezvous_wire::number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::string rendezvous_wire::missing_message(std::string_view graph,
                                             const std::vector<std::string>& missing) {
  return "rendezvous for graph '" + std::string(graph) +
         "': timed out; actors that never published: " + join(missing, ", ");
}

bool valid_rendezvous_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > max_name)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

} // namespace detail

std::optional<Endpoint> rendezvous_from_env() {
  const char* value = std::getenv(rendezvous_variable);
  if (value == nullptr)
    return std::nullopt;
  return parse_endpoint(value);
}

} // namespace cg
