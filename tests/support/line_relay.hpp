// line_relay.hpp - a man in the middle for tests: a TCP forwarder between a
// rendezvous client and its server that passes every byte on, or rewrites the
// client's PUBLISH line.
//
// It listens on the loopback interface; the connection it accepts it joins to
// `target` and copies bytes both ways. What the client sends it reads line by
// line: the HELLO passes as it is (its proof covers every field), and with
// Mode::rewrite the first line that starts "PUBLISH " goes on with the port
// of its endpoint changed, as anyone on the path can do. Only the line's tag
// (net/rendezvous_wire.hpp) can then tell.
#pragma once

#include "net/socket.hpp"

#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace cg_test {

class LineRelay {
public:
  enum class Mode { pass, rewrite };

  LineRelay(const cg::Endpoint& target, Mode mode) : target_(target), mode_(mode) {
    std::string error;
    if (cg::detail::listen_tcp({"127.0.0.1", 0}, listener_, bound_, error) != cg::NetStatus::ok)
      error_ = error;
    else
      acceptor_ = std::thread([this] { relay_one(); });
  }
  ~LineRelay() {
    stopping_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    {
      std::lock_guard lock(mutex_);
      ::shutdown(client_.get(), SHUT_RDWR);
      ::shutdown(server_.get(), SHUT_RDWR);
    }
    if (acceptor_.joinable())
      acceptor_.join();
  }
  LineRelay(const LineRelay&) = delete;
  LineRelay& operator=(const LineRelay&) = delete;

  const cg::Endpoint& endpoint() const { return bound_; }
  const std::string& error() const { return error_; }
  // Lines rewritten so far.
  int rewritten() const { return rewritten_.load(); }
  // Where the relay's own connection to the target comes from: the peer the
  // target sees. Known once the client connected.
  cg::Endpoint upstream() const {
    std::lock_guard lock(mutex_);
    return upstream_;
  }

private:
  void relay_one() {
    cg::detail::UniqueFd client, server;
    std::string error;
    if (cg::detail::accept_tcp(listener_.get(), cg::Deadline::max(), client, error) !=
            cg::NetStatus::ok ||
        cg::detail::connect_tcp(target_, std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                server, error) != cg::NetStatus::ok)
      return;
    cg::detail::set_blocking(client.get());
    cg::detail::set_blocking(server.get());
    {
      std::lock_guard lock(mutex_);
      upstream_ = cg::detail::local_endpoint(server.get());
      client_ = std::move(client);
      server_ = std::move(server);
    }
    if (stopping_)
      return;
    std::thread down([this] { copy(server_.get(), client_.get()); });
    lines(client_.get(), server_.get());
    down.join();
  }

  static bool write_all(int fd, const char* from, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::send(fd, from, size, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      from += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }

  static void copy(int from, int to) {
    char buffer[64 * 1024];
    for (;;) {
      const ssize_t n = ::recv(from, buffer, sizeof buffer, 0);
      if (n <= 0 || !write_all(to, buffer, static_cast<std::size_t>(n)))
        break;
    }
    ::shutdown(to, SHUT_WR);
  }

  // Byte by byte up to each newline: the client's lines are short and few.
  void lines(int from, int to) {
    std::string line;
    char c = 0;
    while (::recv(from, &c, 1, 0) == 1) {
      line += c;
      if (c != '\n')
        continue;
      if (mode_ == Mode::rewrite && rewritten_ == 0 && line.rfind("PUBLISH ", 0) == 0) {
        // "PUBLISH <actor> <host>:<port> <tag>": the port's last digit changed.
        const std::size_t colon = line.find(':');
        const std::size_t space = line.find(' ', colon);
        if (colon != std::string::npos && space != std::string::npos) {
          char& digit = line[space - 1];
          digit = digit == '9' ? '8' : static_cast<char>(digit + 1);
          ++rewritten_;
        }
      }
      if (!write_all(to, line.data(), line.size()))
        break;
      line.clear();
    }
    ::shutdown(to, SHUT_WR);
  }

  cg::Endpoint target_;
  Mode mode_;
  cg::detail::UniqueFd listener_;
  cg::Endpoint bound_;
  std::string error_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> rewritten_{0};
  mutable std::mutex mutex_;
  cg::Endpoint upstream_;
  cg::detail::UniqueFd client_, server_;
  std::thread acceptor_;
};

} // namespace cg_test
