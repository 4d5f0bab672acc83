// tcp_setup.cpp — listening, connecting and the handshake that opens a TCP channel.
//
// The handshake reuses the channel's frame format (magic, version, checksum),
// so a stray connection from anything that is not a cg writer fails the same
// checks a corrupted data frame would, and nothing else has to be parsed.
// The listener handles one handshake at a time, each bounded by
// handshake_limit, so a connection that never speaks cannot stall the others
// for longer than that.
#include "net/tcp_setup.hpp"

#include "net/rendezvous.hpp"
#include "net/tcp_frame.hpp"

#include <algorithm>
#include <thread>

namespace cg {

namespace {

using Clock = std::chrono::steady_clock;
using detail::FrameKind;

constexpr std::size_t max_handshake = 4096;
constexpr std::chrono::seconds handshake_limit{5};
constexpr std::string_view accepted = "ok";
constexpr std::string_view refused = "rejected: ";

const char* kind_name(FrameKind kind) { return kind == FrameKind::hello ? "hello" : "verdict"; }

NetStatus send_setup_frame(int fd, FrameKind kind, std::string_view payload, Deadline deadline,
                           std::string& error) {
  detail::FrameHeader header;
  header.kind = static_cast<std::uint16_t>(kind);
  header.length = payload.size();
  header.checksum =
      detail::frame_checksum(header, std::as_bytes(std::span(payload.data(), payload.size())));
  std::string frame(detail::frame_header_bytes, '\0');
  detail::encode_frame_header(header, reinterpret_cast<std::byte*>(frame.data()));
  frame += payload;
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
  if (header.kind != static_cast<std::uint16_t>(kind) || header.sequence != 0 ||
      header.reserved != 0) {
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
  if (detail::frame_checksum(header, std::as_bytes(std::span(payload.data(), payload.size()))) !=
      header.checksum) {
    return bad("checksum mismatch");
  }
  return NetStatus::ok;
}

std::string hello_payload(const TcpChannelSpec& spec) {
  return spec.graph + "\n" + spec.channel + "\n" + spec.writer + "\n" + spec.reader;
}

std::optional<TcpChannelSpec> parse_hello(std::string_view payload) {
  std::string fields[4];
  for (int i = 0; i < 4; ++i) {
    const std::size_t newline = payload.find('\n');
    if ((newline == std::string_view::npos) != (i == 3))
      return std::nullopt;
    fields[i] = std::string(payload.substr(0, newline));
    if (!detail::valid_rendezvous_name(fields[i]))
      return std::nullopt;
    payload.remove_prefix(newline == std::string_view::npos ? payload.size() : newline + 1);
  }
  return TcpChannelSpec{fields[0], fields[1], fields[2], fields[3]};
}

bool valid_spec(const TcpChannelSpec& spec, std::string& error) {
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

NetStatus TcpChannelListener::listen(const Endpoint& where) {
  error_.clear();
  return detail::listen_tcp(where, fd_, bound_, error_);
}

NetStatus TcpChannelListener::accept(std::span<const TcpChannelSpec> expected,
                                     std::vector<TcpReader>& readers, Deadline deadline,
                                     std::uint64_t max_payload) {
  error_.clear();
  readers.clear();
  readers.resize(expected.size());
  if (expected.empty())
    return NetStatus::ok;
  for (const TcpChannelSpec& spec : expected) {
    if (!valid_spec(spec, error_))
      return NetStatus::invalid_argument;
  }
  if (!fd_) {
    error_ = "accept() before a successful listen()";
    return NetStatus::invalid_argument;
  }
  std::vector<bool> done(expected.size(), false);
  std::size_t remaining = expected.size();
  while (remaining > 0) {
    detail::UniqueFd connection;
    std::string why;
    const NetStatus s = detail::accept_tcp(fd_.get(), deadline, connection, why);
    if (s == NetStatus::timeout) {
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
      return s;
    }
    if (s != NetStatus::ok) {
      error_ = why;
      return s;
    }
    const std::string peer = to_string(detail::peer_endpoint(connection.get()));
    const Deadline handshake_deadline =
        std::min<Deadline>(deadline, Clock::now() + handshake_limit);
    std::string payload;
    if (receive_setup_frame(connection.get(), FrameKind::hello, handshake_deadline, payload, why) !=
        NetStatus::ok) {
      rejections_.push_back("connection from " + peer + ": " + why);
      continue;
    }
    const std::optional<TcpChannelSpec> got = parse_hello(payload);
    std::size_t match = expected.size();
    const std::string reason = got ? judge(*got, expected, done, match) : "malformed handshake";
    if (!reason.empty()) {
      std::string ignored;
      send_setup_frame(connection.get(), FrameKind::verdict, std::string(refused) + reason,
                       handshake_deadline, ignored);
      rejections_.push_back("connection from " + peer +
                            (got ? " for " + to_string(*got) : std::string()) +
                            " rejected: " + reason);
      continue;
    }
    if (send_setup_frame(connection.get(), FrameKind::verdict, accepted, handshake_deadline, why) !=
        NetStatus::ok) {
      rejections_.push_back("connection from " + peer + " for " + to_string(*got) +
                            " dropped before the verdict: " + why);
      continue;
    }
    readers[match] = TcpReader(connection.release(), max_payload);
    done[match] = true;
    --remaining;
  }
  return NetStatus::ok;
}

NetStatus connect_channel(const Endpoint& reader, const TcpChannelSpec& spec, Deadline deadline,
                          TcpWriter& writer, std::string& error, std::uint64_t max_payload) {
  if (!valid_spec(spec, error))
    return NetStatus::invalid_argument;
  detail::UniqueFd connection;
  std::string why;
  NetStatus s = detail::connect_tcp(reader, deadline, connection, why);
  if (s == NetStatus::ok)
    s = send_setup_frame(connection.get(), FrameKind::hello, hello_payload(spec), deadline, why);
  std::string verdict;
  if (s == NetStatus::ok)
    s = receive_setup_frame(connection.get(), FrameKind::verdict, deadline, verdict, why);
  if (s != NetStatus::ok) {
    error = to_string(spec) + ": " + why;
    return s;
  }
  if (verdict == accepted) {
    writer = TcpWriter(connection.release(), max_payload);
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
  out.error.clear();
  std::vector<TcpWriter> writers(outgoing.size());
  NetStatus connected = NetStatus::ok;
  std::string connect_error;
  std::thread connector([&] {
    for (std::size_t i = 0; i < outgoing.size() && connected == NetStatus::ok; ++i) {
      connected = connect_channel(outgoing[i].reader, outgoing[i].spec, deadline, writers[i],
                                  connect_error, max_payload);
    }
  });
  std::vector<TcpReader> readers;
  const NetStatus accepted_all = listener.accept(incoming, readers, deadline, max_payload);
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
  return NetStatus::ok;
}

} // namespace cg
