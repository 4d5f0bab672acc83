// socket.cpp - TCP sockets with deadlines (see net/socket.hpp).
#include "net/socket.hpp"
#include "support/deadline.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>
#include <utility>

namespace cg::detail {

namespace {

// The descriptor that interrupts this thread's waits (InterruptScope), or -1.
thread_local int interrupt_fd = -1;

// Sleeps for `pause`, or less if this thread's waits are interrupted; false then.
bool pause_unless_interrupted(Clock::duration pause) {
  if (interrupt_fd < 0) {
    std::this_thread::sleep_for(pause);
    return true;
  }
  pollfd polled{interrupt_fd, POLLIN, 0};
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(pause).count();
  return !(::poll(&polled, 1, static_cast<int>(ms)) > 0 && polled.revents != 0);
}

// Connection attempts back off from the first to the last pause.
constexpr std::chrono::milliseconds first_retry_pause{5};
constexpr std::chrono::milliseconds last_retry_pause{200};

struct AddrInfoDeleter {
  void operator()(addrinfo* list) const noexcept { freeaddrinfo(list); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// Resolves `where`; bad_address with the resolver's reason when it cannot.
NetStatus resolve(const Endpoint& where, bool passive, AddrInfoList& out, std::string& error,
                  bool& retriable) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const std::string port = std::to_string(where.port);
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &list);
  retriable = rc == EAI_AGAIN;
  if (rc != 0) {
    error = "cannot resolve '" + where.host + "': " + gai_strerror(rc);
    return NetStatus::bad_address;
  }
  out.reset(list);
  return NetStatus::ok;
}

Endpoint endpoint_of(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &in4.sin_addr, text, sizeof text);
    return {text, ntohs(in4.sin_port)};
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    return {text, ntohs(in6.sin6_port)};
  }
  return {};
}

// Errors that mean "the peer is not (yet) there": worth another try.
bool worth_retrying(int error_number) {
  switch (error_number) {
  case ECONNREFUSED:
  case ECONNRESET:
  case ECONNABORTED:
  case ENETUNREACH:
  case EHOSTUNREACH:
  case EHOSTDOWN:
  case ENETDOWN:
  case ETIMEDOUT:
  case EAGAIN:
  case EADDRNOTAVAIL:
    return true;
  default:
    return false;
  }
}

// One connection attempt to one address, bounded by `deadline`. Returns 0 or an errno.
int try_connect(const addrinfo& address, Deadline deadline, UniqueFd& out) {
  UniqueFd fd(::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       address.ai_protocol));
  if (!fd)
    return errno;
  if (::connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS && errno != EINTR)
      return errno;
    for (;;) {
      const int ready = wait_fd(fd.get(), POLLOUT, deadline);
      if (ready == 0)
        return ETIMEDOUT;
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready < 0)
        return errno;
      break;
    }
    int so_error = 0;
    socklen_t length = sizeof so_error;
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &length) != 0)
      return errno;
    if (so_error != 0)
      return so_error;
  }
  // Connecting to a free port of our own ephemeral range while retrying can meet
  // ourselves (TCP simultaneous open): that is nobody listening.
  if (local_endpoint(fd.get()) == peer_endpoint(fd.get()))
    return ECONNREFUSED;
  out = std::move(fd);
  return 0;
}

} // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other)
    reset(other.release());
  return *this;
}

int UniqueFd::release() noexcept { return std::exchange(fd_, -1); }

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = fd;
}

int milliseconds_until(Deadline deadline) noexcept {
  if (deadline == Deadline::max())
    return INT_MAX;
  const auto now = Clock::now();
  if (deadline <= now)
    return 0; // before subtracting: Deadline::min() - now overflows
  const auto left = deadline - now;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

int wait_fd(int fd, short events, Deadline deadline) noexcept {
  pollfd entry{fd, events, 0};
  timespec timeout{};
  const timespec* limit = nullptr; // Deadline::max(): wait forever
  if (deadline != Deadline::max()) {
    const auto now = Clock::now();
    const auto left = deadline > now ? deadline - now
                                     : Clock::duration::zero(); // Deadline::min() - now overflows
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timeout.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    timeout.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    limit = &timeout;
  }
  pollfd entries[2] = {entry, {interrupt_fd, POLLIN, 0}};
  const int rc = ::ppoll(entries, interrupt_fd < 0 ? 1 : 2, limit, nullptr);
  if (rc <= 0)
    return rc;
  if (interrupt_fd >= 0 && entries[1].revents != 0) {
    errno = ECANCELED;
    return -1;
  }
  return entries[0].revents != 0 ? entries[0].revents : events;
}

InterruptScope::InterruptScope(int fd) noexcept : saved_(interrupt_fd) { interrupt_fd = fd; }

InterruptScope::~InterruptScope() { interrupt_fd = saved_; }

bool look_yielding(int fd, short events, int& looks) noexcept {
  while (looks > 0) {
    --looks;
    sched_yield();
    pollfd polled{fd, events, 0};
    if (::poll(&polled, 1, 0) != 0)
      return true;
  }
  return false;
}

bool set_nonblocking(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

bool set_blocking(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

bool set_nodelay(int fd) noexcept {
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0;
}

bool set_liveness_timeout(int fd, std::chrono::milliseconds silence) noexcept {
  const int on = 1;
  const int idle = 1;     // seconds without traffic before the first probe
  const int interval = 1; // seconds between probes
  const int probes = 127; // the most Linux allows: TCP_USER_TIMEOUT decides, not the count
  const auto limit = static_cast<unsigned>(
      std::clamp<std::chrono::milliseconds::rep>(silence.count(), 1, 3'600'000));
  return ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0 &&
         ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) == 0 &&
         ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval) == 0 &&
         ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) == 0 &&
         ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &limit, sizeof limit) == 0;
}

// GNU strerror_r returns the message (maybe not in the buffer); XSI returns 0.
[[maybe_unused]] static std::string strerror_result(const char* message, const char*) {
  return message;
}
[[maybe_unused]] static std::string strerror_result(int, const char* buffer) { return buffer; }

std::string errno_text(int error_number) {
  char buffer[128] = {};
  return strerror_result(strerror_r(error_number, buffer, sizeof buffer), buffer);
}

NetStatus listen_tcp(const Endpoint& where, UniqueFd& out, Endpoint& bound, std::string& error) {
  AddrInfoList list;
  bool retriable = false;
  if (const NetStatus s = resolve(where, true, list, error, retriable); s != NetStatus::ok)
    return s;
  int last = 0;
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    UniqueFd fd(
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) {
      last = errno;
      continue;
    }
    const int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      last = errno;
      continue;
    }
    bound = local_endpoint(fd.get());
    out = std::move(fd);
    return NetStatus::ok;
  }
  error = "cannot listen on " + to_string(where) + ": " + errno_text(last);
  return NetStatus::system_error;
}

NetStatus connect_tcp(const Endpoint& to, Deadline deadline, UniqueFd& out, std::string& error) {
  auto pause = first_retry_pause;
  std::string last_error = "no attempt made";
  for (;;) {
    AddrInfoList list;
    bool retriable = false;
    std::string resolve_error;
    const NetStatus resolved = resolve(to, false, list, resolve_error, retriable);
    if (resolved != NetStatus::ok && !retriable) {
      error = resolve_error;
      return resolved;
    }
    if (resolved != NetStatus::ok)
      last_error = resolve_error;
    for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
      const int rc = try_connect(*a, deadline, out);
      if (rc == 0)
        return NetStatus::ok;
      last_error = errno_text(rc);
      if (!worth_retrying(rc)) {
        error = "cannot connect to " + to_string(to) + ": " + last_error;
        return NetStatus::system_error;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline)
      break;
    if (!pause_unless_interrupted(std::min<Clock::duration>(pause, deadline - now))) {
      error = "cannot connect to " + to_string(to) + ": given up";
      return NetStatus::closed;
    }
    pause = std::min(pause * 2, last_retry_pause);
  }
  error = "cannot connect to " + to_string(to) + " before the deadline: " + last_error;
  return NetStatus::timeout;
}

NetStatus accept_tcp(int listener, Deadline deadline, UniqueFd& out, std::string& error) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      out.reset(fd);
      return NetStatus::ok;
    }
    const int e = errno;
    if (e == EINTR || e == ECONNABORTED)
      continue;
    if (e != EAGAIN && e != EWOULDBLOCK) {
      error = "accept on " + to_string(local_endpoint(listener)) + " failed: " + errno_text(e);
      return NetStatus::system_error;
    }
    const int ready = wait_fd(listener, POLLIN, deadline);
    if (ready == 0) {
      error = "no connection to " + to_string(local_endpoint(listener)) + " before the deadline";
      return NetStatus::timeout;
    }
    if (ready < 0 && errno != EINTR) {
      error = "poll on " + to_string(local_endpoint(listener)) + " failed: " + errno_text(errno);
      return NetStatus::system_error;
    }
  }
}

Endpoint local_endpoint(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return {};
  return endpoint_of(address);
}

Endpoint peer_endpoint(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return {};
  return endpoint_of(address);
}

NetStatus send_all(int fd, const void* data, std::size_t bytes, Deadline deadline,
                   std::string& error) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<std::size_t>(n);
      continue;
    }
    const int e = errno;
    if (e == EINTR)
      continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      const int ready = wait_fd(fd, POLLOUT, deadline);
      if (ready == 0) {
        error =
            "sending to " + to_string(peer_endpoint(fd)) + " did not finish before the deadline";
        return NetStatus::timeout;
      }
      if (ready < 0 && errno == ECANCELED) {
        error = "sending to " + to_string(peer_endpoint(fd)) + ": given up";
        return NetStatus::closed;
      }
      continue;
    }
    error = "sending to " + to_string(peer_endpoint(fd)) + " failed: " + errno_text(e);
    return e == EPIPE || e == ECONNRESET ? NetStatus::closed : NetStatus::system_error;
  }
  return NetStatus::ok;
}

NetStatus receive_exact(int fd, void* data, std::size_t bytes, Deadline deadline,
                        std::string& error) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      error = "the peer " + to_string(peer_endpoint(fd)) + " closed the connection";
      return NetStatus::closed;
    }
    const int e = errno;
    if (e == EINTR)
      continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      const int ready = wait_fd(fd, POLLIN, deadline);
      if (ready == 0) {
        error = "no answer from " + to_string(peer_endpoint(fd)) + " before the deadline";
        return NetStatus::timeout;
      }
      if (ready < 0 && errno == ECANCELED) {
        error = "receiving from " + to_string(peer_endpoint(fd)) + ": given up";
        return NetStatus::closed;
      }
      continue;
    }
    error = "receiving from " + to_string(peer_endpoint(fd)) + " failed: " + errno_text(e);
    return e == ECONNRESET ? NetStatus::closed : NetStatus::system_error;
  }
  return NetStatus::ok;
}

} // namespace cg::detail
