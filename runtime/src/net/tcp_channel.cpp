// tcp_channel.cpp - TcpWriter and TcpReader: frames over a connected TCP socket.
//
// The writer sends header, payload and trailer with sendmsg() (a writev with
// MSG_NOSIGNAL), so the payload is never copied in user space, and computes
// the frame's checksum as it goes: each piece of a large payload just before
// the socket copies it, while the cache holds it (checksum_ahead). The reader
// receives into one buffer and delivers payloads in place. It reads ahead at
// most read_ahead bytes beyond the frame it needs (so pipelined small frames
// cost one recv() for many) but reads the rest of a large frame exactly into
// place, so the only bytes ever moved inside the buffer are that small
// read-ahead. The checksum is computed as bytes arrive, overlapping the wait
// for the rest of a large frame.
//
// A frame's checksum is checked before its kind and sequence number are
// believed: a corrupted sequence field is reported as the corruption it is,
// not as a lost frame. Magic, version and length have to be believed earlier
// (the length says how much to read), so they are checked first.
#include "net/tcp_channel.hpp"

#include "net/crc32c.hpp"
#include "net/frame.hpp"
#include "net/socket.hpp"
#include "shm/wait.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

namespace cg {

namespace {

using detail::frame_header_bytes;

constexpr std::size_t read_ahead = 64 * 1024;
// How far a writer's checksum runs ahead of what it has sent (see
// checksum_ahead): a piece the cache still holds when the socket copies it.
constexpr std::size_t checksum_ahead_bytes = 512 * 1024;
constexpr std::align_val_t buffer_alignment{64};

using ull = unsigned long long; // for printf

// GNU strerror_r returns the message (maybe not in the buffer); XSI returns 0.
[[maybe_unused]] const char* strerror_result(const char* message, const char*) noexcept {
  return message;
}
[[maybe_unused]] const char* strerror_result(int, const char* buffer) noexcept { return buffer; }

struct ErrnoText {
  explicit ErrnoText(int error_number) noexcept {
    text = strerror_result(strerror_r(error_number, buffer, sizeof buffer), buffer);
  }
  char buffer[96] = {};
  const char* text;
};

// The socket stays in blocking mode: every call that must not block says
// MSG_DONTWAIT, and a wait without a deadline is one blocking call instead of
// a poll() and another call (a round trip then costs no more system calls
// than plain blocking TCP). close()'s shutdown() wakes a blocked call.
void prepare_socket(int fd) noexcept {
  if (fd < 0)
    return;
  detail::set_blocking(fd);
  detail::set_nodelay(fd); // fails harmlessly on a socket that is not TCP
}

} // namespace

// ---- TcpWriter -------------------------------------------------------------

TcpWriter::TcpWriter(int fd, std::uint64_t max_payload, const detail::FrameKey& key) noexcept
    : fd_(fd), max_payload_(max_payload), key_(key) {
  prepare_socket(fd_);
}

TcpWriter::TcpWriter(TcpWriter&& other) noexcept { *this = std::move(other); }

TcpWriter& TcpWriter::operator=(TcpWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    max_payload_ = other.max_payload_;
    next_ = std::exchange(other.next_, 0);
    pending_ = std::exchange(other.pending_, false);
    std::memcpy(head_, other.head_, sizeof head_);
    payload_ = std::exchange(other.payload_, {});
    runs_ = std::exchange(other.runs_, {});
    done_ = std::exchange(other.done_, 0);
    key_ = std::exchange(other.key_, {});
    tag_ = other.tag_;
    crc_ = other.crc_;
    checked_ = std::exchange(other.checked_, 0);
    sealed_ = std::exchange(other.sealed_, false);
    std::memcpy(trailer_, other.trailer_, sizeof trailer_);
    broken_ = std::exchange(other.broken_, false);
    closing_.store(other.closing_.exchange(false));
    fault_ = std::exchange(other.fault_, FrameFault::none);
    std::memcpy(error_, other.error_, sizeof error_);
    other.error_[0] = '\0';
  }
  return *this;
}

TcpWriter::~TcpWriter() {
  if (fd_ >= 0)
    ::close(fd_);
}

int TcpWriter::release_fd() noexcept { return std::exchange(fd_, -1); }

void TcpWriter::close() noexcept {
  closing_.store(true, std::memory_order_release);
  // Frames already handed to the kernel still go out, followed by the FIN.
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR);
}

ChannelStatus TcpWriter::start(MessageKind kind, std::span<const std::byte> payload) noexcept {
  return start_borrowing(kind, payload, {});
}

ChannelStatus TcpWriter::start_borrowing(MessageKind kind, std::span<const std::byte> payload,
                                         std::span<const detail::BorrowedRun> runs) noexcept {
  if (fd_ < 0)
    return fail(ChannelStatus::closed, FrameFault::closed_locally, "the writer has no connection");
  if (const ChannelStatus refused = check_start(closing_.load(std::memory_order_acquire), next_,
                                                payload.size(), max_payload_);
      refused != ChannelStatus::ok)
    return refused;
  detail::FrameHeader header;
  header.kind = static_cast<std::uint16_t>(kind);
  header.sequence = next_;
  header.length = payload.size();
  detail::encode_frame_header(header, head_);
  payload_ = payload;
  runs_ = runs;
  done_ = 0;
  crc_ = detail::frame_header_checksum(head_);
  tag_.begin(key_, next_);
  tag_.update(head_, frame_header_bytes);
  checked_ = 0;
  sealed_ = false;
  pending_ = true;
  return push(Wait::no, Deadline::min());
}

ChannelStatus TcpWriter::finish(Deadline deadline) noexcept {
  return pending_ ? push(Wait::until_sent, deadline) : ChannelStatus::ok;
}

ChannelStatus TcpWriter::advance(Deadline until) noexcept {
  return pending_ ? push(Wait::until_sent_or_deadline, until) : ChannelStatus::ok;
}

// Calls `take(bytes, size)` for the pieces of the pending frame between
// frame offsets `from` and `to`: the header, the payload with its runs in
// their places, the trailer.
template <class Take>
void TcpWriter::for_each_piece(std::size_t from, std::size_t to, Take&& take) const noexcept {
  std::size_t at = 0; // the frame offset of the piece below
  auto piece = [&](const std::byte* bytes, std::size_t size) {
    const std::size_t begin = std::max(at, from), end = std::min(at + size, to);
    if (begin < end)
      take(bytes + (begin - at), end - begin);
    at += size;
  };
  piece(head_, frame_header_bytes);
  std::size_t payload_at = 0;
  for (const detail::BorrowedRun& run : runs_) {
    piece(payload_.data() + payload_at, run.offset - payload_at);
    piece(run.bytes, run.size);
    payload_at = run.offset + run.size;
  }
  piece(payload_.data() + payload_at, payload_.size() - payload_at);
  piece(trailer_, trailer_bytes());
}

// The checksum runs at most checksum_ahead_bytes of payload ahead of what
// has been sent (all of a smaller payload at once), and only what it covers
// may go: each piece is checksummed while it is in the cache, just before
// the socket copies it. The trailer is written once it covers the payload.
void TcpWriter::checksum_ahead() noexcept {
  if (sealed_)
    return;
  const std::size_t target = std::min(payload_.size(), payload_sent() + checksum_ahead_bytes);
  if (target > checked_) {
    for_each_piece(frame_header_bytes + checked_, frame_header_bytes + target,
                   [&](const std::byte* bytes, std::size_t size) {
                     crc_ = detail::crc32c(crc_, bytes, size);
                     tag_.update(bytes, size);
                   });
    checked_ = target;
  }
  if (checked_ == payload_.size()) {
    detail::encode_frame_trailer(crc_, trailer_);
    if (key_.set())
      tag_.finish(trailer_ + detail::frame_trailer_bytes);
    sealed_ = true;
  }
}

// Sends what is left of the pending frame: what the socket takes now, or,
// if `wait`, all of it by `deadline` (without one, blocked in sendmsg itself;
// until_sent_or_deadline: a deadline that passes leaves the frame pending).
ChannelStatus TcpWriter::push(Wait wait, Deadline deadline) noexcept {
  const std::size_t total = frame_header_bytes + payload_.size() + trailer_bytes();
  // As a reader does (TcpReader::fill): when the socket is full, look again,
  // yielding the CPU, before sleeping; a sleeping sender's wake-up for each
  // freed window costs a large transfer its pace where an idle CPU halts.
  const int looks_after_progress =
      wait != Wait::no && deadline != Deadline::min() ? detail::kYields : 0;
  int looks = looks_after_progress;
  int flags = MSG_NOSIGNAL | MSG_DONTWAIT;
  while (done_ < total) {
    checksum_ahead();
    iovec iov[2 * detail::BorrowedRuns::capacity + 3];
    msghdr message{};
    message.msg_iov = iov;
    const std::size_t sendable = frame_header_bytes + checked_ + (sealed_ ? trailer_bytes() : 0);
    for_each_piece(done_, sendable, [&](const std::byte* bytes, std::size_t size) {
      iov[message.msg_iovlen++] = {const_cast<std::byte*>(bytes), size};
    });
    const ssize_t n = ::sendmsg(fd_, &message, flags);
    if (n > 0) {
      done_ += static_cast<std::size_t>(n);
      looks = looks_after_progress;
      flags = MSG_NOSIGNAL | MSG_DONTWAIT;
      continue;
    }
    const int e = errno;
    if (e == EINTR)
      continue;
    if (closing_.load(std::memory_order_acquire)) {
      return fail(ChannelStatus::closed, FrameFault::closed_locally,
                  "frame %llu: the stream was closed locally after %zu of its %zu bytes were sent",
                  static_cast<ull>(next_), done_, total);
    }
    if (e == EAGAIN || e == EWOULDBLOCK) {
      if (wait == Wait::no)
        return ChannelStatus::ok; // pending: finish() sends the rest
      if (detail::look_yielding(fd_, POLLOUT, looks))
        continue;
      if (deadline == Deadline::max()) {
        flags = MSG_NOSIGNAL; // wait inside sendmsg itself
        continue;
      }
      const int ready = detail::wait_fd(fd_, POLLOUT, deadline);
      if (ready == 0 && wait == Wait::until_sent_or_deadline)
        return ChannelStatus::ok; // still pending, the stream intact
      if (ready == 0 && done_ == 0) {
        return fail(ChannelStatus::timeout, FrameFault::none,
                    "frame %llu: not sent before the deadline", static_cast<ull>(next_));
      }
      if (ready == 0) {
        ::shutdown(fd_,
                   SHUT_RDWR); // the reader must not take what follows for the rest of this frame
        return fail(ChannelStatus::timeout, FrameFault::send_timeout,
                    "frame %llu: the deadline passed after %zu of its %zu bytes were sent; the "
                    "stream is shut down",
                    static_cast<ull>(next_), done_, total);
      }
      if (ready < 0 && errno != EINTR) {
        const ErrnoText why(errno);
        return fail(ChannelStatus::closed, FrameFault::connection_error,
                    "frame %llu: poll failed: %s", static_cast<ull>(next_), why.text);
      }
      continue;
    }
    const ErrnoText why(e);
    if (e == EPIPE || e == ECONNRESET) {
      return fail(
          ChannelStatus::closed, FrameFault::peer_closed,
          "frame %llu: the peer closed the connection (%s) after %zu of its %zu bytes were sent",
          static_cast<ull>(next_), why.text, done_, total);
    }
    return fail(ChannelStatus::closed, FrameFault::connection_error, "frame %llu: send failed: %s",
                static_cast<ull>(next_), why.text);
  }
  pending_ = false;
  runs_ = {};
  ++next_;
  return ChannelStatus::ok;
}

// ---- TcpReader -------------------------------------------------------------

TcpReader::TcpReader(int fd, std::uint64_t max_payload, const detail::FrameKey& key) noexcept
    : fd_(fd), max_payload_(max_payload), key_(key) {
  prepare_socket(fd_);
}

TcpReader::TcpReader(TcpReader&& other) noexcept { *this = std::move(other); }

TcpReader& TcpReader::operator=(TcpReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    if (buffer_ != nullptr)
      ::operator delete[](buffer_, buffer_alignment);
    fd_ = std::exchange(other.fd_, -1);
    max_payload_ = other.max_payload_;
    next_ = std::exchange(other.next_, 0);
    closing_.store(other.closing_.exchange(false));
    failed_ = std::exchange(other.failed_, ChannelStatus::ok);
    fault_ = std::exchange(other.fault_, FrameFault::none);
    std::memcpy(error_, other.error_, sizeof error_);
    other.error_[0] = '\0';
    buffer_ = std::exchange(other.buffer_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    begin_ = std::exchange(other.begin_, 0);
    end_ = std::exchange(other.end_, 0);
    have_header_ = std::exchange(other.have_header_, false);
    frame_bytes_ = std::exchange(other.frame_bytes_, 0);
    crc_ = std::exchange(other.crc_, 0);
    crc_bytes_ = std::exchange(other.crc_bytes_, 0);
    key_ = std::exchange(other.key_, {});
    tag_ = other.tag_;
  }
  return *this;
}

TcpReader::~TcpReader() {
  if (fd_ >= 0)
    ::close(fd_);
  if (buffer_ != nullptr)
    ::operator delete[](buffer_, buffer_alignment);
}

int TcpReader::release_fd() noexcept { return std::exchange(fd_, -1); }

void TcpReader::close() noexcept {
  closing_.store(true, std::memory_order_release);
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR); // wakes a receive() blocked in poll() or recv()
}

bool TcpReader::make_room(std::size_t frame_bytes) noexcept {
  const std::size_t pending = end_ - begin_;
  if (buffer_ != nullptr && frame_bytes <= capacity_) {
    std::memmove(buffer_, buffer_ + begin_, pending);
  } else {
    const std::size_t capacity = detail::receive_buffer_capacity(frame_bytes, capacity_);
    auto* fresh =
        capacity == 0
            ? nullptr
            : static_cast<std::byte*>(::operator new[](capacity, buffer_alignment, std::nothrow));
    if (fresh == nullptr)
      return false;
    if (pending > 0)
      std::memcpy(fresh, buffer_ + begin_, pending);
    if (buffer_ != nullptr)
      ::operator delete[](buffer_, buffer_alignment);
    buffer_ = fresh;
    capacity_ = capacity;
  }
  begin_ = 0;
  end_ = pending;
  return true;
}

void TcpReader::advance_checksum() noexcept {
  const std::size_t available = std::min(end_ - begin_, frame_bytes_ - trailer_bytes());
  if (available > crc_bytes_) {
    crc_ = detail::crc32c(crc_, buffer_ + begin_ + crc_bytes_, available - crc_bytes_);
    tag_.update(buffer_ + begin_ + crc_bytes_, available - crc_bytes_);
    crc_bytes_ = available;
  }
}

ChannelStatus TcpReader::fill(std::size_t frame_bytes, Deadline deadline) noexcept {
  if (end_ - begin_ >= frame_bytes)
    return ChannelStatus::ok;
  if (begin_ + frame_bytes > capacity_ && !make_room(frame_bytes)) {
    return fail(ChannelStatus::too_large, FrameFault::no_memory,
                "frame %llu: no memory for a buffer of %zu bytes", static_cast<ull>(next_),
                frame_bytes);
  }
  // Look again, yielding the CPU in between, before sleeping (as the rings
  // do, shm/wait.hpp): a sleeping thread's wake-up costs more than a round
  // trip between hosts, more still where an idle CPU halts (a VM). Then,
  // without a deadline, wait inside recv itself (one system call per wake-up).
  int looks = deadline == Deadline::min() ? 0 : detail::kYields;
  int flags = MSG_DONTWAIT;
  for (;;) {
    const std::size_t target = begin_ + frame_bytes;
    // Read ahead a little for small frames; read a large rest exactly in place.
    const std::size_t limit = target - end_ >= read_ahead
                                  ? target
                                  : std::min(capacity_, std::max(target, end_ + read_ahead));
    const ssize_t n = ::recv(fd_, buffer_ + end_, limit - end_, flags);
    if (n > 0) {
      end_ += static_cast<std::size_t>(n);
      // Only a pause in what arrives, not a long frame, ends the looking.
      looks = deadline == Deadline::min() ? 0 : detail::kYields;
      flags = MSG_DONTWAIT;
      if (have_header_)
        advance_checksum();
      if (end_ - begin_ >= frame_bytes)
        return ChannelStatus::ok;
      continue;
    }
    const int e = n == 0 ? 0 : errno;
    if (e == EINTR)
      continue;
    if (closing_.load(std::memory_order_acquire)) {
      return fail(ChannelStatus::closed, FrameFault::closed_locally,
                  "the stream was closed locally after %llu frames", static_cast<ull>(next_));
    }
    if (n == 0 && end_ == begin_) {
      return fail(ChannelStatus::closed, FrameFault::peer_closed,
                  "the peer closed the connection after %llu frames", static_cast<ull>(next_));
    }
    if (n == 0 && have_header_) {
      return fail(ChannelStatus::closed, FrameFault::truncated,
                  "the peer closed the connection inside frame %llu, after %zu of its %zu bytes",
                  static_cast<ull>(next_), end_ - begin_, frame_bytes_);
    }
    if (n == 0) {
      return fail(
          ChannelStatus::closed, FrameFault::truncated,
          "the peer closed the connection inside frame %llu, after %zu of its %zu header bytes",
          static_cast<ull>(next_), end_ - begin_, frame_header_bytes);
    }
    if (e == EAGAIN || e == EWOULDBLOCK) {
      // Looking is poll(), not recv(): a recv() takes the socket's lock, which
      // a send on the same connection (the returning channel's) holds while
      // it copies.
      if (detail::look_yielding(fd_, POLLIN, looks))
        continue;
      if (deadline == Deadline::max()) {
        flags = 0;
        continue;
      }
      const int ready = detail::wait_fd(fd_, POLLIN, deadline);
      if (ready == 0)
        return ChannelStatus::timeout; // what arrived so far is kept for the next call
      if (ready < 0 && errno != EINTR) {
        const ErrnoText why(errno);
        return fail(ChannelStatus::closed, FrameFault::connection_error,
                    "frame %llu: poll failed: %s", static_cast<ull>(next_), why.text);
      }
      continue;
    }
    const ErrnoText why(e);
    return fail(ChannelStatus::closed, FrameFault::connection_error,
                "frame %llu: receive failed: %s", static_cast<ull>(next_), why.text);
  }
}

ChannelStatus TcpReader::check_header() noexcept {
  const detail::FrameHeader header = detail::decode_frame_header(buffer_ + begin_);
  if (const FrameFault fault = detail::check_frame_start(
          header, detail::header_checksum_of(buffer_ + begin_), next_, max_payload_, error_);
      fault != FrameFault::none)
    return fail(ChannelStatus::corrupt, fault);
  have_header_ = true;
  frame_bytes_ = frame_header_bytes + static_cast<std::size_t>(header.length) + trailer_bytes();
  crc_ = detail::frame_header_checksum(buffer_ + begin_);
  crc_bytes_ = frame_header_bytes;
  // Under the key of the place this reader expects, whatever the header
  // says: a frame out of place fails its tag (net/frame_auth.hpp).
  tag_.begin(key_, next_);
  tag_.update(buffer_ + begin_, frame_header_bytes);
  return ChannelStatus::ok;
}

ChannelStatus TcpReader::receive(Message& message, Deadline deadline) noexcept {
  if (failed_ != ChannelStatus::ok)
    return failed_; // error_ still says why
  if (fd_ < 0)
    return fail(ChannelStatus::closed, FrameFault::closed_locally, "the reader has no connection");
  if (closing_.load(std::memory_order_acquire)) {
    return fail(ChannelStatus::closed, FrameFault::closed_locally,
                "the stream was closed locally after %llu frames", static_cast<ull>(next_));
  }
  if (!have_header_) {
    if (const ChannelStatus s = fill(frame_header_bytes, deadline); s != ChannelStatus::ok)
      return s;
    if (const ChannelStatus s = check_header(); s != ChannelStatus::ok)
      return s;
  }
  if (const ChannelStatus s = fill(frame_bytes_, deadline); s != ChannelStatus::ok)
    return s;
  advance_checksum();

  const detail::FrameHeader header = detail::decode_frame_header(buffer_ + begin_);
  const std::byte* trailer = buffer_ + begin_ + frame_bytes_ - trailer_bytes();
  const std::uint32_t carried = detail::decode_frame_trailer(trailer);
  if (const FrameFault fault = detail::check_frame_end(
          header, crc_, carried, frame_bytes_ - trailer_bytes(), next_, error_);
      fault != FrameFault::none)
    return fail(ChannelStatus::corrupt, fault);
  if (key_.set()) {
    std::byte tag[detail::frame_tag_bytes];
    tag_.finish(tag);
    if (const FrameFault fault =
            detail::check_frame_tag(tag, trailer + detail::frame_trailer_bytes, next_, error_);
        fault != FrameFault::none)
      return fail(ChannelStatus::corrupt, fault);
  }

  message.kind = static_cast<MessageKind>(header.kind);
  message.payload =
      std::span<const std::byte>(buffer_ + begin_ + frame_header_bytes, header.length);
  message.sequence = next_;
  message.paging = nullptr; // our own receive buffer: it stays mapped
  begin_ += frame_bytes_;
  if (begin_ == end_)
    begin_ = end_ = 0; // the next frame starts at the front (nothing is written before then)
  have_header_ = false;
  ++next_;
  return ChannelStatus::ok;
}

} // namespace cg
