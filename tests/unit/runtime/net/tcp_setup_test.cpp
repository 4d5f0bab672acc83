// tcp_setup_test.cpp - tests of setting up TCP channels between actors (net/tcp_setup.hpp).
//
// The handshake lets the right writer in and turns every wrong one away with
// the reason (another graph, an unknown channel, the wrong direction, a
// duplicate, something that is not a writer at all); writers retry until the
// reader listens; two actors writing to each other set up without waiting on
// each other. Last, two actors in separate network namespaces (two "hosts"
// joined by a veth pair, tests/e2e/netns.sh) find each other through the
// rendezvous and round-trip messages; that test is skipped, with the reason,
// where namespaces cannot be made.
#include "net/frame.hpp"
#include "net/rendezvous.hpp"
#include "net/socket.hpp"
#include "net/tcp_setup.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// This test's launch secret (every listener and writer here share it).
const cg::detail::Secret& launch_secret() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return secret;
}

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::NetStatus;
using cg::TcpChannelSpec;

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string text_of(const cg::TcpReader::Message& m) {
  return std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
}

cg::TcpChannelListener loopback_listener() {
  cg::TcpChannelListener listener;
  EXPECT_EQ(listener.listen(launch_secret(), {"127.0.0.1", 0}), NetStatus::ok) << listener.error();
  return listener;
}

// connect_channel on a thread of its own (the listener accepts on the test's).
struct AsyncConnect {
  AsyncConnect(const cg::Endpoint& reader, TcpChannelSpec spec,
               std::chrono::milliseconds within = 5s)
      : thread([=, this] {
          status = cg::connect_channel(reader, spec, launch_secret(), in(within), writer, error);
        }) {}
  ~AsyncConnect() {
    if (thread.joinable())
      thread.join();
  }
  void join() { thread.join(); }
  NetStatus status = NetStatus::system_error;
  cg::TcpWriter writer;
  std::string error;
  std::thread thread;
};

TEST(TcpSetup, ChannelIsSetUpThroughTheHandshakeAndCarriesMessages) {
  cg::TcpChannelListener listener = loopback_listener();
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  AsyncConnect writer(listener.endpoint(), spec);
  std::vector<cg::TcpReader> readers;
  ASSERT_EQ(listener.accept({&spec, 1}, readers, in(5s)), NetStatus::ok) << listener.error();
  writer.join();
  ASSERT_EQ(writer.status, NetStatus::ok) << writer.error;
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_TRUE(listener.rejections().empty());

  ASSERT_EQ(writer.writer.send(cg::MessageKind::value, bytes_of("first"), in(1s)),
            cg::ChannelStatus::ok);
  ASSERT_EQ(writer.writer.send(cg::MessageKind::error, bytes_of("second"), in(1s)),
            cg::ChannelStatus::ok);
  cg::TcpReader::Message m{};
  ASSERT_EQ(readers[0].receive(m, in(5s)), cg::ChannelStatus::ok) << readers[0].error();
  EXPECT_EQ(text_of(m), "first");
  EXPECT_EQ(m.sequence, 0u) << "the handshake is not counted";
  ASSERT_EQ(readers[0].receive(m, in(5s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "second");
  EXPECT_EQ(m.kind, cg::MessageKind::error);
}

TEST(TcpSetup, HandshakeForAWrongChannelIsRejectedWithTheReasonAndTheRightOnesStillGetIn) {
  cg::TcpChannelListener listener = loopback_listener();
  const TcpChannelSpec expected[] = {{"g", "c1", "a", "b"}, {"g", "c2", "c", "b", "c3"}};
  struct Attempt {
    TcpChannelSpec spec;
    std::string reason; // "" = accepted
  };
  const std::vector<Attempt> attempts = {
      {{"g", "c9", "a", "b"}, "no channel 'c9' of graph 'g' is read here"},
      {{"g", "c1", "b", "a"}, "channel 'c1' of graph 'g' runs a -> b, not b -> a"},
      {{"g", "c1", "a", "b", "c3"},
       "channel 'c1' of graph 'g' carries nothing back here, not channel 'c3'"},
      {{"g", "c2", "c", "b"},
       "channel 'c2' of graph 'g' carries channel 'c3' back here, not "
       "nothing"},
      {{"other", "c1", "a", "b"}, "wrong graph 'other' (channels read here belong to graph 'g')"},
      {expected[0], ""},
      {expected[0], "channel 'c1' of graph 'g' is already connected"},
      {expected[1], ""},
  };
  std::vector<NetStatus> statuses(attempts.size(), NetStatus::system_error);
  std::vector<std::string> errors(attempts.size());
  std::vector<cg::TcpWriter> writers(attempts.size());
  std::thread connecting([&] {
    for (std::size_t i = 0; i < attempts.size(); ++i) {
      statuses[i] = cg::connect_channel(listener.endpoint(), attempts[i].spec, launch_secret(),
                                        in(5s), writers[i], errors[i]);
    }
  });
  std::vector<cg::TcpReader> readers;
  const NetStatus accepted = listener.accept(expected, readers, in(10s));
  connecting.join();
  ASSERT_EQ(accepted, NetStatus::ok) << listener.error();

  const std::string at = cg::to_string(listener.endpoint());
  std::vector<std::string> rejected;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    if (attempts[i].reason.empty()) {
      EXPECT_EQ(statuses[i], NetStatus::ok) << errors[i];
      continue;
    }
    EXPECT_EQ(statuses[i], NetStatus::rejected) << i;
    EXPECT_EQ(errors[i], cg::to_string(attempts[i].spec) + " was rejected by " + at + ": " +
                             attempts[i].reason);
    rejected.push_back(" for " + cg::to_string(attempts[i].spec) +
                       " rejected: " + attempts[i].reason);
  }
  ASSERT_EQ(listener.rejections().size(), rejected.size());
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    const std::string& r = listener.rejections()[i];
    EXPECT_EQ(r.rfind("connection from 127.0.0.1:", 0), 0u) << r;
    ASSERT_GE(r.size(), rejected[i].size());
    EXPECT_EQ(r.substr(r.size() - rejected[i].size()), rejected[i]);
  }

  // readers[i] reads expected[i], whatever order the writers came in.
  ASSERT_EQ(writers[7].send(cg::MessageKind::value, bytes_of("on c2"), in(1s)),
            cg::ChannelStatus::ok);
  ASSERT_EQ(writers[5].send(cg::MessageKind::value, bytes_of("on c1"), in(1s)),
            cg::ChannelStatus::ok);
  cg::TcpReader::Message m{};
  ASSERT_EQ(readers[0].receive(m, in(5s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "on c1");
  ASSERT_EQ(readers[1].receive(m, in(5s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "on c2");
}

// ---- Authentication -------------------------------------------------------------

// A set-up frame as net/frame.hpp lays it out; `length` overrides the
// payload length the header claims.
std::string setup_frame(cg::detail::FrameKind kind, const std::string& payload,
                        std::optional<std::uint64_t> length = std::nullopt) {
  cg::detail::FrameHeader header;
  header.kind = static_cast<std::uint16_t>(kind);
  header.length = length.value_or(payload.size());
  return cg::detail::encoded_frame(header, bytes_of(payload));
}

// The hello a writer knowing `secret` sends for `spec` in answer to `challenge`.
std::string hello_frame(const cg::detail::Secret& secret, const TcpChannelSpec& spec,
                        const std::string& challenge) {
  const std::string nonce = cg::detail::fresh_nonce();
  const std::string proof =
      secret.prove("cg-channel/3 writer " + spec.graph + " " + spec.channel + " " + spec.writer +
                   " " + spec.reader + " back=" + spec.returning + " " + challenge + " " + nonce);
  return setup_frame(cg::detail::FrameKind::hello,
                     spec.graph + "\n" + spec.channel + "\n" + spec.writer + "\n" + spec.reader +
                         "\n" + spec.returning + "\n" + nonce + "\n" + proof);
}

// A connection to a listener that sends `bytes` after reading its challenge
// (then, with `half_close`, ends its side) and waits until the listener
// closes the connection: by then it has judged it.
void send_raw(const cg::Endpoint& to, const std::string& bytes, bool half_close = false) {
  cg::detail::UniqueFd fd;
  std::string error;
  ASSERT_EQ(cg::detail::connect_tcp(to, in(5s), fd, error), NetStatus::ok) << error;
  std::byte header[cg::detail::frame_header_bytes];
  ASSERT_EQ(cg::detail::receive_exact(fd.get(), header, sizeof header, in(5s), error),
            NetStatus::ok);
  std::string challenge(
      cg::detail::decode_frame_header(header).length + cg::detail::frame_trailer_bytes, '\0');
  ASSERT_EQ(cg::detail::receive_exact(fd.get(), challenge.data(), challenge.size(), in(5s), error),
            NetStatus::ok);
  ASSERT_EQ(cg::detail::send_all(fd.get(), bytes.data(), bytes.size(), in(5s), error),
            NetStatus::ok);
  if (half_close)
    ::shutdown(fd.get(), SHUT_WR);
  char byte = 0;
  while (cg::detail::receive_exact(fd.get(), &byte, 1, in(5s), error) == NetStatus::ok) {
  }
  EXPECT_NE(cg::detail::receive_exact(fd.get(), &byte, 1, in(0ms), error), NetStatus::timeout)
      << "the listener kept the connection open";
}

// Accepts `spec` while `strangers` run first, then a writer with the secret:
// the writer must get in, whatever the strangers did. The rejections.
std::vector<std::string> accept_after(const std::function<void(const cg::Endpoint&)>& strangers) {
  cg::TcpChannelListener listener = loopback_listener();
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  std::vector<cg::TcpReader> readers;
  NetStatus accepted = NetStatus::system_error;
  std::thread accepting([&] { accepted = listener.accept({&spec, 1}, readers, in(10s)); });
  strangers(listener.endpoint());
  std::this_thread::sleep_for(100ms);
  {
    AsyncConnect writer(listener.endpoint(), spec);
    writer.join();
    EXPECT_EQ(writer.status, NetStatus::ok) << writer.error;
  }
  accepting.join();
  EXPECT_EQ(accepted, NetStatus::ok) << listener.error();
  std::vector<std::string> reasons;
  for (const std::string& r : listener.rejections()) {
    EXPECT_EQ(r.rfind("connection from 127.0.0.1:", 0), 0u) << r;
    reasons.push_back(r.substr(r.find(": ") + 2));
  }
  return reasons;
}

// One connection carries a channel each way: "forth" from a to b, and
// "back", which b writes to a, on the same socket.
TEST(TcpSetup, AConnectionCarriesItsReturningChannelBackFromReaderToWriter) {
  cg::TcpChannelListener listener = loopback_listener();
  const TcpChannelSpec spec{"g", "forth", "a", "b", "back"};
  cg::TcpWriter forth_writer;
  cg::TcpReader back_reader;
  NetStatus connected = NetStatus::system_error;
  std::string error;
  std::thread a([&] {
    connected = cg::connect_channel(listener.endpoint(), spec, launch_secret(), in(5s),
                                    forth_writer, error, cg::tcp_default_max_payload, &back_reader);
  });
  std::vector<cg::TcpReader> readers;
  std::vector<cg::TcpWriter> returned;
  ASSERT_EQ(listener.accept({&spec, 1}, readers, in(5s), cg::tcp_default_max_payload, &returned),
            NetStatus::ok)
      << listener.error();
  a.join();
  ASSERT_EQ(connected, NetStatus::ok) << error;
  ASSERT_EQ(returned.size(), 1u);
  EXPECT_EQ(back_reader.fd() >= 0 && returned[0].fd() >= 0, true);
  cg::TcpReader::Message m{};
  for (int i = 0; i < 3; ++i) {
    const std::string ping = "ping " + std::to_string(i), pong = "pong " + std::to_string(i);
    ASSERT_EQ(forth_writer.send(cg::MessageKind::value, bytes_of(ping), in(1s)),
              cg::ChannelStatus::ok);
    ASSERT_EQ(readers[0].receive(m, in(5s)), cg::ChannelStatus::ok) << readers[0].error();
    EXPECT_EQ(text_of(m), ping);
    EXPECT_EQ(m.sequence, static_cast<std::uint64_t>(i));
    ASSERT_EQ(returned[0].send(cg::MessageKind::error, bytes_of(pong), in(1s)),
              cg::ChannelStatus::ok);
    ASSERT_EQ(back_reader.receive(m, in(5s)), cg::ChannelStatus::ok) << back_reader.error();
    EXPECT_EQ(text_of(m), pong);
    EXPECT_EQ(m.kind, cg::MessageKind::error);
    EXPECT_EQ(m.sequence, static_cast<std::uint64_t>(i)); // each direction numbers its own
  }
}

TEST(TcpSetup, ConnectionThatIsNotAWriterIsTurnedAwayWithoutStoppingTheListener) {
  const std::vector<std::string> reasons = accept_after(
      [](const cg::Endpoint& at) { send_raw(at, "GET / HTTP/1.1\r\nHost: example\r\n\r\n"); });
  EXPECT_EQ(reasons, (std::vector<std::string>{"not a channel hello: bad magic"}));
}

TEST(TcpSetupAuth, AWriterWithAnotherSecretIsRejectedLearningNothingMore) {
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  std::string error;
  NetStatus status = NetStatus::system_error;
  const std::vector<std::string> reasons = accept_after([&](const cg::Endpoint& at) {
    cg::TcpWriter writer;
    status = cg::connect_channel(at, spec, cg::detail::Secret::generate(), in(5s), writer, error);
    EXPECT_EQ(error, cg::to_string(spec) + " was rejected by " + cg::to_string(at) +
                         ": authentication failed");
  });
  EXPECT_EQ(status, NetStatus::rejected);
  EXPECT_EQ(reasons, (std::vector<std::string>{
                         "authentication failed (wrong secret, or a replayed handshake)"}));
}

TEST(TcpSetupAuth, AReplayedHandshakeAnswersAnotherChallengeAndIsRejected) {
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  // A genuine hello, recorded from a connection whose challenge was another.
  const std::string recorded = hello_frame(launch_secret(), spec, cg::detail::fresh_nonce());
  const std::vector<std::string> reasons =
      accept_after([&](const cg::Endpoint& at) { send_raw(at, recorded); });
  EXPECT_EQ(reasons, (std::vector<std::string>{
                         "authentication failed (wrong secret, or a replayed handshake)"}));
}

TEST(TcpSetupAuth, GarbageTruncatedAndOversizedFramesAreRejected) {
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  const std::string whole = hello_frame(launch_secret(), spec, "");
  const std::vector<std::string> reasons = accept_after([&](const cg::Endpoint& at) {
    send_raw(at, "GET / HTTP/1.1\r\nHost: example\r\n\r\n");
    send_raw(at, whole.substr(0, whole.size() - 10), true); // cut off
    send_raw(at, setup_frame(cg::detail::FrameKind::hello, "g", 1u << 20));
  });
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0], "not a channel hello: bad magic");
  EXPECT_NE(reasons[1].find("closed the connection"), std::string::npos) << reasons[1];
  EXPECT_EQ(reasons[2], "not a channel hello: 1048576 bytes");
}

TEST(TcpSetupAuth, SilentConnectionsDoNotDelayTheWriters) {
  std::vector<cg::detail::UniqueFd> silent(3);
  Clock::time_point start{};
  accept_after([&](const cg::Endpoint& at) {
    std::string error;
    for (cg::detail::UniqueFd& fd : silent)
      ASSERT_EQ(cg::detail::connect_tcp(at, in(5s), fd, error), NetStatus::ok);
    start = Clock::now();
  });
  const Clock::duration took = Clock::now() - start;
  EXPECT_LT(took, 2s) << "the writer waited behind connections that never spoke";
}

TEST(TcpSetupAuth, TheWriterRefusesAReaderThatCannotProveTheSecret) {
  cg::detail::UniqueFd listener;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), NetStatus::ok);
  std::thread impostor([&] {
    cg::detail::UniqueFd fd;
    std::string why;
    if (cg::detail::accept_tcp(listener.get(), in(5s), fd, why) != NetStatus::ok)
      return;
    const std::string challenge =
        setup_frame(cg::detail::FrameKind::challenge, cg::detail::fresh_nonce());
    cg::detail::send_all(fd.get(), challenge.data(), challenge.size(), in(5s), why);
    std::byte header[cg::detail::frame_header_bytes];
    cg::detail::receive_exact(fd.get(), header, sizeof header, in(5s), why);
    std::string hello(
        cg::detail::decode_frame_header(header).length + cg::detail::frame_trailer_bytes, '\0');
    cg::detail::receive_exact(fd.get(), hello.data(), hello.size(), in(5s), why);
    const std::string verdict =
        setup_frame(cg::detail::FrameKind::verdict, "ok " + std::string(64, '0'));
    cg::detail::send_all(fd.get(), verdict.data(), verdict.size(), in(5s), why);
    std::this_thread::sleep_for(200ms);
  });
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  cg::TcpWriter writer;
  EXPECT_EQ(cg::connect_channel(bound, spec, launch_secret(), in(5s), writer, error),
            NetStatus::protocol_error);
  EXPECT_EQ(error, cg::to_string(spec) + ": " + cg::to_string(bound) +
                       " could not prove it knows the launch's secret: it is not the channel's "
                       "reader");
  impostor.join();
}

TEST(TcpSetup, AcceptTimesOutNamingTheChannelsWhoseWritersNeverCame) {
  cg::TcpChannelListener listener = loopback_listener();
  const TcpChannelSpec expected[] = {
      {"g", "c1", "a", "b"}, {"g", "c2", "x", "b"}, {"g", "c3", "y", "b"}};
  AsyncConnect writer(listener.endpoint(), expected[0]);
  std::vector<cg::TcpReader> readers;
  const auto start = Clock::now();
  EXPECT_EQ(listener.accept(expected, readers, in(300ms)), NetStatus::timeout);
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(listener.error(), "timed out waiting for the writers of channel 'c2' (x -> b) of graph "
                              "'g', channel 'c3' (y -> b) of graph 'g'");
}

TEST(TcpSetup, WriterStartedBeforeTheReaderListensRetriesUntilItDoes) {
  std::uint16_t port = 0;
  {
    cg::TcpChannelListener probe = loopback_listener();
    port = probe.endpoint().port;
  } // closed again: nobody listens there now
  const TcpChannelSpec spec{"g", "c1", "a", "b"};
  AsyncConnect writer({"127.0.0.1", port}, spec, 10s);
  std::this_thread::sleep_for(300ms);
  cg::TcpChannelListener listener;
  ASSERT_EQ(listener.listen(launch_secret(), {"127.0.0.1", port}), NetStatus::ok)
      << listener.error();
  std::vector<cg::TcpReader> readers;
  ASSERT_EQ(listener.accept({&spec, 1}, readers, in(10s)), NetStatus::ok) << listener.error();
  writer.join();
  EXPECT_EQ(writer.status, NetStatus::ok) << writer.error;
}

TEST(TcpSetup, TwoActorsWritingToEachOtherSetUpWithoutWaitingOnEachOther) {
  cg::TcpChannelListener listener_a = loopback_listener();
  cg::TcpChannelListener listener_b = loopback_listener();
  const TcpChannelSpec a_to_b{"g", "forth", "a", "b"};
  const TcpChannelSpec b_to_a{"g", "back", "b", "a"};
  cg::TcpChannels a, b;
  NetStatus status_b = NetStatus::system_error;
  std::thread actor_b([&] {
    const cg::TcpOutgoing out[] = {{b_to_a, listener_a.endpoint()}};
    status_b = cg::set_up_channels(listener_b, {&a_to_b, 1}, out, in(10s), b);
  });
  const cg::TcpOutgoing out[] = {{a_to_b, listener_b.endpoint()}};
  const NetStatus status_a = cg::set_up_channels(listener_a, {&b_to_a, 1}, out, in(10s), a);
  actor_b.join();
  ASSERT_EQ(status_a, NetStatus::ok) << a.error;
  ASSERT_EQ(status_b, NetStatus::ok) << b.error;

  ASSERT_EQ(a.writers[0].send(cg::MessageKind::value, bytes_of("ping"), in(1s)),
            cg::ChannelStatus::ok);
  cg::TcpReader::Message m{};
  ASSERT_EQ(b.readers[0].receive(m, in(5s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "ping");
  ASSERT_EQ(b.writers[0].send(cg::MessageKind::value, bytes_of("pong"), in(1s)),
            cg::ChannelStatus::ok);
  ASSERT_EQ(a.readers[0].receive(m, in(5s)), cg::ChannelStatus::ok);
  EXPECT_EQ(text_of(m), "pong");
}

// ---- Two hosts: network namespaces ---------------------------------------------

// Brings cgtest-a and cgtest-b up for the scope (tests/e2e/netns.sh), holding a
// lock so that concurrent users do not take them down under each other.
class TestNamespaces {
public:
  TestNamespaces() {
    lock_ = ::open("/run/lock/cgtest-netns-user.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock_ >= 0)
      ::flock(lock_, LOCK_EX);
    const int code = run(std::string(CG_NETNS_SCRIPT) + " up 2>&1", output_);
    up_ = code == 0;
    skipped_ = code == 77;
    if (!up_ && !skipped_)
      output_ = "netns.sh up failed (exit " + std::to_string(code) + "): " + output_;
  }
  ~TestNamespaces() {
    std::string ignored;
    if (up_)
      run(std::string(CG_NETNS_SCRIPT) + " down 2>&1", ignored);
    if (lock_ >= 0)
      ::close(lock_);
  }
  bool up() const { return up_; }
  bool skipped() const { return skipped_; }
  const std::string& output() const { return output_; }

private:
  static int run(const std::string& command, std::string& output) {
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr)
      return -1;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, pipe) != nullptr)
      output += chunk;
    while (!output.empty() && output.back() == '\n')
      output.pop_back();
    const int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  int lock_ = -1;
  bool up_ = false;
  bool skipped_ = false;
  std::string output_;
};

constexpr const char* netns_graph = "two-hosts";
constexpr int round_trips = 100;

bool enter_namespace(const char* name) {
  const int fd = ::open((std::string("/run/netns/") + name).c_str(), O_RDONLY | O_CLOEXEC);
  const bool entered = fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
  if (fd >= 0)
    ::close(fd);
  if (!entered)
    std::fprintf(stderr, "cannot enter network namespace %s\n", name);
  return entered;
}

// One actor of the two-host graph: a pings b (a -> b "forth"), b echoes (b -> a "back").
// Returns 0, or a code saying which step failed (with a line on stderr).
int run_actor(const std::string& name, const cg::Endpoint& rendezvous,
              const std::string& own_address) {
  const bool pinger = name == "a";
  cg::TcpChannelListener listener;
  if (listener.listen(launch_secret()) != NetStatus::ok)
    return std::fprintf(stderr, "%s: %s\n", name.c_str(), listener.error().c_str()), 20;
  cg::RendezvousClient client;
  if (client.connect(rendezvous, netns_graph, launch_secret(), in(20s)) != NetStatus::ok ||
      client.publish(name, {client.local_host(), listener.endpoint().port}, in(20s)) !=
          NetStatus::ok ||
      client.wait_for_table(in(20s)) != NetStatus::ok) {
    return std::fprintf(stderr, "%s: %s\n", name.c_str(), client.error().c_str()), 21;
  }
  if (client.local_host() != own_address) {
    return std::fprintf(stderr, "%s: reached the rendezvous from %s, not %s\n", name.c_str(),
                        client.local_host().c_str(), own_address.c_str()),
           22;
  }
  const TcpChannelSpec forth{netns_graph, "forth", "a", "b"};
  const TcpChannelSpec back{netns_graph, "back", "b", "a"};
  const TcpChannelSpec& incoming = pinger ? back : forth;
  const cg::TcpOutgoing outgoing[] = {{pinger ? forth : back, *client.lookup(pinger ? "b" : "a")}};
  cg::TcpChannels channels;
  if (cg::set_up_channels(listener, {&incoming, 1}, outgoing, in(20s), channels) != NetStatus::ok) {
    return std::fprintf(stderr, "%s: %s\n", name.c_str(), channels.error.c_str()), 23;
  }
  cg::TcpReader& reader = channels.readers[0];
  cg::TcpWriter& writer = channels.writers[0];
  cg::TcpReader::Message m{};
  for (int i = 0; i < round_trips; ++i) {
    if (pinger) {
      // Every tenth message is 1 MiB: more than one segment on the veth link.
      const std::string ping =
          "ping " + std::to_string(i) + std::string(i % 10 == 9 ? 1 << 20 : 0, 'x');
      if (writer.send(cg::MessageKind::value, bytes_of(ping), in(20s)) != cg::ChannelStatus::ok)
        return 24;
      if (reader.receive(m, in(20s)) != cg::ChannelStatus::ok) {
        return std::fprintf(stderr, "a: %s\n", std::string(reader.error()).c_str()), 25;
      }
      if (text_of(m) != ping || m.sequence != static_cast<std::uint64_t>(i))
        return 26;
    } else {
      if (reader.receive(m, in(20s)) != cg::ChannelStatus::ok) {
        return std::fprintf(stderr, "b: %s\n", std::string(reader.error()).c_str()), 27;
      }
      if (writer.send(m.kind, m.payload, in(20s)) != cg::ChannelStatus::ok)
        return 28;
    }
  }
  return 0;
}

// Actor a also runs the rendezvous, on its side of the link, and tells the
// test its port through `port_pipe`.
int host_a(int port_pipe) {
  if (!enter_namespace("cgtest-a"))
    return 10;
  cg::RendezvousServer server;
  if (server.start({netns_graph, {"a", "b"}, {"10.77.0.1", 0}, {}, launch_secret()}) !=
      NetStatus::ok) {
    return std::fprintf(stderr, "rendezvous: %s\n", server.error().c_str()), 11;
  }
  const std::uint16_t port = server.endpoint().port;
  if (::write(port_pipe, &port, sizeof port) != sizeof port)
    return 12;
  ::close(port_pipe);
  return run_actor("a", {"10.77.0.1", port}, "10.77.0.1");
}

int host_b(std::uint16_t port) {
  if (!enter_namespace("cgtest-b"))
    return 10;
  return run_actor("b", {"10.77.0.1", port}, "10.77.0.2");
}

// Waits for `pid` until `deadline`, then kills it. Returns the exit code, or -signal.
int reap(pid_t pid, cg::Deadline deadline) {
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(TcpSetup, ActorsOnTwoHostsFindEachOtherThroughTheRendezvousAndRoundTrip) {
  launch_secret(); // made here, so both forked hosts share it
  TestNamespaces namespaces;
  if (namespaces.skipped())
    GTEST_SKIP() << namespaces.output();
  ASSERT_TRUE(namespaces.up()) << namespaces.output();

  int port_pipe[2];
  ASSERT_EQ(::pipe2(port_pipe, O_CLOEXEC), 0);
  std::fflush(nullptr);
  const pid_t a = ::fork();
  ASSERT_GE(a, 0);
  if (a == 0) {
    ::close(port_pipe[0]);
    ::_exit(host_a(port_pipe[1]));
  }
  ::close(port_pipe[1]);
  std::uint16_t port = 0;
  pollfd ready{port_pipe[0], POLLIN, 0};
  const bool got_port =
      ::poll(&ready, 1, 10'000) == 1 && ::read(port_pipe[0], &port, sizeof port) == sizeof port;
  ::close(port_pipe[0]);
  pid_t b = -1;
  if (got_port) {
    b = ::fork();
    if (b == 0)
      ::_exit(host_b(port));
  }
  const cg::Deadline deadline = in(60s);
  const int code_b = b > 0 ? reap(b, deadline) : -1;
  const int code_a = reap(a, deadline);
  EXPECT_TRUE(got_port) << "host a never reported its rendezvous port";
  EXPECT_EQ(code_a, 0) << "host a (see stderr)";
  EXPECT_EQ(code_b, 0) << "host b (see stderr)";
}

} // namespace
