// net/rendezvous_client.cpp - The rendezvous client: what an actor process
// (or a launcher's rank) says to the driver's server, one request at a time
// on one connection.
#include "net/rendezvous.hpp"

#include "net/rendezvous_wire.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cg {

namespace {

using detail::Clock;
namespace wire = detail::rendezvous_wire;

// The most constructor arguments an ARGS answer may carry.
constexpr std::uint64_t max_constructor_args = std::uint64_t{1} << 30;
// The most NCCL unique ids an NCCL answer may carry (128 bytes each).
constexpr std::uint64_t max_nccl_ids = std::uint64_t{1} << 20;
// How long a client waits for the server's answer beyond its own deadline:
// the server answers a LOOKUP at that deadline, and the answer has to travel.
constexpr std::chrono::seconds answer_grace{2};

} // namespace

NetStatus RendezvousClient::read_line(Deadline deadline, std::string& line) {
  for (;;) {
    const std::size_t newline = input_.find('\n');
    if (newline != std::string::npos) {
      line = input_.substr(0, newline);
      input_.erase(0, newline + 1);
      if (!from_server_.keyed())
        return NetStatus::ok; // the CHALLENGE, before any key
      std::optional<std::string> text = from_server_.line(line);
      if (!text)
        return unauthentic("a line");
      line = std::move(*text);
      return NetStatus::ok;
    }
    if (input_.size() > wire::max_line + wire::line_tag_chars) {
      error_ = "rendezvous at " + to_string(server_) + " sent a line longer than " +
               std::to_string(wire::max_line) + " bytes";
      return NetStatus::protocol_error;
    }
    char chunk[4096];
    const ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      input_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      error_ = "rendezvous at " + to_string(server_) + " closed the connection";
      return NetStatus::closed;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      error_ = "rendezvous at " + to_string(server_) + ": " + detail::errno_text(errno);
      return NetStatus::closed;
    }
    if (detail::wait_fd(fd_.get(), POLLIN, deadline) == 0) {
      error_ = "rendezvous at " + to_string(server_) + " did not answer before the deadline";
      return NetStatus::timeout;
    }
  }
}

NetStatus RendezvousClient::request(const std::string& line, Deadline deadline,
                                    std::string& reply) {
  if (!fd_) {
    error_ = "not connected to a rendezvous server";
    return NetStatus::closed;
  }
  if (const NetStatus s = send_tagged(line, std::nullopt, deadline); s != NetStatus::ok)
    return s;
  return read_line(deadline, reply);
}

NetStatus RendezvousClient::send_tagged(std::string_view text,
                                        std::optional<std::string_view> payload,
                                        Deadline deadline) {
  if (!fd_) {
    error_ = "not connected to a rendezvous server";
    return NetStatus::closed;
  }
  // Only HELLO goes before the keys: its proof covers every field of it.
  std::string bytes = to_server_.keyed() ? to_server_.line(text) : std::string(text) + "\n";
  if (to_server_.keyed() && payload)
    bytes += to_server_.payload(*payload);
  const NetStatus s = detail::send_all(fd_.get(), bytes.data(), bytes.size(), deadline, error_);
  if (s != NetStatus::ok)
    error_ = "rendezvous: " + error_;
  return s;
}

NetStatus RendezvousClient::unauthentic(std::string_view what) {
  fd_.reset();
  error_ = "rendezvous at " + to_string(server_) + " sent " + std::string(what) +
           " that failed its authentication tag (rewritten, dropped, replayed or reordered on "
           "the way): the connection is closed";
  return NetStatus::protocol_error;
}

NetStatus RendezvousClient::connect(const Endpoint& server, std::string_view graph,
                                    const detail::Secret& secret, Deadline deadline) {
  if (!detail::valid_rendezvous_name(graph)) {
    error_ = "graph name '" + std::string(graph) +
             "' is not 1 to 128 printable characters without spaces";
    return NetStatus::invalid_argument;
  }
  server_ = server;
  graph_ = graph;
  input_.clear();
  table_.clear();
  to_server_ = {};
  from_server_ = {};
  std::string why;
  if (const NetStatus s = detail::connect_tcp(server, deadline, fd_, why); s != NetStatus::ok) {
    error_ = "rendezvous: " + why;
    return s;
  }
  const auto fail = [&](NetStatus status, std::string text) {
    fd_.reset();
    error_ = "rendezvous at " + to_string(server_) + " " + text;
    return status;
  };
  std::string challenge;
  if (const NetStatus s = read_line(deadline, challenge); s != NetStatus::ok)
    return s;
  const std::vector<std::string_view> c = wire::fields(challenge);
  if (c.size() != 2 || c[0] != "CHALLENGE" || c[1].size() != 32)
    return fail(NetStatus::protocol_error, "did not send a challenge ('" + challenge + "')");
  const std::string nonce = detail::fresh_nonce();
  const std::string proof = secret.prove(wire::proof_message("client", graph_, c[1], nonce));
  std::string reply;
  const NetStatus s =
      request("HELLO " + std::string(wire::protocol) + " " + graph_ + " " + nonce + " " + proof,
              deadline, reply);
  if (s != NetStatus::ok)
    return s;
  if (reply.rfind("ERROR ", 0) == 0)
    return fail(NetStatus::rejected, "refused: " + reply.substr(6));
  const std::vector<std::string_view> r = wire::fields(reply);
  if (r.size() < 2 || r[0] != "OK")
    return fail(NetStatus::protocol_error, "answered HELLO with '" + reply + "'");
  if (!secret.verify(wire::proof_message("server", graph_, c[1], nonce), r[1])) {
    return fail(NetStatus::protocol_error,
                "could not prove it knows the launch's secret: it is not this launch's driver");
  }
  // From here on every line is tagged, the OK itself first: its greeting
  // (the launch's options) is not covered by the proof.
  const wire::LineKeys keys = wire::line_keys(secret, graph_, c[1], nonce);
  to_server_ = wire::LineTagger(keys.to_server);
  from_server_ = wire::LineChecker(keys.to_client);
  std::optional<std::string> checked = from_server_.line(reply);
  if (!checked)
    return unauthentic("an answer to HELLO");
  reply = std::move(*checked);
  const std::size_t greeting_at = 3 + r[1].size() + 1;
  greeting_ = greeting_at < reply.size() ? reply.substr(greeting_at) : std::string();
  return NetStatus::ok;
}

NetStatus RendezvousClient::publish(std::string_view actor, const Endpoint& data_plane,
                                    Deadline deadline) {
  if (!detail::valid_rendezvous_name(actor)) {
    error_ = "actor name '" + std::string(actor) +
             "' is not 1 to 128 printable characters without spaces";
    return NetStatus::invalid_argument;
  }
  std::string reply;
  const NetStatus s =
      request("PUBLISH " + std::string(actor) + " " + to_string(data_plane), deadline, reply);
  if (s != NetStatus::ok)
    return s;
  if (reply == "OK")
    return NetStatus::ok;
  if (reply.rfind("ERROR ", 0) == 0) {
    error_ = "rendezvous at " + to_string(server_) + " refused: " + reply.substr(6);
    return NetStatus::rejected;
  }
  error_ = "rendezvous at " + to_string(server_) + " answered PUBLISH with '" + reply + "'";
  return NetStatus::protocol_error;
}

NetStatus RendezvousClient::wait_for_table(Deadline deadline) {
  const int wait = detail::milliseconds_until(deadline);
  const Deadline answer_by =
      deadline == Deadline::max() || deadline > Deadline::max() - answer_grace
          ? Deadline::max()
          : std::max(deadline, Clock::now()) + answer_grace;
  std::string reply;
  if (const NetStatus s = request("LOOKUP " + std::to_string(wait), answer_by, reply);
      s != NetStatus::ok)
    return s;
  const std::vector<std::string_view> f = wire::fields(reply);
  const auto malformed = [&] {
    error_ = "rendezvous at " + to_string(server_) + " answered LOOKUP with '" + reply + "'";
    return NetStatus::protocol_error;
  };
  if (f[0] == "TABLE" && f.size() == 2) {
    const std::optional<std::uint64_t> n = wire::number(f[1]);
    if (!n)
      return malformed();
    std::map<std::string, Endpoint> table;
    for (std::uint64_t i = 0; i < *n; ++i) {
      std::string entry;
      if (const NetStatus s = read_line(answer_by, entry); s != NetStatus::ok)
        return s;
      const std::vector<std::string_view> e = wire::fields(entry);
      const std::optional<Endpoint> where = e.size() == 2 ? parse_endpoint(e[1]) : std::nullopt;
      if (!where) {
        error_ = "rendezvous at " + to_string(server_) + " sent the table entry '" + entry + "'";
        return NetStatus::protocol_error;
      }
      table.emplace(std::string(e[0]), *where);
    }
    table_ = std::move(table);
    return NetStatus::ok;
  }
  if (f[0] == "MISSING" && f.size() >= 3) {
    std::vector<std::string> missing(f.begin() + 2, f.end());
    error_ = wire::missing_message(graph_, missing);
    return NetStatus::timeout;
  }
  if (f[0] == "ERROR") {
    error_ = "rendezvous at " + to_string(server_) +
             " refused: " + reply.substr(std::min<std::size_t>(6, reply.size()));
    return NetStatus::rejected;
  }
  return malformed();
}

NetStatus RendezvousClient::constructor_args(std::string_view actor, Deadline deadline,
                                             std::optional<std::vector<std::byte>>& out) {
  std::string reply;
  if (const NetStatus s = request("ARGS " + std::string(actor), deadline, reply);
      s != NetStatus::ok)
    return s;
  out.reset();
  if (reply == "NONE")
    return NetStatus::ok;
  std::vector<std::byte> bytes;
  if (const NetStatus s = receive_counted("ARGS", reply, max_constructor_args, deadline, bytes);
      s != NetStatus::ok)
    return s;
  out = std::move(bytes);
  return NetStatus::ok;
}

NetStatus RendezvousClient::nccl_ids(Deadline deadline, std::vector<std::byte>& out) {
  std::string reply;
  if (const NetStatus s = request("NCCL", deadline, reply); s != NetStatus::ok)
    return s;
  return receive_counted("NCCL", reply, max_nccl_ids, deadline, out);
}

NetStatus RendezvousClient::receive_counted(std::string_view command, const std::string& reply,
                                            std::uint64_t most, Deadline deadline,
                                            std::vector<std::byte>& out) {
  const std::vector<std::string_view> f = wire::fields(reply);
  const std::optional<std::uint64_t> size =
      f.size() == 2 && f[0] == command ? wire::number(f[1]) : std::nullopt;
  if (!size || *size > most) {
    error_ = "rendezvous at " + to_string(server_) + " answered " + std::string(command) +
             " with '" + reply + "'";
    return reply.rfind("ERROR ", 0) == 0 ? NetStatus::rejected : NetStatus::protocol_error;
  }
  // The payload and its tag.
  std::string bytes(*size + detail::frame_tag_bytes, '\0');
  const std::size_t buffered = std::min<std::size_t>(input_.size(), bytes.size());
  std::memcpy(bytes.data(), input_.data(), buffered);
  input_.erase(0, buffered);
  if (const NetStatus s = detail::receive_exact(fd_.get(), bytes.data() + buffered,
                                                bytes.size() - buffered, deadline, error_);
      s != NetStatus::ok) {
    error_ = "rendezvous: " + error_;
    return s;
  }
  const std::string_view payload = std::string_view(bytes).substr(0, *size);
  if (!from_server_.payload(payload, std::string_view(bytes).substr(*size)))
    return unauthentic("the payload of " + std::string(command));
  out.assign(reinterpret_cast<const std::byte*>(payload.data()),
             reinterpret_cast<const std::byte*>(payload.data()) + payload.size());
  return NetStatus::ok;
}

NetStatus RendezvousClient::ready(std::string_view actor, Deadline deadline) {
  std::string reply;
  const NetStatus s = request("READY " + std::string(actor), deadline, reply);
  if (s != NetStatus::ok)
    return s;
  if (reply == "OK")
    return NetStatus::ok;
  error_ = "rendezvous at " + to_string(server_) + " answered READY with '" + reply + "'";
  return NetStatus::rejected;
}

void RendezvousClient::report_failure(const RemoteFailure& failure) {
  if (!fd_)
    return;
  using Cause = RemoteFailure::Cause;
  std::string text = "FAILED ";
  text += failure.cause == Cause::actor     ? "actor "
          : failure.cause == Cause::channel ? "channel "
                                            : "host ";
  text += failure.cause == Cause::actor && !failure.actor.empty() ? failure.actor : "-";
  text += ' ';
  const std::size_t room = wire::max_line - 1 - std::min(text.size(), wire::max_line - 1);
  for (char c : std::string_view(failure.reason).substr(0, room))
    text += c == '\n' ? ' ' : c;
  const std::string saved = error_; // what failed is still the error to say
  (void)send_tagged(text, std::nullopt, Clock::now() + std::chrono::seconds(1));
  error_ = saved;
}

NetStatus RendezvousClient::poll_requests(std::vector<std::string>& requests) {
  if (!fd_)
    return NetStatus::closed;
  char chunk[4096];
  NetStatus status = NetStatus::ok;
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      input_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n == 0) {
      status = NetStatus::closed;
    } else {
      const int error = errno;
      error_ = "rendezvous: " + detail::errno_text(error);
      status = error == ETIMEDOUT ? NetStatus::timeout : NetStatus::system_error;
    }
    break;
  }
  // What arrived before an end is still said.
  for (std::size_t newline; (newline = input_.find('\n')) != std::string::npos;) {
    std::optional<std::string> text = from_server_.line(input_.substr(0, newline));
    input_.erase(0, newline + 1);
    if (!text)
      return unauthentic("a request");
    requests.push_back(std::move(*text));
  }
  return status;
}

NetStatus RendezvousClient::send_clock(std::int64_t clock_ns, Deadline deadline) {
  if (!fd_)
    return NetStatus::closed;
  return send_tagged("CLOCK " + std::to_string(std::max<std::int64_t>(clock_ns, 0)), std::nullopt,
                     deadline);
}

NetStatus RendezvousClient::send_profile(std::string_view actor, std::string_view payload,
                                         Deadline deadline) {
  if (!fd_)
    return NetStatus::closed;
  return send_tagged("PROFILE " + std::string(actor) + " " + std::to_string(payload.size()),
                     payload, deadline);
}

std::optional<Endpoint> RendezvousClient::lookup(std::string_view actor) const {
  const auto it = table_.find(std::string(actor));
  if (it == table_.end())
    return std::nullopt;
  return it->second;
}

std::string RendezvousClient::local_host() const {
  return fd_ ? detail::local_endpoint(fd_.get()).host : std::string();
}

} // namespace cg
