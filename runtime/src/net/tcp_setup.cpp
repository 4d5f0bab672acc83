// tcp_setup.cpp - listening, connecting and the handshake that opens a TCP channel.
//
// The handshake reuses the channel's frame format (magic, version, checksum),
// so a stray connection from anything that is not a cg writer fails the same
// checks a corrupted data frame would, and nothing else has to be parsed.
// The listener authenticates each connection on a thread of its own (each
// bounded by handshake_limit; past pending_limits the oldest silent one is
// shed, net/accept_guard.hpp), so connections that never speak cannot stall
// the writers that do; the channels are matched on the accepting thread
// alone, as the handshakes complete.
#include "net/tcp_setup.hpp"

#include "net/frame.hpp"
#include "net/rendezvous.hpp"
#include "support/deadline.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <list>
#include <mutex>
#include <thread>

namespace cg {

namespace {

using detail::Clock; // support/deadline.hpp
using detail::FrameKind;

constexpr std::size_t max_handshake = 4096;
constexpr std::chrono::seconds handshake_limit{5};
// Threads authenticating at once: honest writers finish within a round trip.
constexpr detail::PendingLimits pending_limits{
    .total = 64, .per_address = 32, .hard_total = 256, .grace = std::chrono::seconds(1)};
constexpr std::string_view accepted = "ok ";
constexpr std::string_view refused = "rejected: ";
constexpr std::string_view unauthenticated = "authentication failed";

const char* kind_name(FrameKind kind) {
  switch (kind) {
  case FrameKind::hello:
    return "hello";
  case FrameKind::verdict:
    return "verdict";
  case FrameKind::challenge:
    return "challenge";
  default:
    return "frame";
  }
}

NetStatus send_setup_frame(int fd, FrameKind kind, std::string_view payload, Deadline deadline,
                           std::string& error) {
  detail::FrameHeader header;
  header.kind = static_cast<std::uint16_t>(kind);
  header.length = payload.size();
  const std::string frame =
      detail::encoded_frame(header, std::as_bytes(std::span(payload.data(), payload.size())));
  return detail::send_all(fd, frame.data(), frame.size(), deadline, error);
}

NetStatus receive_setup_frame(int fd, FrameKind kind, Deadline deadline, std::string& payload,
                              std::string& error) {
  std::byte head[detail::frame_header_bytes];
  if (const NetStatus s = detail::receive_exact(fd, head, sizeof head, deadline, error);
      s != NetStatus::ok)
    return s;
  const detail::FrameHeader header = detail::decode_frame_header(head);
  const auto bad = [&](std::string why) {
    error = "not a channel " + std::string(kind_name(kind)) + ": " + why;
    return NetStatus::protocol_error;
  };
  if (header.magic != detail::frame_magic)
    return bad("bad magic");
  if (header.version != detail::frame_version) {
    return bad("protocol version " + std::to_string(header.version) + ", expected " +
               std::to_string(detail::frame_version));
  }
  if (header.header_checksum != detail::header_checksum_of(head))
    return bad("header checksum mismatch");
  if (header.kind != static_cast<std::uint16_t>(kind) || header.sequence != 0) {
    return bad("unexpected frame kind " + std::to_string(header.kind));
  }
  if (header.length > max_handshake)
    return bad(std::to_string(header.length) + " bytes");
  payload.assign(header.length, '\0');
  if (const NetStatus s =
          detail::receive_exact(fd, payload.data(), payload.size(), deadline, error);
      s != NetStatus::ok) {
    return s;
  }
  std::byte trailer[detail::frame_trailer_bytes];
  if (const NetStatus s = detail::receive_exact(fd, trailer, sizeof trailer, deadline, error);
      s != NetStatus::ok)
    return s;
  if (detail::frame_checksum(header, std::as_bytes(std::span(payload.data(), payload.size()))) !=
      detail::decode_frame_trailer(trailer)) {
    return bad("checksum mismatch");
  }
  return NetStatus::ok;
}

// What a side of the handshake proves (see net/tcp_setup.hpp).
std::string proof_message(std::string_view role, const TcpChannelSpec& spec,
                          std::string_view reader_nonce, std::string_view writer_nonce) {
  return "cg-channel/3 " + std::string(role) + " " + spec.graph + " " + spec.channel + " " +
         spec.writer + " " + spec.reader + " back=" + spec.returning + " " +
         std::string(reader_nonce) + " " + std::string(writer_nonce);
}

// The keys that authenticate the connection's frames (net/frame_auth.hpp):
// from the secret and the handshake that opened it, both nonces included.
detail::ConnectionKeys keys_of(const detail::Secret& secret, const TcpChannelSpec& spec,
                               std::string_view reader_nonce, std::string_view writer_nonce) {
  return detail::connection_keys(secret, proof_message("keys", spec, reader_nonce, writer_nonce));
}

struct Hello {
  TcpChannelSpec spec;
  std::string nonce; // the writer's
  std::string proof;
};

std::string hello_payload(const Hello& hello) {
  const TcpChannelSpec& spec = hello.spec;
  return spec.graph + "\n" + spec.channel + "\n" + spec.writer + "\n" + spec.reader + "\n" +
         spec.returning + "\n" + hello.nonce + "\n" + hello.proof;
}

std::optional<Hello> parse_hello(std::string_view payload) {
  constexpr int count = 7;
  constexpr int returning = 4; // the one field that may be empty
  std::string fields[count];
  for (int i = 0; i < count; ++i) {
    const std::size_t newline = payload.find('\n');
    if ((newline == std::string_view::npos) != (i == count - 1))
      return std::nullopt;
    fields[i] = std::string(payload.substr(0, newline));
    if (!detail::valid_rendezvous_name(fields[i]) && !(i == returning && fields[i].empty()))
      return std::nullopt;
    payload.remove_prefix(newline == std::string_view::npos ? payload.size() : newline + 1);
  }
  return Hello{{fields[0], fields[1], fields[2], fields[3], fields[4]}, fields[5], fields[6]};
}

bool valid_spec(const TcpChannelSpec& spec, std::string& error) {
  if (!spec.returning.empty() && !detail::valid_rendezvous_name(spec.returning)) {
    error = to_string(spec) + ": name '" + spec.returning +
            "' is not 1 to 128 printable characters without spaces";
    return false;
  }
  for (const std::string* name : {&spec.graph, &spec.channel, &spec.writer, &spec.reader}) {
    if (!detail::valid_rendezvous_name(*name)) {
      error = to_string(spec) + ": name '" + *name +
              "' is not 1 to 128 printable characters without spaces";
      return false;
    }
  }
  return true;
}

// Why `got` is not one of `expected` still waiting (done[i]: connected), or "" with `match` set.
std::string judge(const TcpChannelSpec& got, std::span<const TcpChannelSpec> expected,
                  const std::vector<bool>& done, std::size_t& match) {
  const bool graph_known =
      std::any_of(expected.begin(), expected.end(), [&](auto& e) { return e.graph == got.graph; });
  if (!graph_known) {
    return "wrong graph '" + got.graph + "' (channels read here belong to graph '" +
           expected.front().graph + "')";
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const TcpChannelSpec& e = expected[i];
    if (e.graph != got.graph || e.channel != got.channel)
      continue;
    if (e.writer != got.writer || e.reader != got.reader) {
      return "channel '" + e.channel + "' of graph '" + e.graph + "' runs " + e.writer + " -> " +
             e.reader + ", not " + got.writer + " -> " + got.reader;
    }
    if (e.returning != got.returning) {
      auto carried = [](const std::string& c) {
        return c.empty() ? std::string("nothing") : "channel '" + c + "'";
      };
      return "channel '" + e.channel + "' of graph '" + e.graph + "' carries " +
             carried(e.returning) + " back here, not " + carried(got.returning);
    }
    if (done[i])
      return "channel '" + e.channel + "' of graph '" + e.graph + "' is already connected";
    match = i;
    return {};
  }
  return "no channel '" + got.channel + "' of graph '" + got.graph + "' is read here";
}

} // namespace

std::string to_string(const TcpChannelSpec& spec) {
  return "channel '" + spec.channel + "' (" + spec.writer + " -> " + spec.reader + ") of graph '" +
         spec.graph + "'";
}

NetStatus TcpChannelListener::listen(const detail::Secret& secret, const Endpoint& where) {
  error_.clear();
  secret_ = secret;
  if (!interrupt_)
    interrupt_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!interrupt_) {
    error_ = "eventfd failed: " + detail::errno_text(errno);
    return NetStatus::system_error;
  }
  return detail::listen_tcp(where, fd_, bound_, error_);
}

void TcpChannelListener::interrupt() noexcept {
  if (!interrupt_)
    return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(interrupt_.get(), &one, sizeof one);
}

namespace {

// One accepted connection being authenticated on a thread of its own.
struct Handshake {
  detail::UniqueFd fd;
  std::string peer;
  std::string address; // the peer's host
  std::string nonce;   // the reader's challenge
  std::optional<Hello> hello;
  std::string error; // why it failed, if it did
  Deadline deadline;
  detail::GuardClock::time_point since; // accepted
  std::thread thread;
  bool finished = false; // guarded by the accepting loop's mutex
  bool shed = false;     // cut short to make room (guarded by it too)
};

// Challenges the writer and checks its hello; leaves the result in `h`.
void authenticate(Handshake& h, const detail::Secret& secret) {
  std::string why;
  std::string payload;
  if (send_setup_frame(h.fd.get(), FrameKind::challenge, h.nonce, h.deadline, why) !=
          NetStatus::ok ||
      receive_setup_frame(h.fd.get(), FrameKind::hello, h.deadline, payload, why) !=
          NetStatus::ok) {
    h.error = why;
    return;
  }
  std::optional<Hello> hello = parse_hello(payload);
  if (!hello ||
      !secret.verify(proof_message("writer", hello->spec, h.nonce, hello->nonce), hello->proof)) {
    std::string ignored;
    send_setup_frame(h.fd.get(), FrameKind::verdict,
                     std::string(refused) + std::string(unauthenticated), h.deadline, ignored);
    h.error = hello ? std::string(unauthenticated) + " (wrong secret, or a replayed handshake)"
                    : std::string(unauthenticated) + " (malformed handshake)";
    return;
  }
  h.hello = std::move(hello);
}

} // namespace

NetStatus TcpChannelListener::accept(std::span<const TcpChannelSpec> expected,
                                     std::vector<TcpReader>& readers, Deadline deadline,
                                     std::uint64_t max_payload, std::vector<TcpWriter>* returned) {
  error_.clear();
  readers.clear();
  readers.resize(expected.size());
  if (returned != nullptr) {
    returned->clear();
    returned->resize(expected.size());
  }
  if (expected.empty())
    return NetStatus::ok;
  for (const TcpChannelSpec& spec : expected) {
    if (!valid_spec(spec, error_))
      return NetStatus::invalid_argument;
  }
  if (!fd_ || !secret_) {
    error_ = "accept() before a successful listen()";
    return NetStatus::invalid_argument;
  }
  const detail::UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) {
    error_ = "eventfd failed: " + detail::errno_text(errno);
    return NetStatus::system_error;
  }
  std::mutex mutex;             // guards Handshake::finished
  std::list<Handshake> pending; // stable addresses for their threads
  // However this returns, handshakes still running are cut short (and
  // listed in rejections()) and joined.
  struct Joiner {
    std::list<Handshake>& pending;
    std::mutex& mutex;
    detail::RejectionLog& rejections;
    ~Joiner() {
      for (Handshake& h : pending) {
        {
          std::lock_guard lock(mutex);
          if (!h.finished)
            ::shutdown(h.fd.get(), SHUT_RDWR);
        }
        h.thread.join();
        const std::string why =
            h.shed ? "shed unauthenticated: too many connections are authenticating"
                   : "dropped unauthenticated when the set-up ended";
        rejections.add(h.address, why, "connection from " + h.peer + ": " + why,
                       detail::GuardClock::now());
      }
    }
  } joiner{pending, mutex, rejections_};
  const auto reject = [&](const Handshake& h, std::string_view reason, std::string what) {
    rejections_.add(h.address, reason, std::move(what), detail::GuardClock::now());
  };

  std::vector<bool> done(expected.size(), false);
  std::size_t remaining = expected.size();
  const auto judge_finished = [&] {
    for (auto it = pending.begin(); it != pending.end();) {
      {
        std::lock_guard lock(mutex);
        if (!it->finished) {
          ++it;
          continue;
        }
      }
      it->thread.join();
      Handshake& h = *it;
      std::size_t match = expected.size();
      const std::string reason =
          h.hello ? judge(h.hello->spec, expected, done, match) : std::string();
      std::string why;
      if (h.shed) {
        const auto silent_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
            detail::GuardClock::now() - h.since);
        const std::string shed = "shed unauthenticated after " + std::to_string(silent_ms.count()) +
                                 " ms: too many connections are authenticating";
        reject(h, "shed unauthenticated: too many connections are authenticating",
               "connection from " + h.peer + ": " + shed);
      } else if (!h.hello) {
        reject(h, h.error, "connection from " + h.peer + ": " + h.error);
      } else if (!reason.empty()) {
        send_setup_frame(h.fd.get(), FrameKind::verdict, std::string(refused) + reason, h.deadline,
                         why);
        reject(h, reason,
               "connection from " + h.peer + " for " + to_string(h.hello->spec) +
                   " rejected: " + reason);
      } else if (const std::string proof = secret_->prove(
                     proof_message("reader", h.hello->spec, h.nonce, h.hello->nonce));
                 send_setup_frame(h.fd.get(), FrameKind::verdict, std::string(accepted) + proof,
                                  h.deadline, why) != NetStatus::ok) {
        reject(h, "dropped before the verdict",
               "connection from " + h.peer + " for " + to_string(h.hello->spec) +
                   " dropped before the verdict: " + why);
      } else {
        // (Should the descriptor not duplicate, the returning writer has no
        // connection and says so at its first send.)
        const detail::ConnectionKeys keys =
            keys_of(*secret_, h.hello->spec, h.nonce, h.hello->nonce);
        if (returned != nullptr && !expected[match].returning.empty()) {
          (*returned)[match] =
              TcpWriter(::fcntl(h.fd.get(), F_DUPFD_CLOEXEC, 0), max_payload, keys.to_writer);
        }
        readers[match] = TcpReader(h.fd.release(), max_payload, keys.to_reader);
        done[match] = true;
        --remaining;
      }
      it = pending.erase(it);
    }
  };

  while (remaining > 0) {
    // Out of descriptors, the listener is left alone for a moment: its
    // connection waits in the backlog, and polling would only spin.
    const bool listening = !backoff_.paused(detail::GuardClock::now());
    pollfd polled[3] = {{listening ? fd_.get() : -1, POLLIN, 0},
                        {wake.get(), POLLIN, 0},
                        {interrupt_.get(), POLLIN, 0}};
    const int ready =
        ::poll(polled, 3,
               detail::milliseconds_until(
                   listening ? deadline : std::min<Deadline>(deadline, backoff_.resume_at())));
    if (ready < 0 && errno != EINTR) {
      error_ = "poll on " + to_string(bound_) + " failed: " + detail::errno_text(errno);
      return NetStatus::system_error;
    }
    if (polled[2].revents != 0) {
      error_ = "interrupted: the set-up was given up";
      return NetStatus::closed;
    }
    if (polled[1].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake.get(), &count, sizeof count);
      judge_finished();
      continue;
    }
    if (polled[0].revents != 0) {
      const int fd = backoff_.accept(fd_.get());
      if (fd < 0)
        continue; // the peer left already, an interrupted call, or no descriptor left
      detail::UniqueFd connection(fd);
      const Endpoint peer = detail::peer_endpoint(fd);
      const auto now = detail::GuardClock::now();
      {
        // Room for the newcomer, which may be the writer awaited: the oldest
        // silent handshake goes instead, past the bounds.
        std::lock_guard lock(mutex);
        std::vector<detail::PendingConnection> running;
        std::vector<Handshake*> of;
        for (Handshake& h : pending) {
          if (!h.finished && !h.shed) {
            running.push_back({h.address, h.since});
            of.push_back(&h);
          }
        }
        if (const std::optional<std::size_t> shed =
                detail::connection_to_shed(running, peer.host, pending_limits, now)) {
          of[*shed]->shed = true;
          ::shutdown(of[*shed]->fd.get(), SHUT_RDWR);
        }
      }
      Handshake& h = pending.emplace_back();
      h.fd = std::move(connection);
      h.peer = to_string(peer);
      h.address = peer.host;
      h.since = now;
      h.nonce = detail::fresh_nonce();
      h.deadline = std::min<Deadline>(deadline, Clock::now() + handshake_limit);
      h.thread = std::thread([&h, &mutex, &wake, this] {
        authenticate(h, *secret_);
        std::lock_guard lock(mutex);
        h.finished = true;
        const std::uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(wake.get(), &one, sizeof one);
      });
      continue;
    }
    if (ready == 0 && Clock::now() >= deadline) {
      error_ = "timed out waiting for the writers of ";
      bool first = true;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        if (done[i])
          continue;
        error_ += (first ? "" : ", ") + to_string(expected[i]);
        first = false;
      }
      // The first few rejections word for word, the rest counted: a flood
      // makes no longer an error.
      const std::vector<std::string>& said = rejections_.said();
      for (std::size_t i = 0; i < said.size() && i < 5; ++i)
        error_ += (i == 0 ? "; rejected meanwhile: " : "; ") + said[i];
      const std::size_t unsaid = said.size() > 5 ? said.size() - 5 : 0;
      if (const std::optional<std::string> rest = rejection_summary())
        error_ += "; and " + *rest;
      else if (unsaid > 0)
        error_ += "; and " + std::to_string(unsaid) + " more";
      return NetStatus::timeout;
    }
  }
  return NetStatus::ok;
}

NetStatus connect_channel(const Endpoint& reader, const TcpChannelSpec& spec,
                          const detail::Secret& secret, Deadline deadline, TcpWriter& writer,
                          std::string& error, std::uint64_t max_payload, TcpReader* returned) {
  if (!valid_spec(spec, error))
    return NetStatus::invalid_argument;
  detail::UniqueFd connection;
  std::string why;
  std::string challenge;
  Hello hello{spec, detail::fresh_nonce(), {}};
  NetStatus s = detail::connect_tcp(reader, deadline, connection, why);
  if (s == NetStatus::ok)
    s = receive_setup_frame(connection.get(), FrameKind::challenge, deadline, challenge, why);
  if (s == NetStatus::ok) {
    hello.proof = secret.prove(proof_message("writer", spec, challenge, hello.nonce));
    s = send_setup_frame(connection.get(), FrameKind::hello, hello_payload(hello), deadline, why);
  }
  std::string verdict;
  if (s == NetStatus::ok)
    s = receive_setup_frame(connection.get(), FrameKind::verdict, deadline, verdict, why);
  if (s != NetStatus::ok) {
    error = to_string(spec) + ": " + why;
    return s;
  }
  if (verdict.rfind(accepted, 0) == 0) {
    if (!secret.verify(proof_message("reader", spec, challenge, hello.nonce),
                       std::string_view(verdict).substr(accepted.size()))) {
      error = to_string(spec) + ": " + to_string(reader) +
              " could not prove it knows the launch's secret: it is not the channel's reader";
      return NetStatus::protocol_error;
    }
    const detail::ConnectionKeys keys = keys_of(secret, spec, challenge, hello.nonce);
    if (returned != nullptr && !spec.returning.empty()) {
      const int back = ::fcntl(connection.get(), F_DUPFD_CLOEXEC, 0);
      if (back < 0) {
        error = to_string(spec) + ": cannot share the connection with channel '" + spec.returning +
                "': " + detail::errno_text(errno);
        return NetStatus::system_error;
      }
      *returned = TcpReader(back, max_payload, keys.to_writer);
    }
    writer = TcpWriter(connection.release(), max_payload, keys.to_reader);
    return NetStatus::ok;
  }
  if (verdict.rfind(refused, 0) == 0) {
    error = to_string(spec) + " was rejected by " + to_string(reader) + ": " +
            verdict.substr(refused.size());
    return NetStatus::rejected;
  }
  error =
      to_string(spec) + ": " + to_string(reader) + " answered the handshake with '" + verdict + "'";
  return NetStatus::protocol_error;
}

NetStatus set_up_channels(TcpChannelListener& listener, std::span<const TcpChannelSpec> incoming,
                          std::span<const TcpOutgoing> outgoing, Deadline deadline,
                          TcpChannels& out, std::uint64_t max_payload) {
  out.readers.clear();
  out.writers.clear();
  out.returned_readers.clear();
  out.returned_writers.clear();
  out.error.clear();
  std::vector<TcpWriter> writers(outgoing.size());
  std::vector<TcpReader> returned_readers(outgoing.size());
  NetStatus connected = NetStatus::ok;
  std::string connect_error;
  const detail::Secret* secret = listener.secret();
  if (secret == nullptr) {
    out.error = "set_up_channels() before a successful listen()";
    return NetStatus::invalid_argument;
  }
  std::thread connector([&] {
    // Once the listener is interrupted, these connections stop waiting too.
    const detail::InterruptScope interruptible(listener.interrupt_fd());
    for (std::size_t i = 0; i < outgoing.size() && connected == NetStatus::ok; ++i) {
      connected = connect_channel(outgoing[i].reader, outgoing[i].spec, *secret, deadline,
                                  writers[i], connect_error, max_payload, &returned_readers[i]);
    }
  });
  std::vector<TcpReader> readers;
  std::vector<TcpWriter> returned_writers;
  const NetStatus accepted_all =
      listener.accept(incoming, readers, deadline, max_payload, &returned_writers);
  connector.join();
  // A refusal is the cause of whatever timed out on the other side: report it first.
  if (connected != NetStatus::ok &&
      (connected != NetStatus::timeout || accepted_all == NetStatus::ok)) {
    out.error = connect_error;
    return connected;
  }
  if (accepted_all != NetStatus::ok) {
    out.error = listener.error();
    return accepted_all;
  }
  out.readers = std::move(readers);
  out.writers = std::move(writers);
  out.returned_readers = std::move(returned_readers);
  out.returned_writers = std::move(returned_writers);
  return NetStatus::ok;
}

} // namespace cg
