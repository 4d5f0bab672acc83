// net/rendezvous_wire.hpp - What the rendezvous server and its client
// both say: the protocol's name and limits, and the reading and writing of its
// lines (the protocol itself is documented in net/rendezvous.hpp).
#pragma once

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

// The fields of a line, separated by single spaces (empty fields kept).
std::vector<std::string_view> fields(std::string_view line);

// A decimal number that is the whole of `text`; nothing otherwise.
std::optional<std::uint64_t> number(std::string_view text);

// The error both sides give when actors never published before the deadline.
std::string missing_message(std::string_view graph, const std::vector<std::string>& missing);

} // namespace cg::detail::rendezvous_wire
