// net.cpp - parsing and printing endpoints, naming set-up statuses.
#include "net/net.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace cg {

bool is_numeric_address(const std::string& host) noexcept {
  unsigned char address[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), address) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), address) == 1;
}

std::optional<Endpoint> parse_endpoint(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return std::nullopt; // IPv6 needs brackets
  }
  if (host.empty() || port.empty() || port.size() > 5)
    return std::nullopt;
  for (const char c : host) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '[' || c == ']')
      return std::nullopt;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535)
    return std::nullopt;
  return Endpoint{std::string(host), static_cast<std::uint16_t>(value)};
}

std::string to_string(const Endpoint& endpoint) {
  const std::string port = std::to_string(endpoint.port);
  if (endpoint.host.find(':') != std::string::npos)
    return "[" + endpoint.host + "]:" + port;
  return endpoint.host + ":" + port;
}

const char* to_string(NetStatus status) noexcept {
  switch (status) {
  case NetStatus::ok:
    return "ok";
  case NetStatus::timeout:
    return "timeout";
  case NetStatus::closed:
    return "closed";
  case NetStatus::rejected:
    return "rejected";
  case NetStatus::protocol_error:
    return "protocol_error";
  case NetStatus::bad_address:
    return "bad_address";
  case NetStatus::invalid_argument:
    return "invalid_argument";
  case NetStatus::system_error:
    return "system_error";
  }
  return "unknown";
}

} // namespace cg
