// net/net.hpp - network endpoints and the status of the TCP set-up calls.
//
// Actors on different hosts find each other by "host:port" strings (the
// rendezvous table, the CG_RENDEZVOUS variable) and set their channels up with
// calls that can fail in a handful of ways; both are spelled here once so that
// net/rendezvous.hpp and net/tcp_setup.hpp agree on them.
//
//   std::optional<cg::Endpoint> at = cg::parse_endpoint("10.0.0.7:4100");  // {"10.0.0.7", 4100}
//   cg::parse_endpoint("[fe80::1]:80");                                      // {"fe80::1", 80}
//   cg::to_string(*at);                                                      // "10.0.0.7:4100"
//
// Contract: set-up calls return a NetStatus and leave a human-readable reason
// (naming the peer and what was expected) in the object's error(); they never
// throw. The driver turns a failure into a cg::Error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cg {

// A TCP address: a host name or numeric IPv4/IPv6 address, and a port.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Parses "host:port" or "[ipv6]:port". The host must be non-empty and free of
// whitespace, the port a decimal number in 0..65535 (0 = "any", for listening).
std::optional<Endpoint> parse_endpoint(std::string_view text);

// "host:port", or "[host]:port" when the host contains ':' (IPv6).
std::string to_string(const Endpoint& endpoint);

// Whether `host` is a numeric IPv4 or IPv6 address (not a name to resolve).
bool is_numeric_address(const std::string& host) noexcept;

enum class NetStatus {
  ok,
  timeout,          // the deadline passed (the error names what never happened)
  closed,           // the peer closed the connection
  rejected,         // the peer refused the request (its reason is in the error)
  protocol_error,   // the peer sent something this protocol does not allow
  bad_address,      // an address could not be parsed or resolved
  invalid_argument, // a name or option the protocol cannot carry (the error says which)
  system_error,     // a socket call failed (the error carries strerror)
};

const char* to_string(NetStatus status) noexcept;

} // namespace cg
