// tcp_setup.cpp — listening, connecting and the handshake that opens a TCP channel.
//
// The handshake reuses the channel's frame format (magic, version, checksum),
// so a stray connection from anything that is not a cg writer fails the same
// checks a corrupted data frame would, and nothing else has to be parsed.
// The listener authenticates each connection on a thread of its own (at most
// max_pending at once, each bounded by handshake_limit), so connections that
// never speak cannot stall the writers that do; the channels are matched on
// the accepting thread alone, as the handshakes complete.
#include "net/tcp_setup.hpp"

#include "net/rendezvous.hpp"
#include "net/tcp_frame.hpp"

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

using Clock = std::chrono::steady_clock;
using detail::FrameKind;

constexpr std::size_t max_handshake = 4096;
constexpr std::chrono::seconds handshake_limit{5};
constexpr std::size_t max_pending = 64;
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
  return detail::listen_tcp(where, fd_, bound_, error_);
}

namespace {

// One accepted connection being authenticated on a thread of its own.
struct Handshake {
  detail::UniqueFd fd;
  std::string peer;
  std::string nonce; // the reader's challenge
  std::optional<Hello> hello;
  std::string error; // why it failed, if it did
  Deadline deadline;
  std::thread thread;
  bool finished = false; // guarded by the accepting loop's mutex
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
    std::vector<std::string>& rejections;
    ~Joiner() {
      for (Handshake& h : pending) {
        {
          std::lock_guard lock(mutex);
          if (!h.finished)
            ::shutdown(h.fd.get(), SHUT_RDWR);
        }
        h.thread.join();
        rejections.push_back("connection from " + h.peer +
                             ": dropped unauthenticated when the set-up ended");
      }
    }
  } joiner{pending, mutex, rejections_};

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
      if (!h.hello) {
        rejections_.push_back("connection from " + h.peer + ": " + h.error);
      } else if (!reason.empty()) {
        send_setup_frame(h.fd.get(), FrameKind::verdict, std::string(refused) + reason, h.deadline,
                         why);
        rejections_.push_back("connection from " + h.peer + " for " + to_string(h.hello->spec) +
                              " rejected: " + reason);
      } else if (const std::string proof = secret_->prove(
                     proof_message("reader", h.hello->spec, h.nonce, h.hello->nonce));
                 send_setup_frame(h.fd.get(), FrameKind::verdict, std::string(accepted) + proof,
                                  h.deadline, why) != NetStatus::ok) {
        rejections_.push_back("connection from " + h.peer + " for " + to_string(h.hello->spec) +
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
    pollfd polled[2] = {{fd_.get(), POLLIN, 0}, {wake.get(), POLLIN, 0}};
    const int ready = ::poll(polled, 2, detail::milliseconds_until(deadline));
    if (ready < 0 && errno != EINTR) {
      error_ = "poll on " + to_string(bound_) + " failed: " + detail::errno_text(errno);
      return NetStatus::system_error;
    }
    if (polled[1].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake.get(), &count, sizeof count);
      judge_finished();
      continue;
    }
    if (polled[0].revents != 0) {
      const int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        continue; // the peer left already, or an interrupted call
      detail::UniqueFd connection(fd);
      const std::string peer = to_string(detail::peer_endpoint(fd));
      if (pending.size() >= max_pending) {
        rejections_.push_back("connection from " + peer + ": dropped, " +
                              std::to_string(max_pending) + " handshakes are under way already");
        continue;
      }
      Handshake& h = pending.emplace_back();
      h.fd = std::move(connection);
      h.peer = peer;
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
      for (std::size_t i = 0; i < rejections_.size(); ++i)
        error_ += (i == 0 ? "; rejected meanwhile: " : "; ") + rejections_[i];
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
