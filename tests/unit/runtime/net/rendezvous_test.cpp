// rendezvous_test.cpp - tests of the rendezvous (net/rendezvous.hpp), endpoints
// (net/net.hpp) and the launcher's rank (os/launcher.hpp).
//
// Clients are threads talking to a real server over loopback TCP: everyone
// gets the same full table, an actor that never shows up is named in the
// timeout (on both sides), a wrong graph or an unknown actor is refused with
// the reason, and a client started before its server retries until it listens.
//
// One file, about 820 lines: the server and its client are tested together,
// each test one conversation between them over the same loopback helpers.
#include "../../../support/scoped_env.hpp"
#include "net/rendezvous.hpp"
#include "net/socket.hpp"
#include "os/launcher.hpp"
#include <cg/detail/profile.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::NetStatus;

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

// This test's launch secret (every server and client here share it).
const cg::detail::Secret& launch_secret() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return secret;
}

// A server on loopback expecting `actors` of graph "g".
struct LoopbackServer {
  explicit LoopbackServer(std::vector<std::string> actors) {
    EXPECT_EQ(server.start({"g", std::move(actors), {"127.0.0.1", 0}, {}, launch_secret()}),
              NetStatus::ok)
        << server.error();
    address = server.endpoint();
  }
  cg::RendezvousServer server;
  cg::Endpoint address;
};

// A port nobody listens on (right now).
std::uint16_t free_port() {
  cg::detail::UniqueFd fd;
  cg::Endpoint bound;
  std::string error;
  EXPECT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, fd, bound, error), NetStatus::ok) << error;
  return bound.port;
}

using cg_test::ScopedEnv;

TEST(Rendezvous, FiveActorsOnThreadsAllGetTheFullTable) {
  const std::vector<std::string> names = {"a0", "a1", "a2", "a3", "a4"};
  LoopbackServer s(names);
  std::map<std::string, cg::Endpoint> expected;
  for (std::size_t i = 0; i < names.size(); ++i) {
    expected[names[i]] = {"127.0.0." + std::to_string(i + 1), static_cast<std::uint16_t>(4000 + i)};
  }
  std::vector<std::map<std::string, cg::Endpoint>> tables(names.size());
  std::vector<std::string> errors(names.size());
  std::vector<std::thread> actors;
  for (std::size_t i = 0; i < names.size(); ++i) {
    actors.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20 * i)); // arrive one by one
      cg::RendezvousClient client;
      NetStatus status = client.connect(s.address, "g", launch_secret(), in(10s));
      if (status == NetStatus::ok)
        status = client.publish(names[i], expected[names[i]], in(10s));
      if (status == NetStatus::ok)
        status = client.wait_for_table(in(10s));
      if (status == NetStatus::ok) // or its entry is forgotten when it goes
        status = client.ready(names[i], in(10s));
      if (status == NetStatus::ok) {
        tables[i] = client.table();
        EXPECT_EQ(client.local_host(), "127.0.0.1");
        EXPECT_EQ(client.lookup("a3"), expected["a3"]);
        EXPECT_EQ(client.lookup("nobody"), std::nullopt);
      } else {
        errors[i] = std::string(cg::to_string(status)) + ": " + client.error();
      }
    });
  }
  for (std::thread& t : actors)
    t.join();
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(errors[i], "") << names[i];
    EXPECT_EQ(tables[i], expected) << names[i];
  }
  EXPECT_EQ(s.server.wait_for_all(in(1s)), NetStatus::ok);
  EXPECT_EQ(s.server.table(), expected);
  EXPECT_TRUE(s.server.missing().empty());
}

TEST(Rendezvous, ActorThatNeverPublishesIsNamedInTheTimeoutOnBothSides) {
  LoopbackServer s({"a", "b", "c", "d"});
  // Both stay connected until both have their answer: one that left before
  // READY would be forgotten, and then missing in the other's answer.
  std::latch answered(2);
  const auto run = [&](const std::string& name, NetStatus& status, std::string& error) {
    cg::RendezvousClient client;
    status = client.connect(s.address, "g", launch_secret(), in(5s));
    if (status == NetStatus::ok)
      status = client.publish(name, {"10.0.0.1", 1234}, in(5s));
    if (status == NetStatus::ok)
      status = client.wait_for_table(in(300ms));
    error = client.error();
    answered.arrive_and_wait();
  };
  NetStatus status_a, status_b;
  std::string error_a, error_b;
  std::thread a([&] { run("a", status_a, error_a); });
  std::thread b([&] { run("b", status_b, error_b); });
  const auto start = Clock::now();
  a.join();
  b.join();
  EXPECT_LT(Clock::now() - start, 3s);
  const std::string expected =
      "rendezvous for graph 'g': timed out; actors that never published: c, d";
  EXPECT_EQ(status_a, NetStatus::timeout);
  EXPECT_EQ(error_a, expected);
  EXPECT_EQ(status_b, NetStatus::timeout);
  EXPECT_EQ(error_b, expected);

  // a and b went before READY: the server forgot them.
  EXPECT_EQ(s.server.wait_for_all(in(500ms)), NetStatus::timeout);
  EXPECT_EQ(s.server.error(),
            "rendezvous for graph 'g': timed out; actors that never published: a, b, c, d");
  EXPECT_EQ(s.server.missing(), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(Rendezvous, LateActorCompletesTheTableForThoseAlreadyWaiting) {
  LoopbackServer s({"early", "late"});
  NetStatus waited = NetStatus::system_error;
  std::map<std::string, cg::Endpoint> table;
  std::thread early([&] {
    cg::RendezvousClient client;
    ASSERT_EQ(client.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok)
        << client.error();
    ASSERT_EQ(client.publish("early", {"h1", 1}, in(5s)), NetStatus::ok) << client.error();
    waited = client.wait_for_table(in(10s));
    table = client.table();
  });
  std::this_thread::sleep_for(200ms);
  cg::RendezvousClient late;
  ASSERT_EQ(late.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok) << late.error();
  ASSERT_EQ(late.publish("late", {"h2", 2}, in(5s)), NetStatus::ok) << late.error();
  early.join();
  EXPECT_EQ(waited, NetStatus::ok);
  EXPECT_EQ(table,
            (std::map<std::string, cg::Endpoint>{{"early", {"h1", 1}}, {"late", {"h2", 2}}}));
}

TEST(Rendezvous, ClientStartedBeforeTheServerRetriesUntilItListens) {
  const std::uint16_t port = free_port();
  NetStatus connected = NetStatus::system_error;
  std::string error;
  std::thread actor([&] {
    cg::RendezvousClient client;
    connected = client.connect({"127.0.0.1", port}, "g", launch_secret(), in(10s));
    error = client.error();
  });
  std::this_thread::sleep_for(300ms);
  cg::RendezvousServer server;
  ASSERT_EQ(server.start({"g", {"a"}, {"127.0.0.1", port}, {}, launch_secret()}), NetStatus::ok)
      << server.error();
  actor.join();
  EXPECT_EQ(connected, NetStatus::ok) << error;
}

TEST(Rendezvous, ConnectGivesUpAtItsDeadlineNamingTheAddress) {
  const std::uint16_t port = free_port();
  cg::RendezvousClient client;
  const auto start = Clock::now();
  EXPECT_EQ(client.connect({"127.0.0.1", port}, "g", launch_secret(), in(200ms)),
            NetStatus::timeout);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(client.error(), "rendezvous: cannot connect to 127.0.0.1:" + std::to_string(port) +
                                " before the deadline: Connection refused");
}

TEST(Rendezvous, WrongGraphUnknownActorAndAMovedEndpointAreRefusedWithTheReason) {
  LoopbackServer s({"a", "b"});
  const std::string at = "rendezvous at " + cg::to_string(s.address) + " refused: ";

  cg::RendezvousClient stranger;
  EXPECT_EQ(stranger.connect(s.address, "other", launch_secret(), in(5s)), NetStatus::rejected);
  EXPECT_EQ(stranger.error(), at + "this rendezvous serves graph 'g', not 'other'");

  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok)
      << client.error();
  EXPECT_EQ(client.publish("z", {"h", 1}, in(5s)), NetStatus::rejected);
  EXPECT_EQ(client.error(), at + "graph 'g' has no actor 'z' (expected: a, b)");
  EXPECT_EQ(client.publish("a", {"h", 1}, in(5s)), NetStatus::ok);
  EXPECT_EQ(client.publish("a", {"h", 1}, in(5s)), NetStatus::ok)
      << "the same endpoint again is a harmless retry";
  EXPECT_EQ(client.publish("a", {"h", 2}, in(5s)), NetStatus::rejected);
  EXPECT_EQ(client.error(), at + "actor 'a' already published h:1");
  EXPECT_EQ(client.publish("b", {"0.0.0.0", 7}, in(5s)), NetStatus::rejected);
  EXPECT_EQ(client.error(), at + "'0.0.0.0:7' is not an endpoint peers can connect to");
  EXPECT_EQ(client.publish("has space", {"h", 1}, in(5s)), NetStatus::invalid_argument);
  EXPECT_EQ(client.error(),
            "actor name 'has space' is not 1 to 128 printable characters without spaces");
}

TEST(Rendezvous, ServerRefusesDuplicateOrMalformedActorNames) {
  cg::RendezvousServer server;
  EXPECT_EQ(server.start({"g", {"a", "b", "a"}, {"127.0.0.1", 0}, {}, launch_secret()}),
            NetStatus::invalid_argument);
  EXPECT_EQ(server.error(), "actor 'a' is listed twice");
  EXPECT_EQ(server.start({"g", {"a b"}, {"127.0.0.1", 0}, {}, launch_secret()}),
            NetStatus::invalid_argument);
  EXPECT_EQ(server.error(), "actor name 'a b' is not 1 to 128 printable characters without spaces");
  EXPECT_EQ(server.start({"", {"a"}, {"127.0.0.1", 0}, {}, launch_secret()}),
            NetStatus::invalid_argument);
}

// A connection to a rendezvous, spoken to line by line as a test (or an
// attacker) would.
struct RawConnection {
  explicit RawConnection(const cg::Endpoint& to) {
    EXPECT_EQ(cg::detail::connect_tcp(to, in(5s), fd, error), NetStatus::ok) << error;
  }
  void send(const std::string& text) {
    EXPECT_EQ(cg::detail::send_all(fd.get(), text.data(), text.size(), in(5s), error),
              NetStatus::ok)
        << error;
  }
  // The next line, without its '\n'; "<closed>" if the server closed first.
  std::string line() {
    std::string out;
    char c = 0;
    for (;;) {
      if (cg::detail::receive_exact(fd.get(), &c, 1, in(10s), error) != NetStatus::ok)
        return out.empty() ? "<closed>" : out + "<closed>";
      if (c == '\n')
        return out;
      out += c;
    }
  }
  // Whether the server closed the connection (nothing more arrives).
  bool closed() {
    char c = 0;
    return cg::detail::receive_exact(fd.get(), &c, 1, in(10s), error) == NetStatus::closed;
  }
  // Reads the CHALLENGE and answers it as a client of graph `graph` knowing `secret`.
  void hello(const cg::detail::Secret& secret, const std::string& graph = "g") {
    const std::string challenge = line();
    ASSERT_EQ(challenge.rfind("CHALLENGE ", 0), 0u) << challenge;
    server_nonce = challenge.substr(10);
    hello_line = hello_for(secret, graph, server_nonce);
    send(hello_line);
  }
  std::string hello_for(const cg::detail::Secret& secret, const std::string& graph,
                        const std::string& nonce) {
    client_nonce = cg::detail::fresh_nonce();
    return "HELLO cg-rendezvous/3 " + graph + " " + client_nonce + " " +
           secret.prove("cg-rendezvous/3 client " + graph + " " + nonce + " " + client_nonce) +
           "\n";
  }
  cg::detail::UniqueFd fd;
  std::string error;
  std::string server_nonce, client_nonce, hello_line;
};

TEST(Rendezvous, ServerSpeaksTheDocumentedLineProtocol) {
  LoopbackServer s({"a"});
  RawConnection c(s.address);
  c.hello(launch_secret());
  // After HELLO, every line each way ends in its tag (net/rendezvous_wire.hpp).
  namespace wire = cg::detail::rendezvous_wire;
  const wire::LineKeys keys = wire::line_keys(launch_secret(), "g", c.server_nonce, c.client_nonce);
  wire::LineTagger to_server(keys.to_server);
  wire::LineChecker from_server(keys.to_client);
  EXPECT_EQ(from_server.line(c.line()),
            "OK " + launch_secret().prove("cg-rendezvous/3 server g " + c.server_nonce + " " +
                                          c.client_nonce));
  const auto exchange = [&](const std::string& request, const std::string& reply) {
    c.send(to_server.line(request.substr(0, request.size() - 1)));
    std::string got = from_server.line(c.line()).value_or("<bad tag>");
    for (std::size_t lines = std::count(reply.begin(), reply.end(), '\n'); lines > 1; --lines)
      got += "\n" + from_server.line(c.line()).value_or("<bad tag>");
    EXPECT_EQ(got + "\n", reply) << request;
  };
  exchange("LOOKUP 0\n", "MISSING 1 a\n");
  exchange("PUBLISH a 10.1.2.3:99\n", "OK\n");
  exchange("LOOKUP 0\n", "TABLE 1\na 10.1.2.3:99\n");
  exchange("FROB\n", "ERROR unknown request 'FROB'\n");
  EXPECT_TRUE(s.server.rejections().empty());
}

// ---- Authentication: every way in without the secret is closed ---------------

// A server whose rejections are also collected through on_rejected.
struct GuardedServer {
  GuardedServer() {
    EXPECT_EQ(server.start({.graph = "g",
                            .actors = {"a"},
                            .listen = {"127.0.0.1", 0},
                            .secret = launch_secret(),
                            .on_rejected =
                                [this](const std::string& why) {
                                  std::lock_guard lock(mutex);
                                  logged.push_back(why);
                                }}),
              NetStatus::ok)
        << server.error();
  }
  std::vector<std::string> log() {
    std::lock_guard lock(mutex);
    return logged;
  }
  // Waits until `n` rejections were logged; the log then.
  std::vector<std::string> wait_for_log(std::size_t n) {
    const auto until = Clock::now() + 10s;
    while (log().size() < n && Clock::now() < until)
      std::this_thread::sleep_for(10ms);
    return log();
  }
  // Whether an honest client still gets in and publishes.
  bool still_serves() {
    cg::RendezvousClient client;
    return client.connect(server.endpoint(), "g", launch_secret(), in(5s)) == NetStatus::ok &&
           client.publish("a", {"10.0.0.1", 1}, in(5s)) == NetStatus::ok;
  }
  cg::RendezvousServer server;
  std::mutex mutex;
  std::vector<std::string> logged;
};

std::string after_peer(const std::string& rejection) {
  const std::string prefix = "connection from 127.0.0.1:";
  EXPECT_EQ(rejection.rfind(prefix, 0), 0u) << rejection;
  return rejection.substr(rejection.find(": ") + 2);
}

TEST(RendezvousAuth, AClientWithAnotherSecretIsRefusedAndLogged) {
  GuardedServer s;
  cg::RendezvousClient stranger;
  EXPECT_EQ(stranger.connect(s.server.endpoint(), "g", cg::detail::Secret::generate(), in(5s)),
            NetStatus::rejected);
  EXPECT_EQ(stranger.error(), "rendezvous at " + cg::to_string(s.server.endpoint()) +
                                  " refused: authentication failed");
  ASSERT_EQ(s.wait_for_log(1).size(), 1u);
  EXPECT_EQ(after_peer(s.log()[0]),
            "authentication failed (wrong secret, or a HELLO answering another challenge)");
  EXPECT_EQ(s.server.rejections(), s.log());
  EXPECT_TRUE(s.still_serves());
}

TEST(RendezvousAuth, NothingButTheChallengeIsAnsweredBeforeAHello) {
  GuardedServer s;
  for (const std::string request :
       {"LOOKUP 0\n", "PUBLISH a 10.6.6.6:1\n", "READY a\n", "GET / HTTP/1.1\r\n\r\n"}) {
    RawConnection c(s.server.endpoint());
    EXPECT_EQ(c.line().rfind("CHALLENGE ", 0), 0u);
    c.send(request);
    EXPECT_EQ(c.line(), "ERROR authentication failed") << request;
    EXPECT_TRUE(c.closed()) << request;
  }
  ASSERT_EQ(s.wait_for_log(4).size(), 4u);
  EXPECT_EQ(after_peer(s.log()[0]), "authentication failed (not a HELLO)");
  EXPECT_TRUE(s.server.table().empty()) << "a stranger published";
  EXPECT_TRUE(s.still_serves());
}

TEST(RendezvousAuth, AReplayedHelloAnswersTheOldChallengeAndFails) {
  GuardedServer s;
  RawConnection first(s.server.endpoint());
  first.hello(launch_secret());
  EXPECT_EQ(first.line().rfind("OK ", 0), 0u);
  RawConnection replay(s.server.endpoint());
  EXPECT_EQ(replay.line().rfind("CHALLENGE ", 0), 0u);
  replay.send(first.hello_line); // recorded on the wire, sent again
  EXPECT_EQ(replay.line(), "ERROR authentication failed");
  EXPECT_TRUE(replay.closed());
  ASSERT_EQ(s.wait_for_log(1).size(), 1u);
  EXPECT_EQ(after_peer(s.log()[0]),
            "authentication failed (wrong secret, or a HELLO answering another challenge)");
}

TEST(RendezvousAuth, GarbageTruncatedAndOversizedHellosAreDroppedAndLogged) {
  GuardedServer s;
  {
    RawConnection garbage(s.server.endpoint());
    garbage.line();
    garbage.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n", 12)); // TLS
    EXPECT_EQ(garbage.line(), "ERROR authentication failed");
  }
  {
    RawConnection oversized(s.server.endpoint());
    oversized.line();
    oversized.send("HELLO cg-rendezvous/3 g " + std::string(5000, 'x'));
    EXPECT_EQ(oversized.line(), "ERROR authentication failed");
    EXPECT_TRUE(oversized.closed());
  }
  {
    RawConnection truncated(s.server.endpoint());
    truncated.line();
    truncated.send("HELLO cg-rendezvous/3 g 0123"); // and the connection ends
  }
  const std::vector<std::string> log = s.wait_for_log(3);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(after_peer(log[0]), "authentication failed (not a HELLO)");
  EXPECT_EQ(after_peer(log[1]), "authentication failed (a line longer than 4096 bytes)");
  EXPECT_EQ(after_peer(log[2]), "closed before it authenticated");
  EXPECT_TRUE(s.still_serves());
}

TEST(RendezvousAuth, SilentConnectionsAreDroppedAfterFiveSecondsAndStallNobody) {
  GuardedServer s;
  std::vector<std::unique_ptr<RawConnection>> silent;
  for (int i = 0; i < 3; ++i)
    silent.push_back(std::make_unique<RawConnection>(s.server.endpoint()));
  const auto start = Clock::now();
  EXPECT_TRUE(s.still_serves());
  EXPECT_LT(Clock::now() - start, 1s) << "silent connections delayed an honest client";
  const std::vector<std::string> log = s.wait_for_log(3);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_GE(Clock::now() - start, 4s);
  for (const std::string& rejection : log)
    EXPECT_EQ(after_peer(rejection), "did not authenticate within 5 s");
  for (auto& c : silent) {
    EXPECT_EQ(c->line().rfind("CHALLENGE ", 0), 0u);
    EXPECT_TRUE(c->closed());
  }
}

TEST(RendezvousAuth, TheClientRefusesAServerThatCannotProveTheSecret) {
  // An impostor: it challenges and says OK, but cannot prove the secret.
  cg::detail::UniqueFd listener;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), NetStatus::ok);
  std::thread impostor([&] {
    cg::detail::UniqueFd fd;
    std::string why;
    if (cg::detail::accept_tcp(listener.get(), in(5s), fd, why) != NetStatus::ok)
      return;
    const std::string challenge = "CHALLENGE " + cg::detail::fresh_nonce() + "\n";
    cg::detail::send_all(fd.get(), challenge.data(), challenge.size(), in(5s), why);
    char c = 0;
    while (cg::detail::receive_exact(fd.get(), &c, 1, in(5s), why) == NetStatus::ok && c != '\n') {
    }
    const std::string ok = "OK " + std::string(64, '0') + " slots=4 slot_bytes=512\n";
    cg::detail::send_all(fd.get(), ok.data(), ok.size(), in(5s), why);
    std::this_thread::sleep_for(200ms);
  });
  cg::RendezvousClient client;
  EXPECT_EQ(client.connect(bound, "g", launch_secret(), in(5s)), NetStatus::protocol_error);
  EXPECT_EQ(client.error(), "rendezvous at " + cg::to_string(bound) +
                                " could not prove it knows the launch's secret: it is not this "
                                "launch's driver");
  impostor.join();
}

TEST(RendezvousAuth, AnActorGoneBeforeReadyLeavesTheTableSoItsNameCanBePublishedAgain) {
  GuardedServer s;
  {
    cg::RendezvousClient early;
    ASSERT_EQ(early.connect(s.server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok);
    ASSERT_EQ(early.publish("a", {"10.0.0.9", 9}, in(5s)), NetStatus::ok);
  } // gone before READY
  const auto until = Clock::now() + 5s;
  while (!s.server.table().empty() && Clock::now() < until)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(s.server.table().empty());
  cg::RendezvousClient again;
  ASSERT_EQ(again.connect(s.server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok);
  EXPECT_EQ(again.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok) << again.error();
  ASSERT_EQ(again.ready("a", in(5s)), NetStatus::ok);
  EXPECT_EQ(s.server.table().at("a"), (cg::Endpoint{"10.0.0.1", 1}));
}

TEST(Rendezvous, ConstructorArgumentsReachTheClientThatPublishedTheActor) {
  std::vector<std::byte> args(10'000);
  for (std::size_t i = 0; i < args.size(); ++i)
    args[i] = static_cast<std::byte>(i * 7); // '\n' and NUL among them, longer than a line
  cg::RendezvousServer server;
  ASSERT_EQ(server.start({.graph = "g",
                          .actors = {"a", "b"},
                          .listen = {"127.0.0.1", 0},
                          .secret = launch_secret(),
                          .constructor_args = {{"a", args}}}),
            NetStatus::ok);
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok);
  std::optional<std::vector<std::byte>> got;
  EXPECT_EQ(client.constructor_args("a", in(5s), got), NetStatus::rejected);
  EXPECT_EQ(client.error(), "rendezvous at " + cg::to_string(server.endpoint()) +
                                " answered ARGS with 'ERROR actor 'a' was not published on this "
                                "connection'");
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("b", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.constructor_args("a", in(5s), got), NetStatus::ok) << client.error();
  EXPECT_EQ(got, args);
  ASSERT_EQ(client.constructor_args("b", in(5s), got), NetStatus::ok) << client.error();
  EXPECT_EQ(got, std::nullopt);
  EXPECT_EQ(client.wait_for_table(in(5s)), NetStatus::ok) << "the stream is in step after ARGS";
}

TEST(Rendezvous, NcclIdsReachOnlyAClientThatPublishedAnActor) {
  std::vector<std::byte> ids(2 * 128);
  for (std::size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<std::byte>(i * 13 + 10); // '\n' and NUL among them
  cg::RendezvousServer server;
  ASSERT_EQ(server.start({.graph = "g",
                          .actors = {"a", "b"},
                          .listen = {"127.0.0.1", 0},
                          .secret = launch_secret(),
                          .nccl_ids = ids}),
            NetStatus::ok);
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok);
  std::vector<std::byte> got;
  EXPECT_EQ(client.nccl_ids(in(5s), got), NetStatus::rejected);
  EXPECT_EQ(client.error(), "rendezvous at " + cg::to_string(server.endpoint()) +
                                " answered NCCL with 'ERROR no actor was published on this "
                                "connection'");
  ASSERT_EQ(client.publish("b", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.nccl_ids(in(5s), got), NetStatus::ok) << client.error();
  EXPECT_EQ(got, ids);
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  EXPECT_EQ(client.wait_for_table(in(5s)), NetStatus::ok) << "the stream is in step after NCCL";
}

TEST(Rendezvous, AGraphWithHostCommunicatorsHasNoNcclIds) {
  cg::RendezvousServer server;
  ASSERT_EQ(
      server.start(
          {.graph = "g", .actors = {"a"}, .listen = {"127.0.0.1", 0}, .secret = launch_secret()}),
      NetStatus::ok);
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  std::vector<std::byte> got(3);
  ASSERT_EQ(client.nccl_ids(in(5s), got), NetStatus::ok) << client.error();
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(client.wait_for_table(in(5s)), NetStatus::ok);
}

TEST(Liveness, ASocketIsGivenKeepaliveAndTheUserTimeout) {
  cg::detail::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd);
  ASSERT_TRUE(cg::detail::set_liveness_timeout(fd.get(), 2500ms));
  int keepalive = 0;
  unsigned user_timeout = 0;
  socklen_t size = sizeof keepalive;
  ASSERT_EQ(::getsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &keepalive, &size), 0);
  size = sizeof user_timeout;
  ASSERT_EQ(::getsockopt(fd.get(), IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, &size), 0);
  EXPECT_EQ(keepalive, 1);
  EXPECT_EQ(user_timeout, 2500u);
}

TEST(RendezvousAuth, AServerWithoutASecretDoesNotStart) {
  cg::RendezvousServer server;
  EXPECT_EQ(server.start({"g", {"a"}, {"127.0.0.1", 0}}), NetStatus::invalid_argument);
  EXPECT_EQ(server.error(), "a rendezvous server needs the launch's secret");
}

TEST(Rendezvous, AddressComesFromTheEnvironment) {
  {
    ScopedEnv env(cg::rendezvous_variable, "10.1.2.3:4567");
    EXPECT_EQ(cg::rendezvous_from_env(), (cg::Endpoint{"10.1.2.3", 4567}));
  }
  {
    ScopedEnv env(cg::rendezvous_variable, "no-port");
    EXPECT_EQ(cg::rendezvous_from_env(), std::nullopt);
  }
  ScopedEnv env(cg::rendezvous_variable, nullptr);
  EXPECT_EQ(cg::rendezvous_from_env(), std::nullopt);
}

TEST(Rendezvous, EndpointsParseAndPrintHostAndPort) {
  EXPECT_EQ(cg::parse_endpoint("node7.cluster:80"), (cg::Endpoint{"node7.cluster", 80}));
  EXPECT_EQ(cg::parse_endpoint("[fe80::1]:65535"), (cg::Endpoint{"fe80::1", 65535}));
  EXPECT_EQ(cg::to_string(cg::Endpoint{"fe80::1", 8}), "[fe80::1]:8");
  EXPECT_EQ(cg::to_string(cg::Endpoint{"h", 8}), "h:8");
  for (const char* bad :
       {"", "h", "h:", ":80", "h:65536", "h:8x", "fe80::1:80", "[fe80::1]80", "a b:1", "h:-1"}) {
    EXPECT_EQ(cg::parse_endpoint(bad), std::nullopt) << bad;
  }
}

TEST(Rendezvous, LauncherRankComesFromTheFirstVariableSet) {
  ScopedEnv ompi("OMPI_COMM_WORLD_RANK", nullptr);
  ScopedEnv pmi("PMI_RANK", nullptr);
  ScopedEnv slurm("SLURM_PROCID", nullptr);
  EXPECT_EQ(cg::detail::launcher_rank(), std::nullopt);
  {
    ScopedEnv s("SLURM_PROCID", "5");
    EXPECT_EQ(cg::detail::launcher_rank(), 5);
    ScopedEnv p("PMI_RANK", "3");
    EXPECT_EQ(cg::detail::launcher_rank(), 3);
    ScopedEnv o("OMPI_COMM_WORLD_RANK", "0");
    EXPECT_EQ(cg::detail::launcher_rank(), 0);
  }
  ScopedEnv malformed("OMPI_COMM_WORLD_RANK", "2x");
  ScopedEnv s("SLURM_PROCID", "5");
  EXPECT_EQ(cg::detail::launcher_rank(), std::nullopt)
      << "a malformed rank is not replaced by another launcher's";
}

} // namespace

// ---- What the driver of a graph on several hosts adds ----------------------------

TEST(Rendezvous, GreetingReadyAndADriverEntryReachTheClients) {
  cg::RendezvousServer server;
  ASSERT_EQ(server.start({"g", {"b"}, {"127.0.0.1", 0}, "slots=4 slot_bytes=512", launch_secret()}),
            NetStatus::ok)
      << server.error();
  server.publish_local("@driver", {"127.0.0.1", 4100});
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok)
      << client.error();
  EXPECT_EQ(client.greeting(), "slots=4 slot_bytes=512");
  ASSERT_EQ(client.publish("b", {"127.0.0.2", 4200}, in(5s)), NetStatus::ok) << client.error();
  ASSERT_EQ(client.wait_for_table(in(5s)), NetStatus::ok) << client.error();
  EXPECT_EQ(client.table(), (std::map<std::string, cg::Endpoint>{{"@driver", {"127.0.0.1", 4100}},
                                                                 {"b", {"127.0.0.2", 4200}}}));
  EXPECT_EQ(server.ready_count(), 0u);
  ASSERT_EQ(client.ready("b", in(5s)), NetStatus::ok) << client.error();
  EXPECT_EQ(server.ready_count(), 1u);
  EXPECT_EQ(client.ready("c", in(5s)), NetStatus::rejected);
  EXPECT_EQ(client.error(), "rendezvous at " + cg::to_string(server.endpoint()) +
                                " answered READY with 'ERROR actor 'c' was not published on this "
                                "connection'");
}

// Under load a remote actor can publish and ask for the table before the
// driver has put its own entry in: that entry must answer the waiting
// LOOKUP at once, not at the LOOKUP's deadline (a launch then timed out).
TEST(Rendezvous, TheDriverEntryAnswersALookupAlreadyWaiting) {
  cg::RendezvousServer server;
  ASSERT_EQ(
      server.start(
          {"g", {"b", "@driver"}, {"127.0.0.1", 0}, "slots=4 slot_bytes=512", launch_secret()}),
      NetStatus::ok)
      << server.error();
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok)
      << client.error();
  ASSERT_EQ(client.publish("b", {"127.0.0.2", 4200}, in(5s)), NetStatus::ok) << client.error();
  NetStatus looked_up = NetStatus::system_error;
  Clock::duration waited{};
  std::thread remote([&] {
    const auto start = Clock::now();
    looked_up = client.wait_for_table(in(10s));
    waited = Clock::now() - start;
  });
  std::this_thread::sleep_for(300ms); // the LOOKUP is with the server by now
  server.publish_local("@driver", {"127.0.0.1", 4100});
  remote.join();
  ASSERT_EQ(looked_up, NetStatus::ok) << client.error();
  EXPECT_LT(waited, 5s)
      << "the LOOKUP was answered at its deadline, not when the table became complete";
  EXPECT_EQ(client.table().size(), 2u);
}

// What on_lost heard when a client that published "b" and "c" said `said`
// (FAILED) and went away.
struct Lost {
  std::vector<std::string> actors;
  cg::RemoteFailure why;
};
Lost lost_after(const std::optional<cg::RemoteFailure>& said) {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<Lost> lost;
  cg::RendezvousServer server;
  EXPECT_EQ(
      server.start({"g",
                    {"b", "c"},
                    {"127.0.0.1", 0},
                    "",
                    launch_secret(),
                    [&](const std::vector<std::string>& actors, const cg::RemoteFailure& why) {
                      std::lock_guard lock(mutex);
                      lost = Lost{actors, why};
                      changed.notify_all();
                    }}),
      NetStatus::ok);
  {
    cg::RendezvousClient client;
    EXPECT_EQ(client.connect(server.endpoint(), "g", launch_secret(), in(5s)), NetStatus::ok)
        << client.error();
    EXPECT_EQ(client.publish("b", {"127.0.0.2", 4200}, in(5s)), NetStatus::ok);
    EXPECT_EQ(client.publish("c", {"127.0.0.2", 4200}, in(5s)), NetStatus::ok);
    if (said)
      client.report_failure(*said);
  } // the connection closes
  std::unique_lock lock(mutex);
  EXPECT_TRUE(changed.wait_for(lock, 5s, [&] { return lost.has_value(); }));
  return lost.value_or(Lost{});
}

TEST(Rendezvous, AClientThatGoesAwayIsReportedWithItsActorsAndWhatItSaid) {
  using Cause = cg::RemoteFailure::Cause;
  Lost channel = lost_after(
      cg::RemoteFailure{Cause::channel, "", "lost frame: expected sequence 3, got 5 (2 missing)"});
  EXPECT_EQ(channel.actors, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(channel.why.cause, Cause::channel);
  EXPECT_EQ(channel.why.actor, "");
  EXPECT_EQ(channel.why.reason, "lost frame: expected sequence 3, got 5 (2 missing)");

  // Which actor failed travels as a field, the reason (with its spaces and
  // quotes) as the rest of the line.
  Lost actor =
      lost_after(cg::RemoteFailure{Cause::actor, "c", "std::runtime_error: 'c' says no  (twice)"});
  EXPECT_EQ(actor.why.cause, Cause::actor);
  EXPECT_EQ(actor.why.actor, "c");
  EXPECT_EQ(actor.why.reason, "std::runtime_error: 'c' says no  (twice)");

  Lost host = lost_after(cg::RemoteFailure{Cause::host, "", "actors did not start within 60 s"});
  EXPECT_EQ(host.why.cause, Cause::host);
  EXPECT_EQ(host.why.reason, "actors did not start within 60 s");

  Lost silent = lost_after(std::nullopt);
  EXPECT_EQ(silent.actors, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(silent.why.cause, Cause::none);
  EXPECT_EQ(silent.why.reason, "");
}

TEST(Rendezvous, AFailedActorTheClientDidNotPublishIsNotBelieved) {
  using Cause = cg::RemoteFailure::Cause;
  Lost other = lost_after(cg::RemoteFailure{Cause::actor, "a", "std::logic_error: not mine"});
  EXPECT_EQ(other.why.cause, Cause::host) << "only an actor the client runs can be named";
  EXPECT_EQ(other.why.actor, "");
  EXPECT_EQ(other.why.reason, "std::logic_error: not mine");
}

// The client's side of a PROFILE request: waits for it, then sends what
// `payloads` says for each actor.
void answer_profile_request(cg::RendezvousClient& client,
                            const std::map<std::string, std::string>& payloads) {
  for (auto until = in(5s); Clock::now() < until;) {
    std::vector<std::string> requests;
    ASSERT_EQ(client.poll_requests(requests), NetStatus::ok) << client.error();
    if (std::find(requests.begin(), requests.end(), "PROFILE") != requests.end()) {
      ASSERT_EQ(client.send_clock(cg::detail::monotonic_ns(), in(5s)), NetStatus::ok);
      for (const auto& [actor, payload] : payloads)
        ASSERT_EQ(client.send_profile(actor, payload, in(5s)), NetStatus::ok);
      return;
    }
    std::this_thread::sleep_for(1ms);
  }
  ADD_FAILURE() << "no PROFILE request";
}

TEST(RendezvousProfiles, ClientsSendTheirActorsProfilesWhenAskedOnTheServersClock) {
  LoopbackServer s({"a", "b"});
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("b", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.wait_for_table(in(5s)), NetStatus::ok);
  const std::string binary("\0\n\x01 profile\n", 12); // newlines and NULs among the bytes
  std::thread actor([&] {
    answer_profile_request(client, {{"a", binary}, {"b", std::string(100'000, 'x')}});
  });
  const std::map<std::string, cg::RemoteProfile> got = s.server.collect_profiles(in(10s));
  actor.join();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.at("a").payload, binary);
  EXPECT_EQ(got.at("b").payload, std::string(100'000, 'x'));
  // One clock on one host: the offset is 0, to within half the round trip.
  EXPECT_GT(got.at("a").uncertainty_ns, 0);
  EXPECT_LE(std::abs(got.at("a").offset_ns), got.at("a").uncertainty_ns + 1);
  EXPECT_EQ(got.at("b").offset_ns, got.at("a").offset_ns) << "one clock reading per process";
  // The stream is in step after the bytes.
  std::optional<std::vector<std::byte>> args;
  EXPECT_EQ(client.constructor_args("a", in(5s), args), NetStatus::ok) << client.error();
}

TEST(RendezvousProfiles, AClientThatNeverAnswersHoldsCollectionUpOnlyUntilTheDeadline) {
  LoopbackServer s({"a"});
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  const auto start = Clock::now();
  EXPECT_TRUE(s.server.collect_profiles(in(300ms)).empty());
  EXPECT_LT(Clock::now() - start, 3s);
  // Nobody published on a server with no clients: nothing to wait for.
  LoopbackServer empty({"x"});
  const auto at_once = Clock::now();
  EXPECT_TRUE(empty.server.collect_profiles(in(10s)).empty());
  EXPECT_LT(Clock::now() - at_once, 1s);
}

TEST(RendezvousProfiles, AProfileOfAnActorNotPublishedHereEndsTheConnection) {
  LoopbackServer s({"a", "b"});
  cg::RendezvousClient client;
  ASSERT_EQ(client.connect(s.address, "g", launch_secret(), in(5s)), NetStatus::ok);
  ASSERT_EQ(client.publish("a", {"10.0.0.1", 1}, in(5s)), NetStatus::ok);
  ASSERT_EQ(client.send_profile("b", "forged", in(5s)), NetStatus::ok);
  std::vector<std::string> said;
  for (auto until = in(5s); Clock::now() < until;) {
    std::vector<std::string> requests;
    const NetStatus status = client.poll_requests(requests);
    said.insert(said.end(), requests.begin(), requests.end());
    if (status == NetStatus::closed)
      break;
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.back(), "ERROR PROFILE follows a CLOCK and wants an actor published here and a "
                         "size of at most 1073741824 bytes");
}
