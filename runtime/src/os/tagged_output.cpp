// tagged_output.cpp - one thread polling every child's pipes, writing whole
// tagged lines to the driver's descriptors 1 and 2.
#include "os/tagged_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace cg::detail {
namespace {

void close_fd(int& fd) noexcept {
  if (fd >= 0)
    ::close(std::exchange(fd, -1));
}

} // namespace

TaggedOutput::~TaggedOutput() { finish(Clock::now()); }

TaggedOutput::WriteEnds TaggedOutput::open_pipes() {
  abandon();
  int output[2];
  int error[2];
  if (::pipe2(output, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "cg: cannot make an actor's pipes");
  if (::pipe2(error, O_CLOEXEC) != 0) {
    const int code = errno;
    ::close(output[0]);
    ::close(output[1]);
    throw std::system_error(code, std::generic_category(), "cg: cannot make an actor's pipes");
  }
  opened_read_[0] = output[0];
  opened_read_[1] = error[0];
  opened_ = {output[1], error[1]};
  return opened_;
}

std::size_t TaggedOutput::adopt(const std::string& tag) {
  close_fd(opened_.output);
  close_fd(opened_.error);
  std::size_t child;
  {
    std::lock_guard lock(mutex_);
    child = last_words_.size();
    last_words_.emplace_back();
  }
  {
    std::lock_guard lock(streams_mutex_);
    for (int target = 1; target <= 2; ++target) {
      int& fd = opened_read_[target - 1];
      // Non-blocking: a drain reads what is there and returns.
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      streams_.push_back({std::exchange(fd, -1), target, "(" + tag + ") ", {}, child});
    }
  }
  if (wake_ >= 0) { // relaying already: poll the new pipes too
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wake_, &one, sizeof one);
  }
  return child;
}

std::string TaggedOutput::last_words(std::size_t child, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (child >= last_words_.size())
    return "";
  changed_.wait_until(lock, deadline, [&] { return last_words_[child].ended; });
  return last_words_[child].line;
}

void TaggedOutput::said(const Stream& stream, std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.remove_suffix(1);
  if (stream.target != 2 || line.empty())
    return;
  std::lock_guard lock(mutex_);
  last_words_[stream.child].line.assign(line.substr(0, 512));
}

void TaggedOutput::ended(const Stream& stream) {
  if (stream.target != 2)
    return;
  {
    std::lock_guard lock(mutex_);
    last_words_[stream.child].ended = true;
  }
  changed_.notify_all();
}

void TaggedOutput::abandon() noexcept {
  close_fd(opened_.output);
  close_fd(opened_.error);
  close_fd(opened_read_[0]);
  close_fd(opened_read_[1]);
}

void TaggedOutput::start() {
  if (streams_.empty() || thread_.joinable())
    return;
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0)
    throw std::system_error(errno, std::generic_category(), "cg: eventfd failed");
  deadline_.store(Clock::time_point::max().time_since_epoch().count());
  thread_ = std::thread([this] { serve(); });
}

void TaggedOutput::finish(Clock::time_point deadline) noexcept {
  abandon();
  if (thread_.joinable()) {
    deadline_.store(deadline.time_since_epoch().count());
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wake_, &one, sizeof one);
    thread_.join();
  } else {
    close_all(); // never started: only what the pipes hold already
  }
  close_fd(wake_);
}

void TaggedOutput::serve() noexcept {
  // A driver whose own output is closed gets EPIPE here, not SIGPIPE (a
  // signal write() raises goes to the thread that wrote).
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);

  std::vector<pollfd> fds;
  std::vector<Stream*> polled;
  for (;;) {
    fds.assign(1, {wake_, POLLIN, 0});
    polled.clear();
    {
      std::lock_guard lock(streams_mutex_);
      for (Stream& stream : streams_) {
        if (stream.fd >= 0) {
          fds.push_back({stream.fd, POLLIN, 0});
          polled.push_back(&stream);
        }
      }
    }
    const Clock::time_point deadline{Clock::duration{deadline_.load()}};
    // Every pipe ended: done once finish() was called; until then a
    // restarted child may still be adopted.
    if (polled.empty() && deadline != Clock::time_point::max())
      break;
    int timeout = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0)
        break;
      timeout = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 60'000));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      break;
    if (fds[0].revents != 0) {
      std::uint64_t count;
      [[maybe_unused]] auto read = ::read(wake_, &count, sizeof count);
    }
    for (std::size_t i = 0; i < polled.size(); ++i)
      if (fds[i + 1].revents != 0)
        drain(*polled[i]);
  }
  close_all();
}

bool TaggedOutput::drain(Stream& stream) noexcept {
  char buffer[64 * 1024];
  // At most 1 MiB a turn: one talkative actor cannot starve the others.
  for (int turn = 0; turn < 16; ++turn) {
    const ssize_t n = ::read(stream.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return true;
    if (n <= 0) { // the end (or a broken pipe): its last words, then close
      if (!stream.pending.empty())
        write_line(stream, std::exchange(stream.pending, {}));
      close_fd(stream.fd);
      ended(stream);
      return false;
    }
    try {
      stream.pending.append(buffer, static_cast<std::size_t>(n));
    } catch (...) {
      stream.pending.clear(); // out of memory: lose a line, not the driver
    }
    std::size_t begin = 0;
    for (;;) {
      const std::size_t newline = stream.pending.find('\n', begin);
      const std::size_t end = newline == std::string::npos ? stream.pending.size() : newline;
      if (newline == std::string::npos && end - begin < max_line)
        break;
      const std::size_t length = std::min(end - begin, max_line);
      write_line(stream, std::string_view(stream.pending).substr(begin, length));
      begin += length + (newline != std::string::npos && length == end - begin ? 1 : 0);
    }
    stream.pending.erase(0, begin);
  }
  return true;
}

void TaggedOutput::write_line(const Stream& stream, std::string_view line) noexcept {
  std::string out;
  try {
    said(stream, line);
    if (broken_[stream.target])
      return;
    out.reserve(stream.tag.size() + line.size() + 1);
    out.append(stream.tag).append(line).push_back('\n');
  } catch (...) {
    return;
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::write(stream.target, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) { // the driver made its own output non-blocking
      pollfd writable{stream.target, POLLOUT, 0};
      ::poll(&writable, 1, 100);
      continue;
    }
    if (n <= 0) {
      broken_[stream.target] = true;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

void TaggedOutput::close_all() noexcept {
  std::lock_guard lock(streams_mutex_);
  for (Stream& stream : streams_) {
    if (stream.fd >= 0 && drain(stream)) // still open: what it holds now
      close_fd(stream.fd);
    if (!stream.pending.empty())
      write_line(stream, std::exchange(stream.pending, {}));
    ended(stream);
  }
  streams_.clear();
}

} // namespace cg::detail
