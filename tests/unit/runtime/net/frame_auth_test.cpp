// frame_auth_test.cpp - tests of the tags on frames between hosts (net/frame_auth.hpp).
//
// The relay on the path is the test itself: it takes each frame a writer with
// a key sends on one loopback connection and writes it on to a second one, as
// it was or rewritten with both of its checksums recomputed (what anyone on
// the path can do), and a reader with the same key judges it there. So the
// checksums always pass: only the tag can catch a rewrite.
#include "net/frame.hpp"
#include "net/frame_auth.hpp"
#include "net/secret.hpp"
#include "net/socket.hpp"
#include "net/tcp_channel.hpp"
#include "net/tcp_setup.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::ChannelStatus;
using cg::FrameFault;
using cg::detail::FrameHeader;

constexpr const char* rewritten =
    "authentication failed: its tag does not match its bytes (rewritten on the way, or not sent "
    "by the peer that proved the launch's secret)";

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

const cg::detail::Secret& launch_secret() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return secret;
}

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string text_of(const cg::TcpReader::Message& m) {
  return std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
}

// Two ends of a loopback TCP connection.
struct Connection {
  cg::detail::UniqueFd writer, reader;
};

Connection connect_loopback() {
  cg::detail::UniqueFd listener;
  Connection c;
  cg::Endpoint bound;
  std::string error;
  EXPECT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), cg::NetStatus::ok)
      << error;
  EXPECT_EQ(cg::detail::connect_tcp(bound, in(5s), c.writer, error), cg::NetStatus::ok) << error;
  EXPECT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), c.reader, error), cg::NetStatus::ok)
      << error;
  return c;
}

// A keyed writer, the relay's two connections, and a keyed reader:
// writer -> to_relay -> the relay (the test) -> from_relay -> reader.
struct Path {
  explicit Path(const cg::detail::FrameKey& send, const cg::detail::FrameKey& receive)
      : to_relay(connect_loopback()), from_relay(connect_loopback()),
        writer(to_relay.writer.release(), cg::tcp_default_max_payload, send),
        reader(from_relay.reader.release(), cg::tcp_default_max_payload, receive) {}

  // The next frame the writer sent, whole: header, payload, checksum, tag.
  std::string take() {
    std::string frame(cg::detail::frame_header_bytes, '\0');
    std::string error;
    EXPECT_EQ(
        cg::detail::receive_exact(to_relay.reader.get(), frame.data(), frame.size(), in(5s), error),
        cg::NetStatus::ok)
        << error;
    const FrameHeader header =
        cg::detail::decode_frame_header(reinterpret_cast<const std::byte*>(frame.data()));
    frame.resize(cg::detail::frame_header_bytes + header.length + cg::detail::frame_trailer_bytes +
                 cg::detail::frame_tag_bytes);
    EXPECT_EQ(cg::detail::receive_exact(
                  to_relay.reader.get(), frame.data() + cg::detail::frame_header_bytes,
                  frame.size() - cg::detail::frame_header_bytes, in(5s), error),
              cg::NetStatus::ok)
        << error;
    return frame;
  }
  void pass(const std::string& frame) {
    std::string error;
    ASSERT_EQ(
        cg::detail::send_all(from_relay.writer.get(), frame.data(), frame.size(), in(5s), error),
        cg::NetStatus::ok)
        << error;
  }

  Connection to_relay, from_relay;
  cg::TcpWriter writer;
  cg::TcpReader reader;
};

// Rewrites a frame's header (through `edit`) and recomputes its header
// checksum and its frame checksum, as a relay on the path can; the tag stays.
template <class Edit> void rewrite(std::string& frame, Edit edit) {
  auto* bytes = reinterpret_cast<std::byte*>(frame.data());
  FrameHeader header = cg::detail::decode_frame_header(bytes);
  edit(header, bytes + cg::detail::frame_header_bytes);
  cg::detail::encode_frame_header(header, bytes);
  const std::span<const std::byte> payload(bytes + cg::detail::frame_header_bytes, header.length);
  cg::detail::encode_frame_trailer(cg::detail::frame_checksum(header, payload),
                                   bytes + cg::detail::frame_header_bytes + header.length);
}

cg::detail::ConnectionKeys keys(const std::string& handshake) {
  return cg::detail::connection_keys(launch_secret(), handshake);
}

TEST(FrameTags, FramesPassedOnUnchangedArriveWhole) {
  const cg::detail::ConnectionKeys k = keys("a connection");
  Path path(k.to_reader, k.to_reader);
  const std::vector<std::string> payloads = {"", "abc", std::string((1 << 20) + 5, 'x')};
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    std::thread send([&] {
      EXPECT_EQ(path.writer.send(cg::MessageKind::value, bytes_of(payloads[i]), in(5s)),
                ChannelStatus::ok);
    });
    const std::string frame = path.take();
    send.join();
    EXPECT_EQ(frame.size(), 32 + payloads[i].size() + 4 + 16) << "the tag follows the checksum";
    path.pass(frame);
    cg::TcpReader::Message m{};
    ASSERT_EQ(path.reader.receive(m, in(5s)), ChannelStatus::ok) << path.reader.error();
    EXPECT_EQ(text_of(m), payloads[i]);
    EXPECT_EQ(m.sequence, i);
  }
}

// One frame sent, taken by the relay, changed by `edit`, passed on: what the
// reader says of it.
template <class Edit> std::string judged(Path& path, std::uint16_t kind, Edit edit) {
  EXPECT_EQ(path.writer.send(static_cast<cg::MessageKind>(kind), bytes_of("result 1337"), in(5s)),
            ChannelStatus::ok);
  std::string frame = path.take();
  rewrite(frame, edit);
  path.pass(frame);
  cg::TcpReader::Message m{};
  const ChannelStatus status = path.reader.receive(m, in(5s));
  EXPECT_EQ(status, ChannelStatus::corrupt) << "delivered: " << text_of(m);
  EXPECT_EQ(path.reader.fault(), FrameFault::bad_tag);
  return std::string(path.reader.error());
}

TEST(FrameTags, APayloadByteRewrittenWithItsChecksumsRecomputedIsRefused) {
  const cg::detail::ConnectionKeys k = keys("a connection");
  Path path(k.to_reader, k.to_reader);
  EXPECT_EQ(judged(path, 0, [](FrameHeader&, std::byte* payload) { payload[10] = std::byte{'8'}; }),
            std::string("frame 0: ") + rewritten);
  // And the stream is not trusted past it.
  cg::TcpReader::Message m{};
  EXPECT_EQ(path.reader.receive(m, in(100ms)), ChannelStatus::corrupt);
}

TEST(FrameTags, AnErrorRewrittenAsAValueIsRefused) {
  const cg::detail::ConnectionKeys k = keys("a connection");
  Path path(k.to_reader, k.to_reader);
  EXPECT_EQ(judged(path, 1, [](FrameHeader& header, std::byte*) { header.kind = 0; }),
            std::string("frame 0: ") + rewritten);
}

TEST(FrameTags, AFrameRepeatedWithItsSequenceNumberRewrittenIsRefused) {
  const cg::detail::ConnectionKeys k = keys("a connection");
  Path path(k.to_reader, k.to_reader);
  ASSERT_EQ(path.writer.send(cg::MessageKind::value, bytes_of("once"), in(5s)), ChannelStatus::ok);
  std::string frame = path.take();
  path.pass(frame);
  cg::TcpReader::Message m{};
  ASSERT_EQ(path.reader.receive(m, in(5s)), ChannelStatus::ok) << path.reader.error();
  rewrite(frame, [](FrameHeader& header, std::byte*) { header.sequence = 1; });
  path.pass(frame);
  EXPECT_EQ(path.reader.receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(path.reader.fault(), FrameFault::bad_tag);
  EXPECT_EQ(std::string(path.reader.error()), std::string("frame 1: ") + rewritten);
}

TEST(FrameTags, AFrameOfAnotherConnectionOfTheSameChannelIsRefused) {
  // Each connection's handshake has fresh nonces, so its keys are its own.
  Path path(keys("connection 1").to_reader, keys("connection 2").to_reader);
  EXPECT_EQ(judged(path, 0, [](FrameHeader&, std::byte*) {}), std::string("frame 0: ") + rewritten);
}

TEST(FrameTags, AFrameSentBackTheOtherWayIsRefused) {
  const cg::detail::ConnectionKeys k = keys("a connection");
  Path path(k.to_writer, k.to_reader);
  EXPECT_EQ(judged(path, 0, [](FrameHeader&, std::byte*) {}), std::string("frame 0: ") + rewritten);
}

TEST(FrameTags, AnUntaggedFrameIsRefusedByAReaderWithAKey) {
  Path path({}, keys("a connection").to_reader);
  FrameHeader header;
  header.length = 3;
  path.pass(cg::detail::encoded_frame(header, bytes_of("abc")) +
            std::string(cg::detail::frame_tag_bytes, '\0'));
  cg::TcpReader::Message m{};
  EXPECT_EQ(path.reader.receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(path.reader.fault(), FrameFault::bad_tag);
}

TEST(ConnectionKeys, DifferByDirectionHandshakeAndSecretAndAgreeOtherwise) {
  auto same = [](const cg::detail::FrameKey& a, const cg::detail::FrameKey& b) {
    return a.set() && b.set() && std::memcmp(a.data(), b.data(), a.bytes) == 0;
  };
  const cg::detail::ConnectionKeys k = keys("g c1 a b nonce-r nonce-w");
  EXPECT_TRUE(same(k.to_reader, keys("g c1 a b nonce-r nonce-w").to_reader));
  EXPECT_TRUE(same(k.to_writer, keys("g c1 a b nonce-r nonce-w").to_writer));
  EXPECT_FALSE(same(k.to_reader, k.to_writer));
  EXPECT_FALSE(same(k.to_reader, keys("g c1 a b nonce-r nonce-x").to_reader));
  EXPECT_FALSE(same(k.to_reader, cg::detail::connection_keys(cg::detail::Secret::generate(),
                                                             "g c1 a b nonce-r nonce-w")
                                     .to_reader));
}

// The set-up keys both directions of every connection it makes: a frame
// without the tag is refused either way.
TEST(FrameTags, TheSetUpKeysAConnectionAndItsReturningChannelAlike) {
  cg::TcpChannelListener listener;
  ASSERT_EQ(listener.listen(launch_secret(), {"127.0.0.1", 0}), cg::NetStatus::ok)
      << listener.error();
  const cg::TcpChannelSpec spec{"g", "c1", "a", "b", "c2"};
  cg::TcpWriter writer;
  cg::TcpReader back;
  cg::NetStatus connected = cg::NetStatus::system_error;
  std::string error;
  std::thread connect([&] {
    connected = cg::connect_channel(listener.endpoint(), spec, launch_secret(), in(5s), writer,
                                    error, cg::tcp_default_max_payload, &back);
  });
  std::vector<cg::TcpReader> readers;
  std::vector<cg::TcpWriter> returned;
  ASSERT_EQ(listener.accept({&spec, 1}, readers, in(5s), cg::tcp_default_max_payload, &returned),
            cg::NetStatus::ok)
      << listener.error();
  connect.join();
  ASSERT_EQ(connected, cg::NetStatus::ok) << error;
  EXPECT_TRUE(writer.key().set());
  EXPECT_TRUE(readers[0].key().set());
  EXPECT_TRUE(back.key().set());
  ASSERT_EQ(writer.send(cg::MessageKind::value, bytes_of("there"), in(5s)), ChannelStatus::ok);
  ASSERT_EQ(returned[0].send(cg::MessageKind::value, bytes_of("back"), in(5s)), ChannelStatus::ok);
  cg::TcpReader::Message m{};
  ASSERT_EQ(readers[0].receive(m, in(5s)), ChannelStatus::ok) << readers[0].error();
  EXPECT_EQ(text_of(m), "there");
  ASSERT_EQ(back.receive(m, in(5s)), ChannelStatus::ok) << back.error();
  EXPECT_EQ(text_of(m), "back");

  // A frame forged without the key, each way.
  FrameHeader header;
  header.sequence = 1;
  header.length = 4;
  const std::string forged =
      cg::detail::encoded_frame(header, bytes_of("1337")) + std::string(16, '\0');
  std::string ignored;
  ASSERT_EQ(cg::detail::send_all(writer.fd(), forged.data(), forged.size(), in(5s), ignored),
            cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::send_all(returned[0].fd(), forged.data(), forged.size(), in(5s), ignored),
            cg::NetStatus::ok);
  EXPECT_EQ(readers[0].receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(std::string(readers[0].error()), std::string("frame 1: ") + rewritten);
  EXPECT_EQ(back.receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(std::string(back.error()), std::string("frame 1: ") + rewritten);
}

} // namespace
