// net/socket.hpp - TCP sockets with deadlines: the plumbing under the TCP
// channel, the rendezvous and the channel set-up (internal).
//
// Every descriptor made here is close-on-exec and non-blocking; every wait is a
// poll() bounded by a cg::Deadline, so nothing here can hang past its deadline.
// Failures are a NetStatus plus a sentence in `error` that names the peer.
#pragma once

#include "net/net.hpp"
#include <cg/detail/channel.hpp>

#include <chrono>
#include <string>

namespace cg::detail {

// Owns one file descriptor; closes it on destruction. Movable, not copyable.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  int release() noexcept;
  void reset(int fd = -1) noexcept;
  explicit operator bool() const noexcept { return fd_ >= 0; }

private:
  int fd_ = -1;
};

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT) or `deadline`
// passes. Returns the revents (> 0), 0 on timeout, -1 with errno on failure
// (ECANCELED: interrupted, see InterruptScope). A deadline in the past polls
// once without waiting.
int wait_fd(int fd, short events, Deadline deadline) noexcept;

// While one lives, every wait of this file on its thread (wait_fd, the
// retries of connect_tcp, send_all, receive_exact) also ends once `fd` (an
// eventfd, or -1 for none) is readable: it fails with ECANCELED, said
// "given up". So a set-up given up elsewhere stops at once, not at its
// deadline, without every call on the way taking a second descriptor.
class InterruptScope {
public:
  explicit InterruptScope(int fd) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

private:
  int saved_;
};

// Looks whether `fd` is ready for `events` up to `looks` more times (counted
// down), yielding the CPU before each look and never sleeping: a sleeping
// thread's wake-up costs more than a round trip between hosts, more still
// where an idle CPU halts (a VM). True once it is ready.
bool look_yielding(int fd, short events, int& looks) noexcept;

// Milliseconds from now until `deadline`, rounded up, clamped to [0, INT_MAX].
int milliseconds_until(Deadline deadline) noexcept;

bool set_nonblocking(int fd) noexcept;
bool set_blocking(int fd) noexcept;
bool set_nodelay(int fd) noexcept; // TCP_NODELAY: every frame goes out at once

// Makes the kernel end the connection (reads and writes then fail with
// ETIMEDOUT) once the peer's host has answered nothing for about `silence`:
// keepalive probes every second while the connection is idle, and
// TCP_USER_TIMEOUT for both probes and unacknowledged data. A busy peer
// process is no silent host: its kernel answers the probes.
bool set_liveness_timeout(int fd, std::chrono::milliseconds silence) noexcept;

// Binds and listens on `where` (port 0 = ephemeral); `bound` gets the address
// actually bound, with the real port.
NetStatus listen_tcp(const Endpoint& where, UniqueFd& out, Endpoint& bound, std::string& error);

// Connects to `to`, retrying while the connection is refused or the network is
// unreachable (the peer may not listen yet) until `deadline`; timeout then
// names the address and the last error.
NetStatus connect_tcp(const Endpoint& to, Deadline deadline, UniqueFd& out, std::string& error);

// Accepts one connection on a listening socket (non-blocking, close-on-exec).
NetStatus accept_tcp(int listener, Deadline deadline, UniqueFd& out, std::string& error);

// The local / remote address of a connected or bound socket ({"", 0} if unknown).
Endpoint local_endpoint(int fd);
Endpoint peer_endpoint(int fd);

// Writes all `bytes`; closed if the peer is gone.
NetStatus send_all(int fd, const void* data, std::size_t bytes, Deadline deadline,
                   std::string& error);
// Reads exactly `bytes`; closed if the peer closes first.
NetStatus receive_exact(int fd, void* data, std::size_t bytes, Deadline deadline,
                        std::string& error);

// "Connection refused" etc.: strerror_r without the GNU/XSI ambiguity.
std::string errno_text(int error_number);

} // namespace cg::detail
