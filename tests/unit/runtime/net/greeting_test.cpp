// greeting_test.cpp - tests of the driver's greeting to actor processes (net/greeting.hpp).
//
// The greeting is a fixed binary layout: it comes back whole, its bytes are
// where the layout says and little-endian, and every kind of malformed
// greeting (short, long, another magic or version, a value out of range, a
// line that is not hexadecimal) is refused with its own sentence and leaves
// the greeting being read as it was.
#include "net/greeting.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using cg::CommunicatorKind;
using cg::detail::Greeting;
using cg::detail::HostTransport;

Greeting sample() {
  Greeting g;
  g.geometry.max_in_flight = 3;
  g.geometry.slot_bytes = 4096;
  g.geometry.communicator_bytes = 0x02'0304'0506;
  g.geometry.profile_executions = 100;
  g.geometry.profile_every = 8;
  g.communicator = CommunicatorKind::nccl;
  g.silence = std::chrono::milliseconds(5000);
  g.transport = HostTransport::ucx;
  return g;
}

std::vector<std::byte> bytes_of(const Greeting& g) {
  const cg::detail::GreetingBytes encoded = cg::detail::encode_greeting(g);
  return {encoded.begin(), encoded.end()};
}

void put_u32(std::vector<std::byte>& bytes, std::size_t at, std::uint32_t value) {
  for (std::size_t i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<std::byte>(value >> (8 * i));
}

// What decode_greeting says of `bytes`; "" when it accepts them.
std::string refusal(const std::vector<std::byte>& bytes) {
  Greeting g;
  std::string error;
  return cg::detail::decode_greeting(bytes, g, error) ? std::string() : error;
}

TEST(Greeting, ComesBackWithEveryField) {
  Greeting back;
  std::string error;
  ASSERT_TRUE(cg::detail::decode_greeting(bytes_of(sample()), back, error)) << error;
  EXPECT_EQ(back.geometry.max_in_flight, 3u);
  EXPECT_EQ(back.geometry.slot_bytes, 4096u);
  EXPECT_EQ(back.geometry.communicator_bytes, 0x02'0304'0506u);
  EXPECT_EQ(back.geometry.profile_executions, 100u);
  EXPECT_EQ(back.geometry.profile_every, 8u);
  EXPECT_EQ(back.communicator, CommunicatorKind::nccl);
  EXPECT_EQ(back.silence, std::chrono::milliseconds(5000));
  EXPECT_EQ(back.transport, HostTransport::ucx);

  Greeting plain;
  plain.silence = std::chrono::milliseconds(1);
  ASSERT_TRUE(cg::detail::read_greeting_text(cg::detail::greeting_text(plain), back, error))
      << error;
  EXPECT_EQ(back.geometry.max_in_flight, cg::detail::kDefaultLaunchGeometry.max_in_flight);
  EXPECT_EQ(back.geometry.slot_bytes, cg::detail::kDefaultLaunchGeometry.slot_bytes);
  EXPECT_EQ(back.geometry.profile_executions, 0u);
  EXPECT_EQ(back.geometry.profile_every, 1u);
  EXPECT_EQ(back.communicator, CommunicatorKind::host);
  EXPECT_EQ(back.silence, std::chrono::milliseconds(1));
  EXPECT_EQ(back.transport, HostTransport::tcp);
}

TEST(Greeting, IsLittleEndianIntegersAtTheLayoutsOffsets) {
  EXPECT_EQ(cg::detail::greeting_text(sample()),
            "43474752"         // "CGGR"
            "0200"             // version 2
            "01"               // ucx
            "01"               // nccl
            "03000000"         // max_in_flight
            "00100000"         // slot_bytes 4096
            "0605040302000000" // communicator_bytes
            "64000000"         // profile_executions 100
            "88130000"         // silence 5000 ms
            "08000000");       // profile_every 8
  EXPECT_EQ(cg::detail::kGreetingBytes, 36u);
}

TEST(Greeting, TooShortForItsMagicAndVersionIsRefused) {
  EXPECT_EQ(refusal({std::byte{'C'}, std::byte{'G'}, std::byte{'G'}}),
            "the greeting is 3 bytes, too short to hold its magic and version (6)");
  EXPECT_EQ(refusal({}), "the greeting is 0 bytes, too short to hold its magic and version (6)");
}

TEST(Greeting, WithAnotherMagicIsRefused) {
  std::vector<std::byte> bytes = bytes_of(sample());
  bytes[3] = std::byte{'X'};
  EXPECT_EQ(refusal(bytes),
            "the greeting does not begin with the magic \"CGGR\": its sender is no cg driver");
}

TEST(Greeting, OfAnotherVersionIsRefusedBeforeItsLength) {
  std::vector<std::byte> bytes = bytes_of(sample());
  bytes[4] = std::byte{3};
  bytes.resize(40); // a later version may be longer: the version is what is wrong
  EXPECT_EQ(refusal(bytes), "the greeting is version 3, and this actor executable reads version "
                            "2: the driver and the actor executable are of different builds");
}

TEST(Greeting, ShorterOrLongerThanItsVersionIsRefused) {
  std::vector<std::byte> bytes = bytes_of(sample());
  bytes.pop_back();
  EXPECT_EQ(refusal(bytes), "the greeting is 35 bytes; version 2 has 36");
  bytes.resize(6);
  EXPECT_EQ(refusal(bytes), "the greeting is 6 bytes; version 2 has 36");
  bytes = bytes_of(sample());
  bytes.push_back(std::byte{0});
  EXPECT_EQ(refusal(bytes), "the greeting is 37 bytes; version 2 has 36");
}

TEST(Greeting, NamingAnUnknownTransportOrCommunicatorIsRefused) {
  std::vector<std::byte> bytes = bytes_of(sample());
  bytes[6] = std::byte{2};
  EXPECT_EQ(refusal(bytes), "the greeting names transport 2, neither 0 (tcp) nor 1 (ucx)");
  bytes = bytes_of(sample());
  bytes[7] = std::byte{7};
  EXPECT_EQ(refusal(bytes),
            "the greeting names communicator kind 7, neither 0 (host) nor 1 (nccl)");
}

TEST(Greeting, WithAGeometryOrSilenceOutOfRangeIsRefused) {
  std::vector<std::byte> bytes = bytes_of(sample());
  put_u32(bytes, 8, 0);
  EXPECT_EQ(refusal(bytes), "the greeting's max_in_flight is 0; it must be from 1 to 1048576");
  bytes = bytes_of(sample());
  put_u32(bytes, 12, 255);
  EXPECT_EQ(refusal(bytes), "the greeting's slot_bytes is 255; it must be from 256 to 1073741824");
  bytes = bytes_of(sample());
  bytes[21] = std::byte{1}; // 2^40 and more
  EXPECT_EQ(refusal(bytes), "the greeting's communicator_bytes is 1108152157446; it must be from "
                            "0 to 1099511627776");
  bytes = bytes_of(sample());
  put_u32(bytes, 28, 0);
  EXPECT_EQ(refusal(bytes),
            "the greeting's silence in milliseconds is 0; it must be from 1 to 3600000");
  bytes = bytes_of(sample());
  put_u32(bytes, 32, 0);
  EXPECT_EQ(refusal(bytes), "the greeting's profile_every is 0; it must be from 1 to 1000000");
  put_u32(bytes, 32, 1'000'001);
  EXPECT_EQ(refusal(bytes),
            "the greeting's profile_every is 1000001; it must be from 1 to 1000000");
}

TEST(Greeting, ThatIsRefusedLeavesTheGreetingAsItWas) {
  std::vector<std::byte> bytes = bytes_of(sample());
  put_u32(bytes, 28, 3'600'001);
  Greeting g;
  std::string error;
  EXPECT_FALSE(cg::detail::decode_greeting(bytes, g, error));
  EXPECT_EQ(g.silence, std::chrono::milliseconds(0));
  EXPECT_EQ(g.transport, HostTransport::tcp);
  EXPECT_EQ(g.communicator, CommunicatorKind::host);
}

TEST(Greeting, OnItsLineIsRefusedUnlessWholeHexadecimalBytes) {
  const std::string text = cg::detail::greeting_text(sample());
  Greeting g;
  std::string error;
  EXPECT_FALSE(cg::detail::read_greeting_text(text.substr(1), g, error));
  EXPECT_EQ(error, "the greeting is 71 hexadecimal digits, an odd number: it is not whole bytes");
  std::string bad = text;
  bad[5] = 'g';
  EXPECT_FALSE(cg::detail::read_greeting_text(bad, g, error));
  EXPECT_EQ(error, "the greeting has a character that is no hexadecimal digit at 5");
  // The text greeting of earlier builds.
  EXPECT_FALSE(cg::detail::read_greeting_text(
      "slots=3 slot_bytes=4096 silence_ms=9 transport=tcp profile=0 groups=0", g, error));
  EXPECT_EQ(error, "the greeting has a character that is no hexadecimal digit at 0");
  EXPECT_FALSE(cg::detail::read_greeting_text(text.substr(0, 62), g, error));
  EXPECT_EQ(error, "the greeting is 31 bytes; version 2 has 36");
  EXPECT_TRUE(cg::detail::read_greeting_text(text, g, error)) << error;
}

} // namespace
