// net/tcp_setup.hpp - setting up the TCP channels between actors on different hosts.
//
// The reading actor of a channel listens (one ephemeral port per actor, for all
// of its incoming channels) and publishes that port through the rendezvous
// (net/rendezvous.hpp); the writing actor looks it up and connects, retrying
// until the reader listens. The reader challenges each connection with a
// nonce; the writer's first frame is a handshake naming the graph, the channel
// and its direction (writer -> reader) and proving the launch's secret
// (net/secret.hpp); the reader answers with a verdict that proves the secret
// back. So a connection from a process outside the launch carries nothing
// into a channel, and one that reached the wrong actor, the wrong graph or the
// wrong channel is refused with the reason instead of carrying data into the
// wrong place.
//
//   cg::TcpChannelListener listener;
//   listener.listen(secret, {client.local_host(), 0});     // an ephemeral port
//   client.publish("b", {client.local_host(), listener.endpoint().port}, deadline);
//   client.wait_for_table(deadline);
//
//   const cg::TcpChannelSpec in[] = {{"pipeline", "c1", "a", "b"}};          // a -> b, read here
//   const cg::TcpOutgoing out[] = {{{"pipeline", "c2", "b", "c"}, *client.lookup("c")}};  // b -> c
//   cg::TcpChannels channels;
//   if (cg::set_up_channels(listener, in, out, secret, deadline, channels) != cg::NetStatus::ok)
//     fail(channels.error);
//   // channels.readers[0] reads c1, channels.writers[0] writes c2.
//
// Handshake (frames as in net/frame.hpp, sequence 0, not counted):
//   reader -> writer  kind challenge: payload "<reader nonce>" (on accepting)
//   writer -> reader  kind hello:     payload "<graph>\n<channel>\n<writer actor>\n<reader actor>
//                                              \n<returning channel, or nothing>
//                                              \n<writer nonce>\n<writer proof>"
//   reader -> writer  kind verdict:   payload "ok <reader proof>", or "rejected: <reason>" and the
//                                     reader closes ("rejected: authentication failed" is all a
//                                     writer without the secret learns).
// A proof is the HMAC, under the launch's secret, of "cg-channel/3 <role> <graph> <channel>
// <writer actor> <reader actor> back=<returning channel> <reader nonce> <writer nonce>" with
// role "writer" or "reader": good for one connection and its directions, so a recorded
// handshake replayed fails. Then data frames flow writer -> reader from sequence 0, and
// those of the returning channel, if any, reader -> writer from sequence 0, each
// tagged under a key of its direction (net/frame_auth.hpp) that both sides derive
// from the secret and the same fields with role "keys": a relay that passed the
// handshake through can neither rewrite, drop nor replay a frame unnoticed.
//
// The listener authenticates connections at once, each within 5 s, so
// connections that never speak delay nobody else: past 64 at once (32 from
// one address) the oldest that has been silent over a second is shed, never
// the newcomer; out of descriptors, it pauses accepting for 50 ms at a time
// (net/accept_guard.hpp). interrupt() ends a set-up another thread gave up on.
//
// Contract: every call is bounded by its deadline and returns a NetStatus with
// the reason in an error string. Two actors that each write to the other must
// accept and connect at the same time (each waits for the other's verdict):
// set_up_channels() does that; calling accept() then connect_channel() in both
// would wait until the deadline.
#pragma once

#include "net/accept_guard.hpp"
#include "net/net.hpp"
#include "net/secret.hpp"
#include "net/socket.hpp"
#include "net/tcp_channel.hpp"
#include <cg/detail/channel.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cg {

// One channel between two actors, as both ends name it.
struct TcpChannelSpec {
  std::string graph;
  std::string channel; // the channel's id within the graph
  std::string writer;  // the writing actor
  std::string reader;  // the reading actor
  // A channel the reader writes to the writer on the same connection, or
  // empty: both directions of one socket, so that each side's
  // acknowledgements ride on the other's data instead of costing a packet
  // each (tcp_pingpong: a round trip over one connection takes about a
  // third less than over two one-way ones).
  std::string returning;
  friend bool operator==(const TcpChannelSpec&, const TcpChannelSpec&) = default;
};

// "channel 'c1' (a -> b) of graph 'g'"
std::string to_string(const TcpChannelSpec& spec);

// The reading side: listens for the writers of this actor's incoming channels.
class TcpChannelListener {
public:
  // Binds and listens; port 0 = an ephemeral port (see endpoint()). Writers
  // must prove `secret`.
  NetStatus listen(const detail::Secret& secret, const Endpoint& where = {"0.0.0.0", 0});
  const Endpoint& endpoint() const noexcept { return bound_; }
  // The secret given to listen() (nullptr before).
  const detail::Secret* secret() const noexcept { return secret_ ? &*secret_ : nullptr; }

  // Accepts connections until every channel in `expected` has its writer;
  // readers[i] then reads expected[i]. A connection that does not prove the
  // secret, or whose handshake names no expected channel (another graph, an
  // unknown channel, the wrong direction, a channel already connected), is
  // answered "rejected: <reason>", closed and listed in rejections();
  // accepting goes on. timeout: error() names the
  // channels whose writers never came (and the first rejections, if any).
  // closed: interrupt() was called (before or during the call).
  // For an expected channel with a `returning` one, returned[i] (if given)
  // writes that one back on the same connection.
  NetStatus accept(std::span<const TcpChannelSpec> expected, std::vector<TcpReader>& readers,
                   Deadline deadline, std::uint64_t max_payload = tcp_default_max_payload,
                   std::vector<TcpWriter>* returned = nullptr);

  // Makes accept(), and the connections set_up_channels() makes with this
  // listener's secret, give up at once (from any thread; it lasts).
  void interrupt() noexcept;
  int interrupt_fd() const noexcept { return interrupt_.get(); }

  const std::string& error() const noexcept { return error_; }
  // The first connections turned away, one by one (at most 16 a second, 64 in all) ...
  const std::vector<std::string>& rejections() const noexcept { return rejections_.said(); }
  // ... and the rest, counted: "12345 more connections from 1 address in the
  // last 2.1 s (...)", or nullopt; the count then starts again.
  std::optional<std::string> rejection_summary() {
    return rejections_.summary(detail::GuardClock::now(), true);
  }

private:
  detail::UniqueFd fd_;
  detail::UniqueFd interrupt_; // an eventfd, readable once interrupt() was called
  std::optional<detail::Secret> secret_;
  Endpoint bound_;
  std::string error_;
  detail::RejectionLog rejections_{detail::RejectionLog::Limits{.said_per_interval = 16}};
  detail::AcceptBackoff backoff_;
};

// The writing side: connects to the reading actor's listener at `reader`
// (retrying until it listens or `deadline` passes), answers its challenge
// with the handshake and waits for the verdict; protocol_error if the reader
// cannot prove `secret`. rejected: `error` carries the reader's reason, e.g.
// "channel 'c9' (a -> b) of graph 'g' was rejected by 10.0.0.2:4100: no
// channel 'c9' of graph 'g' is read here".
// With a `returning` channel, `returned` (if given) then reads it off the
// same connection.
NetStatus connect_channel(const Endpoint& reader, const TcpChannelSpec& spec,
                          const detail::Secret& secret, Deadline deadline, TcpWriter& writer,
                          std::string& error, std::uint64_t max_payload = tcp_default_max_payload,
                          TcpReader* returned = nullptr);

// A channel this actor writes, and where its reader listens.
struct TcpOutgoing {
  TcpChannelSpec spec;
  Endpoint reader;
};

struct TcpChannels {
  std::vector<TcpReader> readers; // readers[i] reads incoming[i]
  std::vector<TcpWriter> writers; // writers[i] writes outgoing[i]
  // The channels that come back on those connections: returned_readers[i]
  // reads outgoing[i].spec.returning, returned_writers[i] writes
  // incoming[i].returning (where they have one).
  std::vector<TcpReader> returned_readers;
  std::vector<TcpWriter> returned_writers;
  std::string error; // why set_up_channels failed
};

// Accepts `incoming` on `listener` while connecting `outgoing` on a second
// thread (proving the listener's secret); ok once all are established. On failure the first error
// is kept (connections made so far are closed).
NetStatus set_up_channels(TcpChannelListener& listener, std::span<const TcpChannelSpec> incoming,
                          std::span<const TcpOutgoing> outgoing, Deadline deadline,
                          TcpChannels& out, std::uint64_t max_payload = tcp_default_max_payload);

} // namespace cg
