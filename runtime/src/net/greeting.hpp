// net/greeting.hpp - What the driver's rendezvous tells every actor process: a fixed binary layout.
//
// An actor process of another host lays out a private segment as the
// driver's (actor/segment.hpp): it needs the launch's geometry
// (cg/detail/launch_geometry.hpp) and what carries the communicator groups,
// and for its streams how long a silent host is given and what carries them.
// The driver's rendezvous sends these once, with its answer to HELLO
// (net/rendezvous.hpp). They travel as data, not as text to scan: a fixed
// layout of integers of stated widths, little-endian, opening with a magic
// and a version, so that a peer of another build is a clear error, and read
// only where the length is exactly the version's.
//
//   offset  bytes  field
//        0      4  magic: the ASCII bytes "CGGR"
//        4      2  version: 2
//        6      1  transport (HostTransport): 0 tcp, 1 ucx
//        7      1  communicator (CommunicatorKind): 0 host, 1 nccl
//        8      4  geometry.max_in_flight, 1 to 2^20
//       12      4  geometry.slot_bytes, kMinSlotBytes to 2^30
//       16      8  geometry.communicator_bytes, at most 2^40 (0: no groups)
//       24      4  geometry.profile_executions (0: no profile)
//       28      4  silence in milliseconds, 1 to 3,600,000
//       32      4  geometry.profile_every, 1 to kMostProfileEvery
//       36         (end)
//
// The rendezvous speaks lines of ASCII, so on its line the bytes are written
// as hexadecimal digits, two a byte, in order (greeting_text).
#pragma once

#include "net/scale_out.hpp"
#include <cg/detail/launch_geometry.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cg::detail {

struct Greeting {
  LaunchGeometry geometry; // as launched (actor/segment.hpp's SegmentHeader)
  CommunicatorKind communicator = CommunicatorKind::host;
  std::chrono::milliseconds silence{0}; // LaunchOptions::partition_timeout
  HostTransport transport = HostTransport::tcp;
};

inline constexpr std::uint16_t kGreetingVersion = 2;
inline constexpr std::size_t kGreetingBytes = 36;
using GreetingBytes = std::array<std::byte, kGreetingBytes>;

/// The greeting in its layout. Precondition: its values are in range (what
/// decode_greeting() accepts).
GreetingBytes encode_greeting(const Greeting& greeting);

/// Reads a greeting from exactly its bytes: false, with why in `error` (a
/// sentence about "the greeting"), for a wrong magic, version or length or a
/// value out of range; `greeting` is then unchanged.
bool decode_greeting(std::span<const std::byte> bytes, Greeting& greeting, std::string& error);

/// The greeting as the rendezvous's line carries it: its bytes in hexadecimal.
std::string greeting_text(const Greeting& greeting);

/// Reads greeting_text()'s form: as decode_greeting(), and false for text
/// that is not hexadecimal digits, two a byte.
bool read_greeting_text(std::string_view text, Greeting& greeting, std::string& error);

} // namespace cg::detail
