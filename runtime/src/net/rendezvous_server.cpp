// net/rendezvous_server.cpp - The rendezvous server: one poll() loop on a thread.
//
// The server is a single thread multiplexing every client with poll(), so a
// thousand actors cost a thousand descriptors, not a thousand threads, and the
// table needs a lock only against the driver's own calls (table(), missing(),
// wait_for_all()). An eventfd wakes the loop for stop() and for the driver's
// own entries (publish_local), which can complete the table a remote LOOKUP
// is already waiting on. Strangers cannot crowd honest clients out
// (net/accept_guard.hpp): the oldest silent connections are shed past a bound,
// the listener pauses when descriptors run out, and rejections are counted,
// a few said each second and the rest summed up.
//
// One file, a little over 700 lines: State and its loop are one piece (every
// member below runs on the serving thread, or takes State's mutex to reach
// what that thread shares), and handle() is the protocol's one dispatch.
#include "net/rendezvous.hpp"

#include "net/accept_guard.hpp"
#include "net/rendezvous_wire.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"
#include <cg/detail/profile.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace cg {

namespace {

using detail::Clock;
namespace wire = detail::rendezvous_wire;
using detail::deadline_after;
using detail::join;

// The largest profile one actor may send (a deep ring: 40 bytes an event).
constexpr std::uint64_t max_profile_bytes = std::uint64_t{1} << 30;
// How long a connection may take to authenticate before it is dropped.
constexpr std::chrono::seconds hello_limit{5};
// How many connections may be authenticating at once before the oldest are
// shed: far more than honest clients (one per actor process, each through its
// HELLO within a round trip), far fewer than descriptors.
constexpr detail::PendingLimits pending_limits{
    .total = 512, .per_address = 128, .hard_total = 2048, .grace = std::chrono::seconds(1)};

Deadline after(std::uint64_t milliseconds) {
  constexpr std::uint64_t longest = std::chrono::milliseconds::max().count();
  return deadline_after(std::chrono::milliseconds(std::min(milliseconds, longest)));
}

bool is_wildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host.empty();
}

} // namespace

struct RendezvousServer::State {
  struct Connection {
    detail::UniqueFd fd;
    Endpoint peer;
    std::string input;
    std::string output;
    bool greeted = false; // authenticated by its HELLO
    // Its lines' tags, each way, from its HELLO on (net/rendezvous_wire.hpp).
    wire::LineTagger to_client;
    wire::LineChecker from_client;
    Deadline accepted{};       // when it was accepted
    std::string nonce;         // the challenge sent to it
    Deadline hello_deadline{}; // dropped if not greeted by then
    bool closing = false;      // close once the output is flushed
    bool lookup = false;       // a LOOKUP waits for its answer
    Deadline lookup_deadline{};
    std::vector<std::string> published; // actors it published
    RemoteFailure failure;              // what its FAILED said, or that it went silent
    bool lost = false;                  // on_lost was called for it
    // Profiles (collect_profiles): when we asked (CLOCK_MONOTONIC ns), how
    // many of its actors' profiles are still owed, and the one arriving.
    std::int64_t profile_asked_ns = 0;
    std::size_t profiles_owed = 0;
    bool clock_known = false; // its CLOCK answered our last PROFILE
    std::int64_t clock_offset_ns = 0;
    std::int64_t clock_uncertainty_ns = 0;
    std::string receiving_actor;
    std::uint64_t receiving_left = 0;
    std::string receiving;
  };

  // Immutable while serving.
  std::string graph;
  std::set<std::string> expected;
  std::string greeting;
  std::function<void(const std::vector<std::string>&, const RemoteFailure&)> on_lost;
  std::function<void(const std::string&)> on_rejected;
  std::chrono::milliseconds silence{};
  std::map<std::string, std::vector<std::byte>> constructor_args;
  std::vector<std::byte> nccl_ids;
  std::optional<detail::Secret> secret;
  detail::UniqueFd listener;
  detail::UniqueFd wake; // eventfd: stop() or publish_local()
  Endpoint bound;

  mutable std::mutex mutex; // guards what follows
  std::condition_variable changed;
  std::map<std::string, Endpoint> table;
  std::set<std::string> ready;
  std::string error;
  std::string unauthentic; // the first line or payload whose tag failed, in words
  std::vector<std::string> rejections;
  bool stopped = false;
  bool profiles_wanted = false;     // collect_profiles() asks: the serving thread sends PROFILE
  std::size_t profiles_awaited = 0; // actors asked whose profiles have not arrived
  std::map<std::string, RemoteProfile> profiles;

  std::thread thread;
  std::vector<Connection> connections; // the serving thread's alone
  detail::AcceptBackoff backoff;       // the serving thread's alone
  detail::RejectionLog rejection_log;  // the serving thread's alone; said ones go to `rejections`

  std::vector<std::string> missing_locked() const {
    std::vector<std::string> out;
    for (const std::string& name : expected) {
      if (table.find(name) == table.end())
        out.push_back(name);
    }
    return out;
  }

  void serve();
  // PROFILE lines to every client that published, if collect_profiles() asks.
  void ask_for_profiles();
  // A profile arrived whole on `c`; or `c` ended owing some.
  void profile_received(Connection& c);
  void profiles_forfeited(Connection& c);
  void read_from(Connection& c);
  void handle(Connection& c, std::string_view line);
  void answer_lookups(bool stopping);
  // Drops a connection that did not authenticate, and says so.
  void reject(Connection& c, const std::string& why);
  // A line or payload of an authenticated client failed its tag: closed
  // unanswered, and said (wait_for_all, on_lost).
  void unauthentic_from(Connection& c, const std::string& what);
  // The published actors of a connection that ends before they said READY
  // leave the table, so their names can be published again.
  void forget_unready(const Connection& c);
  // Accepts what waits on the listener (a batch at most), shedding the
  // oldest silent connections past pending_limits.
  void accept_all();
  // The count of rejections not said one by one, once its interval is over
  // (at once when `final`), to on_rejected.
  void summarize_rejections(bool final);
  // Makes the serving thread go round its loop once more (safe from any thread).
  void wake_loop() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake.get(), &one, sizeof one);
  }
  static void flush(Connection& c);
};

RendezvousServer::RendezvousServer() : state_(std::make_unique<State>()) {}

RendezvousServer::~RendezvousServer() { stop(); }

NetStatus RendezvousServer::start(Options options) {
  State& s = *state_;
  const auto refuse = [&](NetStatus status, std::string why) {
    std::lock_guard lock(s.mutex);
    s.error = std::move(why);
    return status;
  };
  if (s.thread.joinable())
    return refuse(NetStatus::invalid_argument, "the rendezvous server is already running");
  if (!options.secret)
    return refuse(NetStatus::invalid_argument, "a rendezvous server needs the launch's secret");
  if (!detail::valid_rendezvous_name(options.graph)) {
    return refuse(NetStatus::invalid_argument,
                  "graph name '" + options.graph +
                      "' is not 1 to 128 printable characters without spaces");
  }
  std::set<std::string> expected;
  for (const std::string& actor : options.actors) {
    if (!detail::valid_rendezvous_name(actor)) {
      return refuse(NetStatus::invalid_argument,
                    "actor name '" + actor +
                        "' is not 1 to 128 printable characters without spaces");
    }
    if (!expected.insert(actor).second)
      return refuse(NetStatus::invalid_argument, "actor '" + actor + "' is listed twice");
  }
  std::string why;
  detail::UniqueFd listener;
  Endpoint bound;
  if (const NetStatus st = detail::listen_tcp(options.listen, listener, bound, why);
      st != NetStatus::ok) {
    return refuse(st, "rendezvous: " + why);
  }
  detail::UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake)
    return refuse(NetStatus::system_error,
                  "rendezvous: eventfd failed: " + detail::errno_text(errno));

  s.graph = std::move(options.graph);
  s.expected = std::move(expected);
  s.greeting = std::move(options.greeting);
  s.on_lost = std::move(options.on_lost);
  s.on_rejected = std::move(options.on_rejected);
  s.silence = options.silence;
  s.constructor_args = std::move(options.constructor_args);
  s.nccl_ids = std::move(options.nccl_ids);
  s.secret = std::move(options.secret);
  s.listener = std::move(listener);
  s.wake = std::move(wake);
  s.bound = bound;
  s.stopped = false;
  s.thread = std::thread([&s] { s.serve(); });
  return NetStatus::ok;
}

Endpoint RendezvousServer::endpoint() const { return state_->bound; }

Endpoint RendezvousServer::address_for_actors() const {
  Endpoint where = state_->bound;
  if (is_wildcard(where.host)) {
    char name[256] = {};
    where.host = ::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0' ? name : "localhost";
  }
  return where;
}

NetStatus RendezvousServer::wait_for_all(Deadline deadline) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  const auto complete = [&] { return s.missing_locked().empty(); };
  const auto settled = [&] { return complete() || s.stopped || !s.unauthentic.empty(); };
  if (deadline == Deadline::max()) {
    s.changed.wait(lock, settled);
  } else {
    s.changed.wait_until(lock, deadline, settled);
  }
  if (!s.unauthentic.empty()) {
    s.error = "rendezvous for graph '" + s.graph + "': " + s.unauthentic;
    return NetStatus::protocol_error;
  }
  if (complete())
    return NetStatus::ok;
  s.error = wire::missing_message(s.graph, s.missing_locked());
  return NetStatus::timeout;
}

void RendezvousServer::publish_local(const std::string& name, const Endpoint& where) {
  {
    std::lock_guard lock(state_->mutex);
    state_->table[name] = where;
  }
  state_->changed.notify_all();
  state_->wake_loop();
}

std::size_t RendezvousServer::ready_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->ready.size();
}

std::map<std::string, Endpoint> RendezvousServer::table() const {
  std::lock_guard lock(state_->mutex);
  return state_->table;
}

std::vector<std::string> RendezvousServer::missing() const {
  std::lock_guard lock(state_->mutex);
  return state_->missing_locked();
}

std::string RendezvousServer::error() const {
  std::lock_guard lock(state_->mutex);
  return state_->error;
}

std::vector<std::string> RendezvousServer::rejections() const {
  std::lock_guard lock(state_->mutex);
  return state_->rejections;
}

void RendezvousServer::State::reject(Connection& c, const std::string& why) {
  c.closing = true;
  std::string what = "connection from " + to_string(c.peer) + ": " + why;
  if (!rejection_log.add(c.peer.host, why, what, Clock::now()))
    return; // counted, said in the next summary
  {
    std::lock_guard lock(mutex);
    rejections = rejection_log.said();
  }
  if (on_rejected)
    on_rejected(what);
}

void RendezvousServer::State::unauthentic_from(Connection& c, const std::string& what) {
  const std::string said =
      what + " from " + to_string(c.peer) +
      (c.published.empty() ? "" : " (actors " + join(c.published, ", ") + ")") +
      " failed its authentication tag (rewritten, dropped, replayed or reordered on the way): "
      "the connection is closed";
  c.closing = true;
  c.output.clear();
  c.lookup = false;
  c.receiving_left = 0;
  c.failure = {RemoteFailure::Cause::host, "", "rendezvous: " + said};
  {
    std::lock_guard lock(mutex);
    if (unauthentic.empty())
      unauthentic = said;
  }
  changed.notify_all();
}

void RendezvousServer::State::summarize_rejections(bool final) {
  if (const std::optional<std::string> summary = rejection_log.summary(Clock::now(), final);
      summary && on_rejected) {
    on_rejected(*summary);
  }
}

void RendezvousServer::State::accept_all() {
  // A bounded batch a round: a stranger connecting as fast as we accept must
  // not keep the loop from closing what it already accepted.
  constexpr int batch = 64;
  int fd = -1;
  for (int taken = 0; taken < batch && (fd = backoff.accept(listener.get())) >= 0; ++taken) {
    Connection c;
    c.fd.reset(fd);
    c.peer = detail::peer_endpoint(fd);
    c.accepted = Clock::now();
    std::vector<detail::PendingConnection> pending;
    std::vector<std::size_t> index; // pending[i] is connections[index[i]], oldest first
    for (std::size_t i = 0; i < connections.size(); ++i) {
      if (!connections[i].greeted && !connections[i].closing) {
        pending.push_back({connections[i].peer.host, connections[i].accepted});
        index.push_back(i);
      }
    }
    if (const std::optional<std::size_t> shed =
            detail::connection_to_shed(pending, c.peer.host, pending_limits, c.accepted)) {
      Connection& oldest = connections[index[*shed]];
      const auto silent_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(c.accepted - oldest.accepted);
      reject(oldest, "shed unauthenticated after " + std::to_string(silent_ms.count()) +
                         " ms: too many connections are authenticating");
      oldest.output.clear();
    }
    detail::set_liveness_timeout(fd, silence);
    c.nonce = detail::fresh_nonce();
    c.hello_deadline = c.accepted + hello_limit;
    c.output = "CHALLENGE " + c.nonce + "\n";
    connections.push_back(std::move(c));
  }
}

void RendezvousServer::State::forget_unready(const Connection& c) {
  {
    std::lock_guard lock(mutex);
    for (const std::string& actor : c.published) {
      if (ready.find(actor) == ready.end())
        table.erase(actor);
    }
  }
  changed.notify_all();
}

void RendezvousServer::stop() {
  State& s = *state_;
  if (!s.thread.joinable())
    return;
  {
    std::lock_guard lock(s.mutex);
    s.stopped = true;
  }
  s.changed.notify_all();
  s.wake_loop();
  s.thread.join();
  s.connections.clear();
  s.listener.reset();
}

std::map<std::string, RemoteProfile> RendezvousServer::collect_profiles(Deadline deadline) const {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (!s.thread.joinable() || s.stopped)
    return {};
  s.profiles.clear();
  s.profiles_wanted = true;
  lock.unlock();
  s.wake_loop();
  lock.lock();
  s.changed.wait_until(
      lock, deadline, [&] { return s.stopped || (!s.profiles_wanted && s.profiles_awaited == 0); });
  return s.profiles;
}

void RendezvousServer::State::ask_for_profiles() {
  {
    std::lock_guard lock(mutex);
    if (!profiles_wanted)
      return;
    profiles_wanted = false;
    for (Connection& c : connections) {
      if (!c.greeted || c.closing || c.published.empty())
        continue;
      c.output += c.to_client.line("PROFILE");
      c.profile_asked_ns = detail::monotonic_ns();
      c.clock_known = false;
      profiles_awaited += c.published.size() - c.profiles_owed;
      c.profiles_owed = c.published.size();
    }
  }
  changed.notify_all();
}

void RendezvousServer::State::profile_received(Connection& c) {
  {
    std::lock_guard lock(mutex);
    profiles[c.receiving_actor] = {std::move(c.receiving), c.clock_offset_ns,
                                   c.clock_uncertainty_ns};
    if (c.profiles_owed > 0) {
      --c.profiles_owed;
      --profiles_awaited;
    }
  }
  c.receiving.clear();
  c.receiving_actor.clear();
  changed.notify_all();
}

void RendezvousServer::State::profiles_forfeited(Connection& c) {
  if (c.profiles_owed == 0)
    return;
  {
    std::lock_guard lock(mutex);
    profiles_awaited -= c.profiles_owed;
    c.profiles_owed = 0;
  }
  changed.notify_all();
}

void RendezvousServer::State::flush(Connection& c) {
  while (!c.output.empty()) {
    const ssize_t n =
        ::send(c.fd.get(), c.output.data(), c.output.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.output.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;         // the rest when POLLOUT says so
    c.output.clear(); // the client is gone
    c.closing = true;
    return;
  }
}

void RendezvousServer::State::handle(Connection& c, std::string_view line) {
  const std::vector<std::string_view> f = wire::fields(line);
  // Tagged once the client proved the secret; before, nothing is.
  const auto reply = [&](std::string text) {
    c.output += c.greeted ? c.to_client.line(text) : text + "\n";
  };
  if (!c.greeted) {
    // Nothing but "authentication failed" or a protocol mismatch is told to
    // a peer that has not proved the secret: not even which graph is served.
    if (f.size() != 5 || f[0] != "HELLO") {
      reply("ERROR authentication failed");
      reject(c, "authentication failed (not a HELLO)");
    } else if (f[1] != wire::protocol) {
      reply("ERROR protocol '" + std::string(f[1]) + "' is not " + std::string(wire::protocol));
      reject(c, "protocol '" + std::string(f[1]) + "' is not " + std::string(wire::protocol));
    } else if (!secret->verify(wire::proof_message("client", f[2], c.nonce, f[3]), f[4])) {
      reply("ERROR authentication failed");
      reject(c, "authentication failed (wrong secret, or a HELLO answering another challenge)");
    } else if (f[2] != graph) {
      reply("ERROR this rendezvous serves graph '" + graph + "', not '" + std::string(f[2]) + "'");
      c.closing = true;
    } else if (f[3].size() != 32) {
      reply("ERROR the client nonce must be 32 hexadecimal digits");
      c.closing = true;
    } else {
      c.greeted = true;
      const wire::LineKeys keys = wire::line_keys(*secret, graph, c.nonce, f[3]);
      c.to_client = wire::LineTagger(keys.to_client);
      c.from_client = wire::LineChecker(keys.to_server);
      const std::string proof = secret->prove(wire::proof_message("server", graph, c.nonce, f[3]));
      reply(greeting.empty() ? "OK " + proof : "OK " + proof + " " + greeting);
    }
    return;
  }
  if (f[0] == "PUBLISH" && f.size() == 3) {
    const std::string actor(f[1]);
    const std::optional<Endpoint> where = parse_endpoint(f[2]);
    if (expected.find(actor) == expected.end()) {
      reply("ERROR graph '" + graph + "' has no actor '" + actor + "' (expected: " +
            join(std::vector<std::string>(expected.begin(), expected.end()), ", ") + ")");
      return;
    }
    if (!where || where->port == 0 || is_wildcard(where->host)) {
      reply("ERROR '" + std::string(f[2]) + "' is not an endpoint peers can connect to");
      return;
    }
    {
      std::lock_guard lock(mutex);
      const auto [it, inserted] = table.emplace(actor, *where);
      if (!inserted && it->second != *where) {
        reply("ERROR actor '" + actor + "' already published " + to_string(it->second));
        return;
      }
    }
    if (std::find(c.published.begin(), c.published.end(), actor) == c.published.end())
      c.published.push_back(actor);
    changed.notify_all();
    reply("OK");
    return;
  }
  if (f[0] == "READY" && f.size() == 2) {
    const std::string actor(f[1]);
    if (std::find(c.published.begin(), c.published.end(), actor) == c.published.end()) {
      reply("ERROR actor '" + actor + "' was not published on this connection");
      return;
    }
    {
      std::lock_guard lock(mutex);
      ready.insert(actor);
    }
    changed.notify_all();
    reply("OK");
    return;
  }
  if (f[0] == "ARGS" && f.size() == 2) {
    const std::string actor(f[1]);
    if (std::find(c.published.begin(), c.published.end(), actor) == c.published.end()) {
      reply("ERROR actor '" + actor + "' was not published on this connection");
      return;
    }
    const auto args = constructor_args.find(actor);
    if (args == constructor_args.end()) {
      reply("NONE");
      return;
    }
    reply("ARGS " + std::to_string(args->second.size()));
    c.output += c.to_client.payload(
        {reinterpret_cast<const char*>(args->second.data()), args->second.size()});
    return;
  }
  if (f[0] == "NCCL" && f.size() == 1) {
    // Whoever holds an id can join its NCCL group: only for actors of the graph.
    if (c.published.empty()) {
      reply("ERROR no actor was published on this connection");
      return;
    }
    reply("NCCL " + std::to_string(nccl_ids.size()));
    c.output +=
        c.to_client.payload({reinterpret_cast<const char*>(nccl_ids.data()), nccl_ids.size()});
    return;
  }
  if (f[0] == "FAILED" && f.size() >= 3) {
    // FAILED <cause> <actor> <reason ...>: the reason is the rest of the line.
    std::size_t at = line.find(' ', line.find(' ', 7) + 1);
    c.failure.reason = at == std::string_view::npos ? "" : std::string(line.substr(at + 1));
    c.failure.actor.clear();
    const bool own_actor =
        std::find(c.published.begin(), c.published.end(), f[2]) != c.published.end();
    if (f[1] == "actor" && own_actor) {
      c.failure.cause = RemoteFailure::Cause::actor;
      c.failure.actor = f[2];
    } else if (f[1] == "channel") {
      c.failure.cause = RemoteFailure::Cause::channel;
    } else { // "host", or an actor it did not publish: its words, as a host's
      c.failure.cause = RemoteFailure::Cause::host;
    }
    reply("OK");
    return;
  }
  if (f[0] == "CLOCK" && f.size() == 2) {
    const std::int64_t now = detail::monotonic_ns();
    const std::optional<std::uint64_t> clock = wire::number(f[1]);
    if (!clock || *clock > INT64_MAX || c.profile_asked_ns == 0) {
      reply("ERROR CLOCK answers a PROFILE request with nanoseconds");
      c.closing = true;
      return;
    }
    // Its clock was read between our request and now: at the middle, as far
    // as a round trip can tell, and to within half of it.
    c.clock_offset_ns = static_cast<std::int64_t>(*clock) - (c.profile_asked_ns + now) / 2;
    c.clock_uncertainty_ns = (now - c.profile_asked_ns + 1) / 2;
    c.clock_known = true;
    return; // not answered
  }
  if (f[0] == "PROFILE" && f.size() == 3) {
    const std::optional<std::uint64_t> bytes = wire::number(f[2]);
    if (std::find(c.published.begin(), c.published.end(), f[1]) == c.published.end() ||
        !c.clock_known || !bytes || *bytes > max_profile_bytes) {
      reply("ERROR PROFILE follows a CLOCK and wants an actor published here and a size of at "
            "most " +
            std::to_string(max_profile_bytes) + " bytes");
      c.closing = true;
      return;
    }
    c.receiving_actor = std::string(f[1]);
    c.receiving_left = *bytes + detail::frame_tag_bytes;
    c.receiving.reserve(c.receiving_left);
    return; // not answered: the bytes and their tag follow
  }
  if (f[0] == "LOOKUP" && f.size() == 2) {
    const std::optional<std::uint64_t> wait = wire::number(f[1]);
    if (!wait) {
      reply("ERROR LOOKUP wants a wait in milliseconds, got '" + std::string(f[1]) + "'");
      return;
    }
    c.lookup = true;
    c.lookup_deadline = after(*wait);
    return; // answered by answer_lookups()
  }
  reply("ERROR unknown request '" + std::string(line) + "'");
}

void RendezvousServer::State::read_from(Connection& c) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::recv(c.fd.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      c.input.append(chunk, static_cast<std::size_t>(n));
      while (!c.closing) {
        if (c.receiving_left > 0) { // a PROFILE's bytes
          const std::size_t take =
              static_cast<std::size_t>(std::min<std::uint64_t>(c.receiving_left, c.input.size()));
          c.receiving.append(c.input, 0, take);
          c.input.erase(0, take);
          c.receiving_left -= take;
          if (c.receiving_left > 0)
            break;
          const std::size_t size = c.receiving.size() - detail::frame_tag_bytes;
          if (!c.from_client.payload(std::string_view(c.receiving).substr(0, size),
                                     std::string_view(c.receiving).substr(size))) {
            unauthentic_from(c, "the profile of actor '" + c.receiving_actor + "'");
            break;
          }
          c.receiving.resize(size);
          profile_received(c);
          continue;
        }
        const std::size_t newline = c.input.find('\n');
        if (newline == std::string::npos)
          break;
        std::string line = c.input.substr(0, newline);
        c.input.erase(0, newline + 1);
        if (c.greeted) {
          std::optional<std::string> text = c.from_client.line(line);
          if (!text) {
            unauthentic_from(c, "a line");
            break;
          }
          line = std::move(*text);
        }
        handle(c, line);
      }
      if (!c.closing && c.receiving_left == 0 &&
          c.input.size() > wire::max_line + (c.greeted ? wire::line_tag_chars : 0)) {
        if (c.greeted) {
          c.output += c.to_client.line("ERROR line longer than " + std::to_string(wire::max_line) +
                                       " bytes");
          c.closing = true;
        } else {
          c.output += "ERROR authentication failed\n";
          reject(c, "authentication failed (a line longer than " + std::to_string(wire::max_line) +
                        " bytes)");
        }
      }
      if (c.closing)
        return;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    const int error = errno;
    if (!c.greeted && !c.closing)
      reject(c, n == 0 ? "closed before it authenticated"
                       : "failed before it authenticated: " + detail::errno_text(error));
    if (n < 0 && error == ETIMEDOUT && c.failure.cause == RemoteFailure::Cause::none) {
      c.failure = {RemoteFailure::Cause::unreachable, "",
                   "its host answered nothing for " + std::to_string(silence.count()) +
                       " ms (a network partition, or the host is down)"};
    }
    c.closing = true; // end of stream or a failed connection
    c.output.clear();
    c.lookup = false;
    return;
  }
}

void RendezvousServer::State::answer_lookups(bool stopping) {
  std::vector<std::string> missing;
  std::map<std::string, Endpoint> snapshot;
  {
    std::lock_guard lock(mutex);
    missing = missing_locked();
    if (missing.empty())
      snapshot = table;
  }
  const auto now = Clock::now();
  for (Connection& c : connections) {
    if (!c.lookup)
      continue;
    if (missing.empty()) {
      c.output += c.to_client.line("TABLE " + std::to_string(snapshot.size()));
      for (const auto& [name, where] : snapshot)
        c.output += c.to_client.line(name + " " + to_string(where));
    } else if (stopping || now >= c.lookup_deadline) {
      c.output +=
          c.to_client.line("MISSING " + std::to_string(missing.size()) + " " + join(missing, " "));
    } else {
      continue;
    }
    c.lookup = false;
  }
}

void RendezvousServer::State::serve() {
  std::vector<pollfd> polled;
  for (;;) {
    const auto now = Clock::now();
    for (Connection& c : connections) {
      if (!c.greeted && !c.closing && now >= c.hello_deadline) {
        reject(c, "did not authenticate within " + std::to_string(hello_limit.count()) + " s");
        c.output.clear();
      }
    }
    answer_lookups(false);
    ask_for_profiles();
    for (Connection& c : connections) {
      const bool was_closing = c.closing;
      flush(c);
      // A stranger gone before its challenge could be sent is turned away too.
      if (c.closing && !was_closing && !c.greeted)
        reject(c, "went away before it authenticated");
    }
    // A client that published is gone (end of stream, a failed read or write):
    // its actors are lost.
    for (Connection& c : connections) {
      if (c.closing)
        profiles_forfeited(c);
      if (c.closing && c.output.empty() && !c.published.empty() && !c.lost) {
        c.lost = true;
        forget_unready(c);
        if (on_lost)
          on_lost(c.published, c.failure);
      }
    }
    std::erase_if(connections, [](const Connection& c) { return c.closing && c.output.empty(); });

    summarize_rejections(false);

    // Out of descriptors, the listener is left alone for a moment: its
    // connection waits in the backlog, and polling would only spin.
    const bool listening = !backoff.paused(Clock::now());
    polled.clear();
    polled.push_back({wake.get(), POLLIN, 0});
    polled.push_back({listening ? listener.get() : -1, POLLIN, 0});
    Deadline next =
        std::min(rejection_log.next_summary(), listening ? Deadline::max() : backoff.resume_at());
    for (const Connection& c : connections) {
      const short events =
          static_cast<short>((c.closing ? 0 : POLLIN) | (c.output.empty() ? 0 : POLLOUT));
      polled.push_back({c.fd.get(), events, 0});
      if (c.lookup)
        next = std::min(next, c.lookup_deadline);
      if (!c.greeted && !c.closing)
        next = std::min(next, c.hello_deadline);
    }
    const int timeout = detail::milliseconds_until(next);
    const int ready = ::poll(polled.data(), polled.size(), next == Deadline::max() ? -1 : timeout);
    if (ready < 0 && errno != EINTR) {
      std::lock_guard lock(mutex);
      error = "rendezvous: poll failed: " + detail::errno_text(errno);
      break;
    }
    if (polled[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake.get(), &count, sizeof count);
      std::lock_guard lock(mutex);
      if (stopped)
        break;
    }
    if (polled[1].revents & POLLIN)
      accept_all();
    // polled[2 + i] is connections[i] (accepted ones were appended after).
    for (std::size_t i = 0; i + 2 < polled.size(); ++i) {
      const short revents = polled[i + 2].revents;
      Connection& c = connections[i];
      if (revents & (POLLIN | POLLHUP | POLLERR))
        read_from(c);
    }
  }
  answer_lookups(true);
  for (Connection& c : connections)
    flush(c);
  connections.clear();
  summarize_rejections(true);
}

} // namespace cg
