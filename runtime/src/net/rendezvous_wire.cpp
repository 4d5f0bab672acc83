// net/rendezvous_wire.cpp - The rendezvous protocol's shared lines and
// names (net/rendezvous_wire.hpp).
#include "net/rendezvous_wire.hpp"

#include "net/rendezvous.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace cg {

namespace detail {

namespace {

constexpr std::size_t max_name = 128;

} // namespace

std::string rendezvous_wire::proof_message(std::string_view role, std::string_view graph,
                                           std::string_view server_nonce,
                                           std::string_view client_nonce) {
  return std::string(rendezvous_wire::protocol) + " " + std::string(role) + " " +
         std::string(graph) + " " + std::string(server_nonce) + " " + std::string(client_nonce);
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
