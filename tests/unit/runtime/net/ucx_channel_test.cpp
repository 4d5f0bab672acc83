// ucx_channel_test.cpp - tests of the UCX channel between hosts (net/ucx_channel.hpp).
//
// Two ends in this process, each with a UCX worker of its own, started over a
// loopback TCP connection as the set-up would hand them over: frames arrive
// whole and in order (8 MiB ones by UCX's rendezvous protocol included), and
// a forged frame (a skipped or repeated sequence number, a flipped byte, a
// lying length) is reported with its fault and never delivered; a peer that
// goes away, close() from another thread and a deadline each end a wait.
// With the control connection's key (as the set-up gives it), every frame and
// the reader's offer carry a tag, and a frame or offer without it is refused.
#include "net/frame.hpp"
#include "net/frame_auth.hpp"
#include "net/secret.hpp"
#include "net/socket.hpp"
#include "net/ucx_channel.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::ChannelStatus;
using cg::FrameFault;
using cg::MessageKind;
using cg::detail::UcxReader;
using cg::detail::UcxWriter;

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

struct Stream {
  std::unique_ptr<UcxWriter> writer;
  std::unique_ptr<UcxReader> reader;
};

// A UCX stream started over a fresh loopback connection (whose frames are
// tagged under `key`, if any).
Stream open_stream(std::uint64_t max_payload = cg::tcp_default_max_payload,
                   const cg::detail::FrameKey& key = {}) {
  cg::detail::UniqueFd listener, writer_fd, reader_fd;
  cg::Endpoint bound;
  std::string error;
  EXPECT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), cg::NetStatus::ok)
      << error;
  EXPECT_EQ(cg::detail::connect_tcp(bound, in(5s), writer_fd, error), cg::NetStatus::ok) << error;
  EXPECT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), reader_fd, error), cg::NetStatus::ok)
      << error;
  Stream s;
  // The reader offers first (a small write), so one thread can do both.
  s.reader = UcxReader::offer(cg::TcpReader(reader_fd.release(), max_payload, key), in(5s), error,
                              max_payload);
  EXPECT_NE(s.reader, nullptr) << error;
  s.writer = UcxWriter::connect(cg::TcpWriter(writer_fd.release(), max_payload, key), in(5s), error,
                                max_payload);
  EXPECT_NE(s.writer, nullptr) << error;
  return s;
}

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string text_of(const UcxReader::Message& m) {
  return std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
}

// A frame as a writer would send it (then tampered with by the test).
std::string frame(std::uint64_t sequence, const std::string& payload) {
  cg::detail::FrameHeader header;
  header.sequence = sequence;
  header.length = payload.size();
  return cg::detail::encoded_frame(header, bytes_of(payload));
}

// Runs `sends` on a thread of its own, as a writing relay would: a send
// completes only once the reader's worker has progressed (UCX wires an
// endpoint up with the peer's help, and a large frame moves when the reader
// takes it), so one thread cannot be both ends.
class Background {
public:
  template <class F> explicit Background(F sends) : thread_(std::move(sends)) {}
  ~Background() { thread_.join(); }

private:
  std::thread thread_;
};

TEST(UcxChannel, CarriesFramesWholeAndInOrderSmallEmptyAndLarge) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  std::vector<std::string> sent = {"a", "", std::string(8 << 20, 'L'), "error record", "z"};
  sent[2][12345] = 'x';
  std::thread writer([&] {
    for (std::size_t i = 0; i < sent.size(); ++i)
      EXPECT_EQ(s.writer->send(i == 3 ? MessageKind::error : MessageKind::value, bytes_of(sent[i]),
                               cg::Deadline::max()),
                ChannelStatus::ok)
          << s.writer->error();
  });
  for (std::size_t i = 0; i < sent.size(); ++i) {
    UcxReader::Message m;
    ASSERT_EQ(s.reader->receive(m, in(10s)), ChannelStatus::ok) << s.reader->error();
    EXPECT_EQ(m.sequence, i);
    EXPECT_EQ(m.kind, i == 3 ? MessageKind::error : MessageKind::value);
    EXPECT_EQ(text_of(m), sent[i]) << "frame " << i;
  }
  writer.join();
  EXPECT_EQ(s.writer->sent(), sent.size());
  EXPECT_EQ(s.reader->received(), sent.size());
}

TEST(UcxChannel, AReceiveWaitsUntilItsDeadlineAndLosesNothing) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  UcxReader::Message m;
  const auto start = Clock::now();
  EXPECT_EQ(s.reader->receive(m, in(100ms)), ChannelStatus::timeout);
  EXPECT_GE(Clock::now() - start, 90ms);
  Background sends([&] {
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("late"), in(5s)), ChannelStatus::ok);
  });
  ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "late");
  EXPECT_EQ(m.sequence, 0u);
}

TEST(UcxChannel, ASkippedSequenceNumberIsALostFrameNeverDelivered) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  Background sends([&] {
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("zero"), in(5s)), ChannelStatus::ok);
    EXPECT_EQ(s.writer->send_forged(bytes_of(frame(2, "two")), in(5s)), ChannelStatus::ok);
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("one"), in(5s)), ChannelStatus::ok);
  });
  UcxReader::Message m;
  ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "zero");
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(s.reader->fault(), FrameFault::lost_frame);
  EXPECT_EQ(s.reader->error(), "lost frame: expected sequence 1, got 2 (1 missing)");
  // The stream cannot be trusted past a bad frame: it stays failed.
  EXPECT_EQ(s.reader->receive(m, in(200ms)), ChannelStatus::corrupt);
  s.reader->close(); // lets a send still waiting for the reader end
}

TEST(UcxChannel, ARepeatedFrameIsReportedAsReordered) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  Background sends([&] {
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("zero"), in(5s)), ChannelStatus::ok);
    EXPECT_EQ(s.writer->send_forged(bytes_of(frame(0, "zero")), in(5s)), ChannelStatus::ok);
  });
  UcxReader::Message m;
  ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok);
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(s.reader->fault(), FrameFault::reordered_frame);
  EXPECT_EQ(s.reader->error(), "reordered or repeated frame: expected sequence 1, got 0");
}

TEST(UcxChannel, AFlippedPayloadByteIsAChecksumMismatch) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  std::string bad = frame(0, "payload");
  bad[cg::detail::frame_header_bytes + 1] ^= 0x20;
  Background sends(
      [&] { EXPECT_EQ(s.writer->send_forged(bytes_of(bad), in(5s)), ChannelStatus::ok); });
  UcxReader::Message m;
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(s.reader->fault(), FrameFault::checksum_mismatch);
  EXPECT_NE(s.reader->error().find("frame 0: checksum mismatch"), std::string_view::npos)
      << s.reader->error();
}

TEST(UcxChannel, AHeaderWhoseLengthDisagreesWithTheMessageIsRefused) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  Background sends([&] {
    EXPECT_EQ(s.writer->send_forged(bytes_of(frame(0, "four") + "+tail"), in(5s)),
              ChannelStatus::ok);
  });
  UcxReader::Message m;
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(s.reader->fault(), FrameFault::bad_header);
  EXPECT_EQ(s.reader->error(), "frame 0: the header says 4 payload bytes, the message carried 9");
}

TEST(UcxChannel, AMessageShorterThanAHeaderOrOverTheLimitIsRefused) {
  Stream s = open_stream(/*max_payload=*/1024);
  ASSERT_TRUE(s.writer && s.reader);
  UcxReader::Message m;
  {
    Background sends(
        [&] { EXPECT_EQ(s.writer->send_forged(bytes_of("short"), in(5s)), ChannelStatus::ok); });
    EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
    EXPECT_EQ(s.reader->error(),
              "frame 0: a message of 5 bytes, shorter than a frame's header and trailer");
  }

  Stream t = open_stream(/*max_payload=*/1024);
  ASSERT_TRUE(t.writer && t.reader);
  EXPECT_EQ(t.writer->send(MessageKind::value, bytes_of(std::string(2000, 'x')), in(5s)),
            ChannelStatus::too_large); // refused before sending; the stream stays usable
  EXPECT_EQ(t.writer->fault(), FrameFault::too_large);
  Background sends([&] {
    EXPECT_EQ(t.writer->send_forged(bytes_of(frame(0, std::string(2000, 'x'))), in(5s)),
              ChannelStatus::ok);
  });
  EXPECT_EQ(t.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(t.reader->fault(), FrameFault::too_large);
  EXPECT_EQ(t.reader->error(), "frame 0: payload of 2000 bytes exceeds the limit of 1024");
}

TEST(UcxChannel, FramesSentBeforeTheWriterWentAwayAreDeliveredThenClosed) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  Background sends([&] {
    for (const char* text : {"one", "two", "three"})
      EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of(text), in(5s)), ChannelStatus::ok);
    s.writer.reset(); // a clean end: what was sent arrives first
  });
  UcxReader::Message m;
  for (const char* text : {"one", "two", "three"}) {
    ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok) << s.reader->error();
    EXPECT_EQ(text_of(m), text);
  }
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::closed);
  EXPECT_EQ(s.reader->fault(), FrameFault::peer_closed);
  EXPECT_EQ(s.reader->error(), "the peer closed the connection after 3 frames");
}

TEST(UcxChannel, AWriterWhoseReaderWentAwayIsToldWhileSendingALargeFrame) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  s.reader.reset();
  const std::string large(8 << 20, 'x');
  const auto start = Clock::now();
  EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of(large), in(10s)), ChannelStatus::closed);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(s.writer->fault(), FrameFault::peer_closed) << s.writer->error();
  EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("more"), in(1s)), ChannelStatus::closed);
}

TEST(UcxChannel, CloseFromAnotherThreadWakesABlockedReceive) {
  Stream s = open_stream();
  ASSERT_TRUE(s.writer && s.reader);
  std::thread closer([&] {
    std::this_thread::sleep_for(100ms);
    s.reader->close();
  });
  UcxReader::Message m;
  const auto start = Clock::now();
  EXPECT_EQ(s.reader->receive(m, cg::Deadline::max()), ChannelStatus::closed);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(s.reader->fault(), FrameFault::closed_locally);
  closer.join();
}

TEST(UcxChannel, AnOfferThatIsNotUcxIsRefusedSayingWhy) {
  cg::detail::UniqueFd listener, writer_fd, reader_fd;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::connect_tcp(bound, in(5s), writer_fd, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), reader_fd, error), cg::NetStatus::ok);
  const std::string garbage = frame(0, "a TCP frame, not a UCX offer");
  ASSERT_EQ(cg::detail::send_all(reader_fd.get(), garbage.data(), garbage.size(), in(5s), error),
            cg::NetStatus::ok);
  EXPECT_EQ(UcxWriter::connect(cg::TcpWriter(writer_fd.release()), in(5s), error), nullptr);
  EXPECT_EQ(error, "UCX stream: the reader's offer is malformed (is it built without UCX, or with "
                   "CG_HOST_TRANSPORT=tcp?)");
}

cg::detail::FrameKey a_connections_key() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return cg::detail::connection_keys(secret, "a connection").to_reader;
}

constexpr const char* tag_refused =
    "authentication failed: its tag does not match its bytes (rewritten on the way, or not sent "
    "by the peer that proved the launch's secret)";

TEST(UcxChannel, WithAKeyFramesAreTaggedAndOneWithoutItsTagIsRefused) {
  Stream s = open_stream(cg::tcp_default_max_payload, a_connections_key());
  ASSERT_TRUE(s.writer && s.reader);
  const std::string large(std::size_t{8} << 20, 'x'); // by UCX's rendezvous protocol
  Background sends([&] {
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of("tagged"), in(5s)), ChannelStatus::ok);
    EXPECT_EQ(s.writer->send(MessageKind::value, bytes_of(large), in(5s)), ChannelStatus::ok);
    EXPECT_EQ(s.writer->send_forged(bytes_of(frame(2, "1337") + std::string(16, '\0')), in(5s)),
              ChannelStatus::ok);
  });
  UcxReader::Message m;
  ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok) << s.reader->error();
  EXPECT_EQ(text_of(m), "tagged");
  ASSERT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::ok) << s.reader->error();
  EXPECT_TRUE(text_of(m) == large);
  EXPECT_EQ(s.reader->receive(m, in(5s)), ChannelStatus::corrupt);
  EXPECT_EQ(s.reader->fault(), FrameFault::bad_tag);
  EXPECT_EQ(s.reader->error(), std::string("frame 2: ") + tag_refused);
}

// A relay on the control connection that rewrites the offer's UCX tag (where
// frames are to go) is caught by the offer's own tag.
TEST(UcxChannel, AnOfferRewrittenOnTheWayIsRefused) {
  cg::detail::UniqueFd listener, reader_end, relay_in, relay_out, writer_end;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::connect_tcp(bound, in(5s), reader_end, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), relay_in, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::connect_tcp(bound, in(5s), writer_end, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), relay_out, error), cg::NetStatus::ok);
  const cg::detail::FrameKey key = a_connections_key();
  auto reader = UcxReader::offer(
      cg::TcpReader(reader_end.release(), cg::tcp_default_max_payload, key), in(5s), error);
  ASSERT_NE(reader, nullptr) << error;
  std::string offer(16, '\0');
  ASSERT_EQ(cg::detail::receive_exact(relay_in.get(), offer.data(), 16, in(5s), error),
            cg::NetStatus::ok);
  std::uint32_t length = 0;
  std::memcpy(&length, offer.data() + 4, 4);
  offer.resize(16 + length + cg::detail::frame_tag_bytes);
  ASSERT_EQ(cg::detail::receive_exact(relay_in.get(), offer.data() + 16, offer.size() - 16, in(5s),
                                      error),
            cg::NetStatus::ok);
  offer[8] = static_cast<char>(offer[8] ^ 1);
  ASSERT_EQ(cg::detail::send_all(relay_out.get(), offer.data(), offer.size(), in(5s), error),
            cg::NetStatus::ok);
  EXPECT_EQ(
      UcxWriter::connect(cg::TcpWriter(writer_end.release(), cg::tcp_default_max_payload, key),
                         in(5s), error),
      nullptr);
  EXPECT_EQ(error, "UCX stream: authentication failed: the reader's offer does not match its tag "
                   "(rewritten on the way, or not sent by the peer that proved the launch's "
                   "secret)");
}

TEST(UcxChannel, AReaderThatNeverOffersIsATimeout) {
  cg::detail::UniqueFd listener, writer_fd, reader_fd;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::connect_tcp(bound, in(5s), writer_fd, error), cg::NetStatus::ok);
  ASSERT_EQ(cg::detail::accept_tcp(listener.get(), in(5s), reader_fd, error), cg::NetStatus::ok);
  EXPECT_EQ(UcxWriter::connect(cg::TcpWriter(writer_fd.release()), in(200ms), error), nullptr);
  EXPECT_NE(error.find("UCX stream: no worker address from the reader"), std::string::npos)
      << error;
}

} // namespace
