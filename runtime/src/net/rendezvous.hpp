// net/rendezvous.hpp - how the actors of a graph spread over several hosts find each other.
//
// The driver runs a RendezvousServer that knows which actors to expect and
// hands its address to every actor in the CG_RENDEZVOUS environment variable.
// Each actor listens for its incoming channels on a port of its own (see
// net/tcp_setup.hpp), publishes "name -> host:port" and waits for the full
// table; once every expected actor has published, everyone gets the table.
//
//   // Driver:
//   cg::detail::Secret secret = cg::detail::Secret::generate();   // net/secret.hpp
//   cg::RendezvousServer server;
//   if (server.start({.graph = "pipeline", .actors = {"a", "b"}, .secret = secret}) !=
//       cg::NetStatus::ok)
//     fail(server.error());
//   // start the actors with CG_RENDEZVOUS=server.address_for_actors() and the secret
//   if (server.wait_for_all(deadline) != cg::NetStatus::ok)
//     fail(server.error());  // names who never came
//
//   // Actor "a":
//   cg::RendezvousClient client;
//   client.connect(*cg::rendezvous_from_env(), "pipeline", secret, deadline);  // retries
//   client.publish("a", {client.local_host(), listener.endpoint().port}, deadline);
//   client.wait_for_table(deadline);  // timeout: error() names the actors that never published
//   cg::Endpoint b = *client.lookup("b");
//
// Protocol (cg-rendezvous/3). One TCP connection per client; lines of ASCII
// ended by '\n', at most 4096 bytes, fields separated by one space. Names
// (graph, actor) are 1 to 128 printable characters other than space; endpoints
// are written as cg::to_string(Endpoint) writes them; nonces are 32 and
// proofs 64 hexadecimal digits.
//
//   client                              server
//                                   <-  CHALLENGE <server nonce>   (on connecting)
//   HELLO cg-rendezvous/3 <graph> <client nonce> <client proof>
//                                   ->  OK <server proof>[ <greeting>]
//                                       | ERROR <reason> (and closes: wrong protocol,
//                                         authentication failed, wrong graph)
//   PUBLISH <actor> <host:port>     ->  OK | ERROR <reason> (not an expected actor, bad endpoint,
//                                                           already published elsewhere)
//   READY <actor>                   ->  OK (the actor is constructed and runs)
//   FAILED <cause> <actor> <reason ...>
//                                   ->  OK (why this client is about to go away: cause
//                                       "actor", one of its actors failed, and <actor> names
//                                       it; "channel", a channel frame was bad; "host",
//                                       anything else; <actor> is "-" for those two)
//   ARGS <actor>                    ->  ARGS <n>, then n bytes: the actor's encoded constructor
//                                       arguments given to launch(); NONE if it was given none;
//                                       ERROR if the actor was not published on this connection
//   NCCL                            ->  NCCL <n>, then n bytes: the NCCL unique id of every
//                                       communicator group (128 bytes each, by group; n = 0
//                                       for host communicators); ERROR if no actor was
//                                       published on this connection
//   (asked by the server with a line "PROFILE", once its actors run:)
//   CLOCK <ns>                      ->  (no answer) this host's CLOCK_MONOTONIC, read as the
//                                       request arrived: the server's round trip bounds it
//   PROFILE <actor> <n>             ->  (no answer) then n bytes: the profile of an actor
//                                       published on this connection (actor/profile_trace.hpp)
//   LOOKUP <wait-ms>                ->  once every expected actor has published:
//                                         TABLE <n>, then n lines "<actor> <host:port>" sorted by
//                                         name
//                                       or, if some have not after <wait-ms> (or the server stops):
//                                         MISSING <k> <actor> ... (the k absent actors, sorted)
//                                       or ERROR <reason>
//
// Every line after HELLO, the server's OK to it included, ends in " <tag>",
// and every counted payload (ARGS, NCCL, PROFILE) is followed by 16 bytes of
// tag (net/rendezvous_wire.hpp); a line or payload whose tag fails closes the
// connection, is never acted upon, and is reported naming the peer: the
// server's wait_for_all() then fails at once (protocol_error), and a client
// that had published is lost with the reason.
//
// Authentication: the client proof is the HMAC of
// "cg-rendezvous/3 client <graph> <server nonce> <client nonce>" under the
// launch's secret, the server proof that of the same with "server"
// (net/secret.hpp). Nothing but the CHALLENGE is sent to a connection before
// its HELLO proved the secret; one that fails (wrong or missing secret,
// garbage, a line too long, a replayed HELLO, whose proof answers another
// nonce) or stays silent for 5 s is answered at most "ERROR authentication
// failed", closed, and reported through Options::on_rejected. The client
// checks the server's proof too, so it never publishes to an impostor.
// Connections that never speak crowd nobody out: past 512 authenticating at
// once (128 from one address), the oldest that has been silent over a second
// is shed; out of descriptors, the server pauses accepting for 50 ms at a time.
//
// Publishing the same endpoint again is allowed (a retrying client); any
// command before HELLO is an error. A published entry stays when its client
// disconnects after READY; one whose client goes before READY is forgotten
// (so an actor that failed early can be started again). The server serves
// every client from one thread of its own. A client that published stays
// connected while its actors run: when its connection ends (the process
// died, its host went away, it said FAILED first, or its host went silent for
// Options::silence) the server calls Options::on_lost with its actors.
#pragma once

#include "net/net.hpp"
#include "net/rendezvous_wire.hpp"
#include "net/secret.hpp"
#include "net/socket.hpp"
#include <cg/detail/channel.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cg {

// Where actors find the rendezvous: "host:port".
inline constexpr const char* rendezvous_variable = "CG_RENDEZVOUS";

// The endpoint in CG_RENDEZVOUS; nullopt when it is unset or not "host:port".
std::optional<Endpoint> rendezvous_from_env();

// One actor's profile as its process sent it (RendezvousServer::collect_profiles).
// Why a client that published went away: what it said (FAILED), or what
// the server saw (its host went silent).
struct RemoteFailure {
  enum class Cause {
    none,       // it said nothing: its process died, or its connection broke
    actor,      // one of its actors failed (its method or constructor threw)
    channel,    // a channel frame it read was bad
    host,       // anything else it said
    unreachable // its host answered nothing for Options::silence
  };
  Cause cause = Cause::none;
  std::string actor;  // Cause::actor: which actor of the client (one it published)
  std::string reason; // "<type>: <what>" for an actor; the fault, in words, otherwise
};

struct RemoteProfile {
  std::string payload;             // actor/profile_trace.hpp's encoding
  std::int64_t offset_ns = 0;      // its host's CLOCK_MONOTONIC minus ours: its CLOCK reading
                                   // minus the middle of our request's round trip
  std::int64_t uncertainty_ns = 0; // half that round trip: the offset is right to within it
};

// The driver side. Not copyable or movable; stop() or the destructor ends it.
class RendezvousServer {
public:
  struct Options {
    std::string graph;                      // clients must name the same graph
    std::vector<std::string> actors;        // every actor expected to publish (no duplicates)
    Endpoint listen{"0.0.0.0", 0};          // port 0: an ephemeral port
    std::string greeting{};                 // sent after "OK <proof> " to HELLO
    std::optional<detail::Secret> secret{}; // the launch's; start() refuses to serve without
    // Called on the serving thread when the connection of a client that
    // published ends: its actors, and why (Cause::none if it did not say).
    std::function<void(const std::vector<std::string>& actors, const RemoteFailure& why)> on_lost{};
    // Called on the serving thread for a connection dropped before it
    // authenticated: "connection from 10.0.0.9:51234: authentication failed",
    // for the first 5 of a second; the rest once a second, summed up: "12345
    // more connections from 2 addresses in the last 1.0 s (12000 closed
    // before it authenticated, 345 ...)" (net/accept_guard.hpp).
    std::function<void(const std::string& why)> on_rejected{};
    // A client whose host answers nothing this long (a partition, a host
    // powered off: its connection stays open) is lost as if it had closed,
    // with the reason "unreachable: ..." (see detail::set_liveness_timeout).
    std::chrono::milliseconds silence{5000};
    // Per actor, the encoded constructor arguments launch() was given for
    // it (answered to ARGS).
    std::map<std::string, std::vector<std::byte>> constructor_args{};
    // The NCCL unique ids of the graph's communicator groups, back to back
    // (answered to NCCL); empty for host communicators.
    std::vector<std::byte> nccl_ids{};
  };

  RendezvousServer();
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  // Binds, listens and starts serving on a thread of its own. invalid_argument
  // for a bad or duplicate name; system_error if it cannot listen.
  NetStatus start(Options options);

  // Where it listens (the real port).
  Endpoint endpoint() const;
  // What actors should connect to: endpoint(), with a wildcard host (0.0.0.0,
  // ::) replaced by this host's name.
  Endpoint address_for_actors() const;

  // Waits until every expected actor has published. timeout: error() says
  // "rendezvous for graph 'g': timed out; actors that never published: c, d".
  NetStatus wait_for_all(Deadline deadline);

  // Adds an entry that no client publishes (the driver's own listener);
  // it is in every table sent, and no actor is expected under its name.
  void publish_local(const std::string& name, const Endpoint& where);
  // Actors that said READY so far.
  std::size_t ready_count() const;

  std::map<std::string, Endpoint> table() const; // published so far
  std::vector<std::string> missing() const;      // expected and not yet published, sorted
  std::string error() const;                     // why the last call failed
  std::vector<std::string> rejections() const;   // the first 64 said to on_rejected one by one

  // Asks every client that published (and is still connected) for its
  // actors' profiles, and waits until each has sent them or `deadline`
  // passes: what arrived, by actor.
  std::map<std::string, RemoteProfile> collect_profiles(Deadline deadline) const;

  // Stops serving: waiting lookups are answered MISSING, connections closed.
  void stop();

private:
  struct State;
  std::unique_ptr<State> state_;
};

// The actor side. Movable, not copyable; one thread at a time.
class RendezvousClient {
public:
  // Connects to the server (retrying while nobody listens, until `deadline`)
  // and says HELLO for `graph`, proving `secret`. rejected: the server serves
  // another graph, or did not accept the proof; protocol_error also when the
  // server could not prove the secret itself.
  NetStatus connect(const Endpoint& server, std::string_view graph, const detail::Secret& secret,
                    Deadline deadline);

  // Announces that `actor` accepts its channels at `data_plane`. rejected:
  // the server does not expect that actor, or it published elsewhere already.
  NetStatus publish(std::string_view actor, const Endpoint& data_plane, Deadline deadline);

  // Waits for the full table. timeout: error() says "rendezvous for graph
  // 'g': timed out; actors that never published: c, d" (the server's answer
  // at the deadline), or that the server did not answer at all.
  NetStatus wait_for_table(Deadline deadline);

  const std::map<std::string, Endpoint>& table() const noexcept { return table_; }
  std::optional<Endpoint> lookup(std::string_view actor) const;

  // This end's address on the connection to the server: the address of the
  // interface that reaches the driver, so the one to publish for peers.
  std::string local_host() const;

  // The constructor arguments launch() was given for `actor` (published on
  // this connection), encoded; nullopt when it was given none.
  NetStatus constructor_args(std::string_view actor, Deadline deadline,
                             std::optional<std::vector<std::byte>>& out);

  // The NCCL unique ids of the graph's communicator groups, back to back
  // (none for host communicators). Asked after publishing: the ids let their
  // holder join the groups.
  NetStatus nccl_ids(Deadline deadline, std::vector<std::byte>& out);

  // Says that `actor` is constructed and running.
  NetStatus ready(std::string_view actor, Deadline deadline);
  // Tells the server why this client is about to go away (sent, not
  // answered): `failure.cause` actor, channel or host (none and unreachable
  // are the server's to say).
  void report_failure(const RemoteFailure& failure);
  // While the actors run: the lines the server sent since ("PROFILE"),
  // without waiting. closed: the server closed the connection (teardown);
  // timeout: its host answered nothing for the silence the driver set
  // (ETIMEDOUT); system_error: the connection failed otherwise.
  NetStatus poll_requests(std::vector<std::string>& requests);
  // Answers a PROFILE request: first at once with this host's
  // CLOCK_MONOTONIC (send_clock), then each actor's profile, `payload`
  // encoded as actor/profile_trace.hpp does (not answered).
  NetStatus send_clock(std::int64_t clock_ns, Deadline deadline);
  NetStatus send_profile(std::string_view actor, std::string_view payload, Deadline deadline);
  // What the server said after "OK " to HELLO.
  const std::string& greeting() const noexcept { return greeting_; }
  // The connection (to wait for the server to close it).
  int fd() const noexcept { return fd_.get(); }

  const std::string& error() const noexcept { return error_; }

private:
  NetStatus request(const std::string& line, Deadline deadline, std::string& reply);
  // After `reply` "<command> <n>": the n bytes that follow it (at most `most`).
  NetStatus receive_counted(std::string_view command, const std::string& reply, std::uint64_t most,
                            Deadline deadline, std::vector<std::byte>& out);
  NetStatus read_line(Deadline deadline, std::string& line);
  // Sends `text` as a tagged line (and a counted payload, tagged, after it).
  NetStatus send_tagged(std::string_view text, std::optional<std::string_view> payload,
                        Deadline deadline);
  // A line whose tag failed: the connection is closed, error() says so.
  NetStatus unauthentic(std::string_view what);

  detail::UniqueFd fd_;
  detail::rendezvous_wire::LineTagger to_server_;
  detail::rendezvous_wire::LineChecker from_server_;
  Endpoint server_;
  std::string graph_;
  std::string input_; // received bytes not yet consumed as lines
  std::string greeting_;
  std::map<std::string, Endpoint> table_;
  std::string error_;
};

namespace detail {
// Whether `name` can be a graph or actor name in the rendezvous protocol.
bool valid_rendezvous_name(std::string_view name) noexcept;
} // namespace detail

} // namespace cg
