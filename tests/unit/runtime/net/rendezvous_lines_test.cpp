// rendezvous_lines_test.cpp - tests of the tags on the rendezvous lines after HELLO
// (net/rendezvous_wire.hpp), and of what the server and its client do with a line
// whose tag fails (net/rendezvous.hpp).
//
// The handshake alone proves the secret; a relay could pass it through and then
// rewrite what follows. Each test here is one such rewrite, replay, reflection or
// splice: the tag must fail, the line must never be acted upon, and the peer must be
// named.
#include "net/rendezvous.hpp"
#include "net/rendezvous_wire.hpp"
#include "net/socket.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::NetStatus;
namespace wire = cg::detail::rendezvous_wire;

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

const cg::detail::Secret& launch_secret() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return secret;
}

constexpr const char* server_nonce = "00112233445566778899aabbccddeeff";
constexpr const char* client_nonce = "ffeeddccbbaa99887766554433221100";

wire::LineKeys keys(const char* client = client_nonce) {
  return wire::line_keys(launch_secret(), "g", server_nonce, client);
}

// ---- The tags themselves ----------------------------------------------------------

TEST(RendezvousLines, ALineReachesTheOtherEndAsItWasSentWithItsTagTakenOff) {
  wire::LineTagger sender(keys().to_server);
  wire::LineChecker receiver(keys().to_server);
  const std::string line = sender.line("PUBLISH a 10.0.0.1:5000");
  ASSERT_EQ(line.size(), std::string("PUBLISH a 10.0.0.1:5000").size() + 1 + 32 + 1);
  EXPECT_EQ(line.substr(0, 24), "PUBLISH a 10.0.0.1:5000 ");
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find_first_not_of("0123456789abcdef", 24), line.size() - 1) << line;
  EXPECT_EQ(receiver.line(line.substr(0, line.size() - 1)), "PUBLISH a 10.0.0.1:5000");
  EXPECT_EQ(receiver.line(sender.line("READY a").substr(0, 7 + 33)), "READY a");
}

TEST(RendezvousLines, ARewrittenLineFailsItsTagAndSoDoesEveryLineAfterIt) {
  wire::LineTagger sender(keys().to_server);
  wire::LineChecker receiver(keys().to_server);
  std::string line = sender.line("PUBLISH a 10.0.0.1:5000");
  line.pop_back();
  line.replace(line.find("5000"), 4, "6666"); // where a relay would have b's peers connect
  EXPECT_EQ(receiver.line(line), std::nullopt);
  std::string next = sender.line("READY a");
  next.pop_back();
  EXPECT_EQ(receiver.line(next), std::nullopt) << "a good line after a bad one was taken";
}

TEST(RendezvousLines, AReplayedLineFailsItsTag) {
  wire::LineTagger sender(keys().to_server);
  wire::LineChecker receiver(keys().to_server);
  std::string first = sender.line("PUBLISH a 10.0.0.1:5000");
  first.pop_back();
  EXPECT_EQ(receiver.line(first), "PUBLISH a 10.0.0.1:5000");
  EXPECT_EQ(receiver.line(first), std::nullopt);
}

TEST(RendezvousLines, ADroppedOrReorderedLineFailsItsTag) {
  wire::LineTagger sender(keys().to_server);
  wire::LineChecker receiver(keys().to_server);
  (void)sender.line("PUBLISH a 10.0.0.1:5000"); // dropped on the way
  std::string second = sender.line("READY a");
  second.pop_back();
  EXPECT_EQ(receiver.line(second), std::nullopt);
}

TEST(RendezvousLines, ALineReflectedBackTheOtherWayFailsItsTag) {
  wire::LineTagger client(keys().to_server);
  wire::LineChecker client_reads(keys().to_client);
  std::string line = client.line("OK");
  line.pop_back();
  EXPECT_EQ(client_reads.line(line), std::nullopt);
}

TEST(RendezvousLines, ALineTakenFromAnotherConnectionFailsItsTag) {
  wire::LineTagger other(keys("0123456789abcdef0123456789abcdef").to_server);
  wire::LineChecker receiver(keys().to_server);
  std::string line = other.line("PUBLISH a 10.0.0.1:5000");
  line.pop_back();
  EXPECT_EQ(receiver.line(line), std::nullopt);
}

TEST(RendezvousLines, ALineWithoutATagOrWithoutKeysIsRefused) {
  wire::LineChecker receiver(keys().to_server);
  EXPECT_EQ(receiver.line("READY a"), std::nullopt);
  wire::LineTagger sender(keys().to_server);
  std::string line = sender.line("READY a");
  line.pop_back();
  wire::LineChecker keyless;
  EXPECT_EQ(keyless.line(line), std::nullopt);
}

TEST(RendezvousLines, APayloadIsCheckedInItsPlaceAndNeverTakenForALine) {
  wire::LineTagger sender(keys().to_client);
  const std::string head = sender.line("ARGS 3");
  const std::string payload = sender.payload("xyz");
  ASSERT_EQ(payload.size(), 3u + cg::detail::frame_tag_bytes);
  {
    wire::LineChecker receiver(keys().to_client);
    EXPECT_EQ(receiver.line(head.substr(0, head.size() - 1)), "ARGS 3");
    EXPECT_TRUE(receiver.payload("xyz", payload.substr(3)));
  }
  {
    wire::LineChecker receiver(keys().to_client);
    EXPECT_EQ(receiver.line(head.substr(0, head.size() - 1)), "ARGS 3");
    EXPECT_FALSE(receiver.payload("xyw", payload.substr(3)));
  }
  {
    // The payload's tag at its place, offered as a line's.
    std::string as_line = "xyz ";
    for (const char c : payload.substr(3)) {
      constexpr char digits[] = "0123456789abcdef";
      as_line += digits[static_cast<unsigned char>(c) >> 4];
      as_line += digits[static_cast<unsigned char>(c) & 15];
    }
    wire::LineChecker receiver(keys().to_client);
    EXPECT_EQ(receiver.line(head.substr(0, head.size() - 1)), "ARGS 3");
    EXPECT_EQ(receiver.line(as_line), std::nullopt);
  }
}

// ---- The server and the client ----------------------------------------------------

// A client spoken by hand: through HELLO as the real one, then lines it tags itself.
struct HandClient {
  explicit HandClient(const cg::Endpoint& to) {
    EXPECT_EQ(cg::detail::connect_tcp(to, in(5s), fd, error), NetStatus::ok) << error;
    const std::string challenge = line();
    EXPECT_EQ(challenge.rfind("CHALLENGE ", 0), 0u) << challenge;
    const std::string nonce = challenge.substr(10);
    const std::string mine = cg::detail::fresh_nonce();
    send("HELLO cg-rendezvous/3 g " + mine + " " +
         launch_secret().prove(wire::proof_message("client", "g", nonce, mine)) + "\n");
    const wire::LineKeys k = wire::line_keys(launch_secret(), "g", nonce, mine);
    to_server = wire::LineTagger(k.to_server);
    from_server = wire::LineChecker(k.to_client);
    ok = from_server.line(line());
  }
  void send(const std::string& text) {
    EXPECT_EQ(cg::detail::send_all(fd.get(), text.data(), text.size(), in(5s), error),
              NetStatus::ok)
        << error;
  }
  std::string line() {
    std::string out;
    char c = 0;
    while (cg::detail::receive_exact(fd.get(), &c, 1, in(10s), error) == NetStatus::ok) {
      if (c == '\n')
        return out;
      out += c;
    }
    return out + "<closed>";
  }
  cg::detail::UniqueFd fd;
  std::string error;
  wire::LineTagger to_server;
  wire::LineChecker from_server;
  std::optional<std::string> ok;
};

std::string tag_failure(const std::string& what, const cg::Endpoint& peer,
                        const std::string& actors = "") {
  return what + " from " + cg::to_string(peer) + actors +
         " failed its authentication tag (rewritten, dropped, replayed or reordered on the "
         "way): the connection is closed";
}

TEST(RendezvousTags, ARewrittenPublishIsNeverActedUponAndTheWaitFailsAtOnceNamingThePeer) {
  cg::RendezvousServer server;
  ASSERT_EQ(server.start({"g", {"a"}, {"127.0.0.1", 0}, {}, launch_secret()}), NetStatus::ok);
  HandClient c(server.endpoint());
  ASSERT_TRUE(c.ok.has_value()) << "the server's OK failed its tag";
  EXPECT_EQ(c.ok->substr(0, 3), "OK ");
  std::string publish = c.to_server.line("PUBLISH a 10.0.0.1:5000");
  publish.replace(publish.find("5000"), 4, "6666");
  c.send(publish);
  EXPECT_EQ(c.line(), "<closed>") << "the rewritten line was answered";
  const auto started = Clock::now();
  EXPECT_EQ(server.wait_for_all(in(10s)), NetStatus::protocol_error);
  EXPECT_LT(Clock::now() - started, 5s);
  EXPECT_EQ(server.error(), "rendezvous for graph 'g': " +
                                tag_failure("a line", cg::detail::local_endpoint(c.fd.get())));
  EXPECT_TRUE(server.table().empty()) << "the rewritten PUBLISH was acted upon";
}

TEST(RendezvousTags, AClientThatPublishedAndThenSendsABadLineIsLostWithTheReason) {
  std::mutex mutex;
  std::vector<std::string> lost;
  cg::RemoteFailure why;
  cg::RendezvousServer server;
  ASSERT_EQ(server.start(
                {.graph = "g",
                 .actors = {"a"},
                 .listen = {"127.0.0.1", 0},
                 .secret = launch_secret(),
                 .on_lost =
                     [&](const std::vector<std::string>& actors, const cg::RemoteFailure& failure) {
                       std::lock_guard lock(mutex);
                       lost = actors;
                       why = failure;
                     }}),
            NetStatus::ok);
  HandClient c(server.endpoint());
  c.send(c.to_server.line("PUBLISH a 10.0.0.1:5000"));
  EXPECT_EQ(c.from_server.line(c.line()), "OK");
  const std::string ready = c.to_server.line("READY a");
  c.send(ready);
  EXPECT_EQ(c.from_server.line(c.line()), "OK");
  c.send(ready); // replayed
  EXPECT_EQ(c.line(), "<closed>");
  EXPECT_EQ(server.wait_for_all(in(10s)), NetStatus::protocol_error);
  std::lock_guard lock(mutex);
  EXPECT_EQ(lost, std::vector<std::string>{"a"});
  EXPECT_EQ(why.cause, cg::RemoteFailure::Cause::host);
  EXPECT_EQ(why.reason,
            "rendezvous: " +
                tag_failure("a line", cg::detail::local_endpoint(c.fd.get()), " (actors a)"));
}

// A server played by hand for one client: the real challenge and proof, then lines
// this test tags (or does not).
TEST(RendezvousTags, AClientGivenABadLineByTheServerClosesAndSaysSo) {
  cg::detail::UniqueFd listener;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), NetStatus::ok);
  std::thread fake([&] {
    cg::detail::UniqueFd fd;
    std::string why;
    if (cg::detail::accept_tcp(listener.get(), in(10s), fd, why) != NetStatus::ok)
      return;
    const std::string nonce = "00112233445566778899aabbccddeeff";
    std::string text = "CHALLENGE " + std::string(nonce) + "\n";
    (void)cg::detail::send_all(fd.get(), text.data(), text.size(), in(5s), why);
    std::string hello;
    char c = 0;
    while (cg::detail::receive_exact(fd.get(), &c, 1, in(5s), why) == NetStatus::ok && c != '\n')
      hello += c;
    const std::vector<std::string_view> f = wire::fields(hello);
    if (f.size() != 5)
      return;
    const std::string mine(f[3]);
    wire::LineTagger to_client(wire::line_keys(launch_secret(), "g", nonce, mine).to_client);
    text = to_client.line("OK " +
                          launch_secret().prove(wire::proof_message("server", "g", nonce, mine)));
    std::string publish_answer = to_client.line("OK");
    publish_answer.replace(0, 2, "NO"); // rewritten on the way
    text += publish_answer;
    (void)cg::detail::send_all(fd.get(), text.data(), text.size(), in(5s), why);
    while (cg::detail::receive_exact(fd.get(), &c, 1, in(5s), why) == NetStatus::ok) {
    }
  });
  cg::RendezvousClient client;
  EXPECT_EQ(client.connect(bound, "g", launch_secret(), in(10s)), NetStatus::ok) << client.error();
  EXPECT_EQ(client.publish("a", {"10.0.0.1", 5000}, in(10s)), NetStatus::protocol_error);
  EXPECT_EQ(client.error(), "rendezvous at " + cg::to_string(bound) +
                                " sent a line that failed its authentication tag (rewritten, "
                                "dropped, replayed or reordered on the way): the connection is "
                                "closed");
  EXPECT_EQ(client.fd(), -1);
  fake.join();
}

} // namespace
