// greeting.cpp - Writing and reading the driver's greeting (net/greeting.hpp).
//
// Every integer is written and read a byte at a time, least significant
// first, so the layout is little-endian whatever the host's byte order.
#include "net/greeting.hpp"

#include <cg/detail/graph_spec.hpp>

#include <cstring>
#include <vector>

namespace cg::detail {
namespace {

constexpr char kMagic[4] = {'C', 'G', 'G', 'R'};
// What a version's length check needs before it: the magic and the version.
constexpr std::size_t kPrefixBytes = 6;

constexpr std::uint32_t kMostInFlight = 1u << 20;
constexpr std::uint32_t kMostSlotBytes = 1u << 30;
constexpr std::uint64_t kMostCommunicatorBytes = std::uint64_t{1} << 40;
constexpr std::int64_t kMostSilenceMs = 3'600'000;

template <class T> void put(GreetingBytes& out, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[at + i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
}

template <class T> T get(std::span<const std::byte> in, std::size_t at) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= std::uint64_t{std::to_integer<std::uint8_t>(in[at + i])} << (8 * i);
  return static_cast<T>(value);
}

bool out_of_range(std::string& error, const char* field, std::uint64_t value, std::uint64_t least,
                  std::uint64_t most) {
  error = std::string("the greeting's ") + field + " is " + std::to_string(value) +
          "; it must be from " + std::to_string(least) + " to " + std::to_string(most);
  return false;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

GreetingBytes encode_greeting(const Greeting& g) {
  GreetingBytes out{};
  for (std::size_t i = 0; i < sizeof kMagic; ++i)
    out[i] = static_cast<std::byte>(kMagic[i]);
  put<std::uint16_t>(out, 4, kGreetingVersion);
  put<std::uint8_t>(out, 6, g.transport == HostTransport::ucx ? 1 : 0);
  put<std::uint8_t>(out, 7, g.communicator == CommunicatorKind::nccl ? 1 : 0);
  put<std::uint32_t>(out, 8, g.geometry.max_in_flight);
  put<std::uint32_t>(out, 12, g.geometry.slot_bytes);
  put<std::uint64_t>(out, 16, g.geometry.communicator_bytes);
  put<std::uint32_t>(out, 24, g.geometry.profile_executions);
  put<std::uint32_t>(out, 28, static_cast<std::uint32_t>(g.silence.count()));
  put<std::uint32_t>(out, 32, g.geometry.profile_every);
  return out;
}

bool decode_greeting(std::span<const std::byte> in, Greeting& greeting, std::string& error) {
  if (in.size() < kPrefixBytes) {
    error = "the greeting is " + std::to_string(in.size()) +
            " bytes, too short to hold its magic and version (" + std::to_string(kPrefixBytes) +
            ")";
    return false;
  }
  if (std::memcmp(in.data(), kMagic, sizeof kMagic) != 0) {
    error = "the greeting does not begin with the magic \"CGGR\": its sender is no cg driver";
    return false;
  }
  if (const auto version = get<std::uint16_t>(in, 4); version != kGreetingVersion) {
    error = "the greeting is version " + std::to_string(version) +
            ", and this actor executable reads version " + std::to_string(kGreetingVersion) +
            ": the driver and the actor executable are of different builds";
    return false;
  }
  if (in.size() != kGreetingBytes) {
    error = "the greeting is " + std::to_string(in.size()) + " bytes; version " +
            std::to_string(kGreetingVersion) + " has " + std::to_string(kGreetingBytes);
    return false;
  }
  Greeting g;
  const auto transport = get<std::uint8_t>(in, 6);
  if (transport > 1) {
    error = "the greeting names transport " + std::to_string(transport) +
            ", neither 0 (tcp) nor 1 (ucx)";
    return false;
  }
  g.transport = transport == 1 ? HostTransport::ucx : HostTransport::tcp;
  const auto communicator = get<std::uint8_t>(in, 7);
  if (communicator > 1) {
    error = "the greeting names communicator kind " + std::to_string(communicator) +
            ", neither 0 (host) nor 1 (nccl)";
    return false;
  }
  g.communicator = communicator == 1 ? CommunicatorKind::nccl : CommunicatorKind::host;
  g.geometry.max_in_flight = get<std::uint32_t>(in, 8);
  if (g.geometry.max_in_flight == 0 || g.geometry.max_in_flight > kMostInFlight)
    return out_of_range(error, "max_in_flight", g.geometry.max_in_flight, 1, kMostInFlight);
  g.geometry.slot_bytes = get<std::uint32_t>(in, 12);
  if (g.geometry.slot_bytes < kMinSlotBytes || g.geometry.slot_bytes > kMostSlotBytes)
    return out_of_range(error, "slot_bytes", g.geometry.slot_bytes, kMinSlotBytes, kMostSlotBytes);
  g.geometry.communicator_bytes = get<std::uint64_t>(in, 16);
  if (g.geometry.communicator_bytes > kMostCommunicatorBytes)
    return out_of_range(error, "communicator_bytes", g.geometry.communicator_bytes, 0,
                        kMostCommunicatorBytes);
  g.geometry.profile_executions = get<std::uint32_t>(in, 24);
  const auto silence_ms = get<std::uint32_t>(in, 28);
  if (silence_ms == 0 || silence_ms > kMostSilenceMs)
    return out_of_range(error, "silence in milliseconds", silence_ms, 1, kMostSilenceMs);
  g.silence = std::chrono::milliseconds(silence_ms);
  g.geometry.profile_every = get<std::uint32_t>(in, 32);
  if (g.geometry.profile_every == 0 || g.geometry.profile_every > kMostProfileEvery)
    return out_of_range(error, "profile_every", g.geometry.profile_every, 1, kMostProfileEvery);
  greeting = g;
  return true;
}

std::string greeting_text(const Greeting& greeting) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (std::byte b : encode_greeting(greeting)) {
    const auto v = std::to_integer<unsigned>(b);
    text += digits[v >> 4];
    text += digits[v & 0xf];
  }
  return text;
}

bool read_greeting_text(std::string_view text, Greeting& greeting, std::string& error) {
  std::vector<std::byte> bytes((text.size() + 1) / 2);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int digit = hex_digit(text[i]);
    if (digit < 0) {
      error = "the greeting has a character that is no hexadecimal digit at " + std::to_string(i);
      return false;
    }
    bytes[i / 2] |= static_cast<std::byte>(i % 2 == 0 ? digit << 4 : digit);
  }
  if (text.size() % 2 != 0) {
    error = "the greeting is " + std::to_string(text.size()) +
            " hexadecimal digits, an odd number: it is not whole bytes";
    return false;
  }
  return decode_greeting(bytes, greeting, error);
}

} // namespace cg::detail
