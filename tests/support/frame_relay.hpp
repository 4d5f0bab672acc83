// frame_relay.hpp - a man in the middle for tests: a TCP forwarder between a
// channel's two hosts that passes every byte on, or rewrites one data frame.
//
// It listens on the loopback interface; each connection it accepts it joins
// to `target`, and copies bytes both ways. The frames towards the side that
// connected (the answers of the side that listens) it reads one by one: the
// set-up's challenge and verdict (net/tcp_setup.hpp) pass as they are, and
// with Mode::rewrite the first data frame after them goes on with one
// payload byte changed and both of its checksums recomputed, as anyone on
// the path can do. Only the frame's tag (net/frame_auth.hpp) can then tell.
#pragma once

#include "net/frame.hpp"
#include "net/socket.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace cg_test {

class FrameRelay {
public:
  enum class Mode { pass, rewrite };

  FrameRelay(const cg::Endpoint& target, Mode mode) : target_(target), mode_(mode) {
    std::string error;
    if (cg::detail::listen_tcp({"127.0.0.1", 0}, listener_, bound_, error) != cg::NetStatus::ok)
      error_ = error;
    else
      acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FrameRelay() {
    stopping_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    if (acceptor_.joinable())
      acceptor_.join();
    std::lock_guard lock(mutex_);
    for (Joined& j : joined_) {
      ::shutdown(j.client.get(), SHUT_RDWR);
      ::shutdown(j.server.get(), SHUT_RDWR);
    }
    for (Joined& j : joined_) {
      j.up.join();
      j.down.join();
    }
  }
  FrameRelay(const FrameRelay&) = delete;
  FrameRelay& operator=(const FrameRelay&) = delete;

  const cg::Endpoint& endpoint() const { return bound_; }
  const std::string& error() const { return error_; }
  // Data frames rewritten so far.
  int rewritten() const { return rewritten_.load(); }

private:
  struct Joined {
    cg::detail::UniqueFd client, server;
    std::thread up, down;
  };

  void accept_loop() {
    while (!stopping_) {
      cg::detail::UniqueFd client, server;
      std::string error;
      if (cg::detail::accept_tcp(listener_.get(), cg::Deadline::max(), client, error) !=
          cg::NetStatus::ok)
        return;
      if (cg::detail::connect_tcp(target_,
                                  std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                  server, error) != cg::NetStatus::ok)
        continue;
      // Blocking, so that each direction is a plain read-and-write loop.
      cg::detail::set_blocking(client.get());
      cg::detail::set_blocking(server.get());
      std::lock_guard lock(mutex_);
      Joined& j = joined_.emplace_back();
      j.client = std::move(client);
      j.server = std::move(server);
      j.up = std::thread([this, &j] { copy(j.client.get(), j.server.get()); });
      j.down = std::thread([this, &j] { frames(j.server.get(), j.client.get()); });
    }
  }

  static bool read_exact(int fd, char* to, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::recv(fd, to, size, 0);
      if (n <= 0)
        return false;
      to += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
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

  // Frame by frame: two set-up frames without a tag, then data frames with one.
  void frames(int from, int to) {
    for (int index = 0;; ++index) {
      const bool setup = index < 2;
      std::string frame(cg::detail::frame_header_bytes, '\0');
      if (!read_exact(from, frame.data(), frame.size()))
        break;
      auto* bytes = reinterpret_cast<std::byte*>(frame.data());
      const cg::detail::FrameHeader header = cg::detail::decode_frame_header(bytes);
      const std::size_t rest = header.length + cg::detail::frame_trailer_bytes +
                               (setup ? 0 : cg::detail::frame_tag_bytes);
      frame.resize(cg::detail::frame_header_bytes + rest);
      bytes = reinterpret_cast<std::byte*>(frame.data());
      if (!read_exact(from, frame.data() + cg::detail::frame_header_bytes, rest))
        break;
      if (!setup && mode_ == Mode::rewrite && rewritten_ == 0 && header.length > 0) {
        bytes[cg::detail::frame_header_bytes] ^= std::byte{1};
        const std::span<const std::byte> payload(bytes + cg::detail::frame_header_bytes,
                                                 header.length);
        cg::detail::encode_frame_trailer(cg::detail::frame_checksum(header, payload),
                                         bytes + cg::detail::frame_header_bytes + header.length);
        ++rewritten_;
      }
      if (!write_all(to, frame.data(), frame.size()))
        break;
    }
    ::shutdown(to, SHUT_WR);
  }

  cg::Endpoint target_;
  Mode mode_;
  cg::detail::UniqueFd listener_;
  cg::Endpoint bound_;
  std::string error_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> rewritten_{0};
  std::mutex mutex_;
  std::list<Joined> joined_;
};

} // namespace cg_test
