// ucx_channel.cpp - UcxWriter and UcxReader: frames over UCP tag messages.
//
// One UCP context per process (made on first use, honouring UCX_* variables),
// one worker per stream end. Waiting follows UCX's own recipe: progress the
// worker a little while (a frame is often there within microseconds), then
// arm it and poll() its event descriptor together with the control
// connection, so that a peer that goes away, or close() from another thread,
// wakes the wait as promptly as a frame does.
#include "net/ucx_channel.hpp"

#include "net/crc32c.hpp"
#include "shm/wait.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <utility>

namespace cg::detail {
namespace {

using ull = unsigned long long; // for printf

constexpr std::uint32_t offer_magic = 0x58554743u; // "CGUX" as little-endian bytes
constexpr std::uint32_t max_address_bytes = 64 * 1024;
// The place in the stream whose key tags the offer: one no frame reaches.
constexpr std::uint64_t offer_place = ~std::uint64_t{0};

// The offer's tag under the control connection's key (zeros without one).
void offer_tag(const FrameKey& key, const std::byte* offer, std::size_t size,
               std::byte* tag) noexcept {
  FrameTag t;
  t.begin(key, offer_place);
  t.update(offer, size);
  t.finish(tag);
}
// Progress calls before a wait sleeps, the CPU yielded between them (as the
// rings do, shm/wait.hpp): a sleeping thread's wake-up costs more than a
// round trip between hosts, more still where an idle CPU halts (a VM).
constexpr int spin_progress_calls = kYields;
// Progress calls a start() makes for a send UCX did not finish at once,
// before leaving it pending (to a relay's finish()).
constexpr int start_progress_calls = 4;
constexpr std::align_val_t buffer_alignment{64};
constexpr auto close_grace = std::chrono::seconds(1); // for the last frames at a clean close

struct Context {
  ucp_context_h handle = nullptr;
  std::string error;
};

Context make_context() {
  Context c;
  ucp_config_t* config = nullptr;
  if (ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
    c.error = std::string("cannot read UCX's configuration: ") + ucs_status_string(s);
    return c;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  if (ucs_status_t s = ucp_init(&params, config, &c.handle); s != UCS_OK)
    c.error = std::string("cannot initialise UCX: ") + ucs_status_string(s);
  ucp_config_release(config);
  return c;
}

// The process's UCP context (tag messages and wake-up events; workers of
// different threads share it), made on first use. UCX lists the network
// devices when it makes a context, so a process that has moved to another
// network namespace since (as the two-host tests do) gets a new one; the old
// one stays, for the workers that may still use it.
const Context& context() {
  static std::mutex mutex;
  static std::map<std::string, Context> by_namespace;
  char link[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/net", link, sizeof link - 1);
  const std::string here = n > 0 ? std::string(link, static_cast<std::size_t>(n)) : "";
  std::lock_guard lock(mutex);
  auto found = by_namespace.find(here);
  if (found == by_namespace.end())
    found = by_namespace.emplace(here, make_context()).first;
  return found->second;
}

// Why UcxEnd::wait() returned.
enum class Wake { again, timeout, hung_up, closing };

} // namespace

// A worker of its own, its event descriptor, and the stream's control connection.
class UcxEnd {
public:
  static std::unique_ptr<UcxEnd> make(UniqueFd control, std::string& error) {
    const Context& c = context();
    if (c.handle == nullptr) {
      error = c.error;
      return nullptr;
    }
    auto end = std::unique_ptr<UcxEnd>(new UcxEnd);
    end->control_ = std::move(control);
    ucp_worker_params_t params{};
    params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_EVENTS;
    // Serialized, not single: a writer's worker is used by the thread that
    // writes the ring and by its relay, one at a time (net/scale_out.cpp).
    params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    params.events = UCP_WAKEUP_TAG_SEND | UCP_WAKEUP_TAG_RECV | UCP_WAKEUP_TX | UCP_WAKEUP_RX;
    if (ucs_status_t s = ucp_worker_create(c.handle, &params, &end->worker_); s != UCS_OK) {
      error = std::string("cannot make a UCX worker: ") + ucs_status_string(s);
      return nullptr;
    }
    if (ucs_status_t s = ucp_worker_get_efd(end->worker_, &end->efd_); s != UCS_OK) {
      error = std::string("cannot get the UCX worker's event descriptor: ") + ucs_status_string(s);
      return nullptr;
    }
    return end;
  }

  ~UcxEnd() {
    if (worker_ != nullptr)
      ucp_worker_destroy(worker_);
  }

  ucp_worker_h worker() const noexcept { return worker_; }
  int control() const noexcept { return control_.get(); }
  bool closing() const noexcept { return closing_.load(std::memory_order_acquire); }

  // Any thread: wakes the owner's wait (through the control connection, which
  // the peer then sees closed too).
  void close() noexcept {
    closing_.store(true, std::memory_order_release);
    if (control_)
      ::shutdown(control_.get(), SHUT_RDWR);
  }

  // Progresses the worker until something happened (again: the caller checks
  // its condition), the deadline passed, the control connection hung up, or
  // close() was called.
  Wake wait(Deadline deadline) noexcept {
    const int looks = deadline == Deadline::min() ? 1 : spin_progress_calls;
    for (int i = 0; i < looks; ++i) {
      if (ucp_worker_progress(worker_) != 0)
        return Wake::again;
      if (closing())
        return Wake::closing;
      if (i + 1 < looks)
        sched_yield();
    }
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY)
      return Wake::again; // events arrived meanwhile
    pollfd fds[2] = {{efd_, POLLIN, 0}, {control_.get(), POLLIN | POLLRDHUP, 0}};
    const int timeout = deadline == Deadline::max() ? -1 : milliseconds_until(deadline);
    const int ready = ::poll(fds, 2, timeout);
    if (closing())
      return Wake::closing;
    if (ready > 0 && fds[1].revents != 0)
      return Wake::hung_up; // the peer sends nothing on it: readable means gone
    if (ready == 0 && std::chrono::steady_clock::now() >= deadline)
      return Wake::timeout;
    return Wake::again;
  }

  // Progresses the worker at most `calls` times, without waiting, until
  // `request` (a pending one) is done: true if it is (finish() then takes it
  // at once). A send that is not done at once is often waiting for the
  // worker itself, such as the replies that complete the endpoint's wire-up.
  bool progress_until_done(void* request, int calls) noexcept {
    for (int i = 0; i < calls; ++i) {
      if (ucp_request_check_status(request) != UCS_INPROGRESS)
        return true;
      ucp_worker_progress(worker_);
    }
    return ucp_request_check_status(request) != UCS_INPROGRESS;
  }

  // Waits for `request` (null: it completed at once) and frees it. Returns
  // UCS_INPROGRESS when the wait ended first (`why` says how; the request is
  // then left to the worker's destruction).
  ucs_status_t finish(void* request, Deadline deadline, Wake& why) noexcept {
    if (request == nullptr)
      return UCS_OK;
    if (UCS_PTR_IS_ERR(request))
      return UCS_PTR_STATUS(request);
    for (;;) {
      const ucs_status_t s = ucp_request_check_status(request);
      if (s != UCS_INPROGRESS) {
        ucp_request_free(request);
        return s;
      }
      why = wait(deadline);
      if (why != Wake::again)
        return UCS_INPROGRESS;
    }
  }

private:
  UcxEnd() = default;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;
  UniqueFd control_;
  std::atomic<bool> closing_{false};
};

std::string ucx_version() { return std::string("UCX ") + ucp_get_version_string(); }

// ---- UcxWriter --------------------------------------------------------------

std::unique_ptr<UcxWriter> UcxWriter::connect(TcpWriter control, Deadline deadline,
                                              std::string& error, std::uint64_t max_payload) {
  const FrameKey key = control.key();
  UniqueFd fd(control.release_fd());
  std::byte head[16];
  if (receive_exact(fd.get(), head, sizeof head, deadline, error) != NetStatus::ok) {
    error = "UCX stream: no worker address from the reader: " + error;
    return nullptr;
  }
  std::uint32_t magic = 0, length = 0;
  std::uint64_t tag = 0;
  std::memcpy(&magic, head, 4);
  std::memcpy(&length, head + 4, 4);
  std::memcpy(&tag, head + 8, 8);
  if (magic != offer_magic || length == 0 || length > max_address_bytes) {
    error = "UCX stream: the reader's offer is malformed (is it built without UCX, or with "
            "CG_HOST_TRANSPORT=tcp?)";
    return nullptr;
  }
  std::string address(length, '\0');
  if (receive_exact(fd.get(), address.data(), length, deadline, error) != NetStatus::ok) {
    error = "UCX stream: the reader's worker address was cut short: " + error;
    return nullptr;
  }
  if (key.set()) {
    std::byte carried[frame_tag_bytes], computed[frame_tag_bytes];
    if (receive_exact(fd.get(), carried, sizeof carried, deadline, error) != NetStatus::ok) {
      error = "UCX stream: the reader's offer came without its tag: " + error;
      return nullptr;
    }
    FrameTag t;
    t.begin(key, offer_place);
    t.update(head, sizeof head);
    t.update(reinterpret_cast<const std::byte*>(address.data()), address.size());
    t.finish(computed);
    if (!tags_equal(computed, carried)) {
      error = "UCX stream: authentication failed: the reader's offer does not match its tag "
              "(rewritten on the way, or not sent by the peer that proved the launch's secret)";
      return nullptr;
    }
  }
  auto writer = std::unique_ptr<UcxWriter>(new UcxWriter);
  writer->end_ = UcxEnd::make(std::move(fd), error);
  if (!writer->end_)
    return nullptr;
  writer->tag_ = tag;
  writer->key_ = key;
  writer->max_payload_ = max_payload;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER; // a dead peer fails requests instead of hanging
  params.err_handler.cb = [](void*, ucp_ep_h, ucs_status_t) {}; // the requests say why
  params.err_handler.arg = nullptr;
  ucp_ep_h endpoint = nullptr;
  if (ucs_status_t s = ucp_ep_create(writer->end_->worker(), &params, &endpoint); s != UCS_OK) {
    error = std::string("UCX stream: cannot reach the reader's worker: ") + ucs_status_string(s);
    return nullptr;
  }
  writer->endpoint_ = endpoint;
  return writer;
}

UcxWriter::~UcxWriter() {
  if (endpoint_ == nullptr)
    return;
  // A clean end lets the frames already sent reach the reader before the
  // control connection closes; a broken one does not wait.
  ucp_request_param_t param{};
  if (broken_ || end_->closing()) {
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  }
  Wake why = Wake::again;
  void* request = ucp_ep_close_nbx(static_cast<ucp_ep_h>(endpoint_), &param);
  end_->finish(request, std::chrono::steady_clock::now() + close_grace, why);
}

void UcxWriter::close() noexcept { end_->close(); }

ChannelStatus UcxWriter::start(MessageKind kind, std::span<const std::byte> payload) noexcept {
  if (const ChannelStatus refused =
          check_start(end_->closing(), next_, payload.size(), max_payload_);
      refused != ChannelStatus::ok)
    return refused;
  FrameHeader header;
  header.kind = static_cast<std::uint16_t>(kind);
  header.sequence = next_;
  header.length = payload.size();
  encode_frame_header(header, head_);
  // UCX sends a message whole, so its checksum comes first here (on two
  // threads for a large one), whatever the trailer's place.
  encode_frame_trailer(frame_checksum(header, payload), trailer_);
  if (key_.set())
    frame_tag(key_, next_, head_, payload.data(), payload.size(), trailer_ + frame_trailer_bytes);

  // Header, payload and trailer as one message, gathered by UCX: the payload
  // is not copied here.
  std::size_t count = 3;
  const std::size_t trailer = trailer_bytes();
  if (payload.size() <= sizeof small_ - frame_header_bytes - trailer) {
    // A small frame is copied whole: one contiguous message goes out faster
    // than a gathered one, and the copy costs less than the difference.
    std::memcpy(small_, head_, frame_header_bytes);
    if (!payload.empty())
      std::memcpy(small_ + frame_header_bytes, payload.data(), payload.size());
    std::memcpy(small_ + frame_header_bytes + payload.size(), trailer_, trailer);
    pieces_[0] = {small_, frame_header_bytes + payload.size() + trailer};
    count = 1;
  } else {
    pieces_[0] = {head_, frame_header_bytes};
    pieces_[1] = {payload.data(), payload.size()};
    pieces_[2] = {trailer_, trailer};
  }
  return start_pieces(count, true);
}

ChannelStatus UcxWriter::send_forged(std::span<const std::byte> frame, Deadline deadline) noexcept {
  if (broken_)
    return ChannelStatus::closed;
  pieces_[0] = {frame.data(), frame.size()};
  const ChannelStatus status = start_pieces(1, false);
  return status == ChannelStatus::ok ? finish(deadline) : status;
}

// Hands the first `count` pieces to UCX as one tagged message; a frame
// `counted` takes the next sequence number once UCX is done with it.
ChannelStatus UcxWriter::start_pieces(std::size_t count, bool counted) noexcept {
  static_assert(sizeof(Piece) == sizeof(ucp_dt_iov_t) &&
                offsetof(Piece, buffer) == offsetof(ucp_dt_iov_t, buffer) &&
                offsetof(Piece, length) == offsetof(ucp_dt_iov_t, length));
  ucp_request_param_t param{};
  if (count == 1) { // contiguous bytes: UCX's fastest (inline) path for a small frame
    request_ = ucp_tag_send_nbx(static_cast<ucp_ep_h>(endpoint_), pieces_[0].buffer,
                                pieces_[0].length, tag_, &param);
  } else {
    param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_iov();
    request_ = ucp_tag_send_nbx(static_cast<ucp_ep_h>(endpoint_), pieces_, count, tag_, &param);
  }
  counted_ = counted;
  pending_ = true;
  // Done at once (null), failed at once, or done after a little progress:
  // settled without waiting.
  if (request_ == nullptr || UCS_PTR_IS_ERR(request_) ||
      end_->progress_until_done(request_, start_progress_calls))
    return finish(Deadline::min());
  return ChannelStatus::ok;
}

// Waits until UCX is done with the pending frame's pieces.
ChannelStatus UcxWriter::finish(Deadline deadline) noexcept {
  if (!pending_)
    return ChannelStatus::ok;
  Wake why = Wake::again;
  const ucs_status_t s = end_->finish(std::exchange(request_, nullptr), deadline, why);
  if (s == UCS_INPROGRESS) {
    switch (why) {
    case Wake::closing:
      return fail(ChannelStatus::closed, FrameFault::closed_locally,
                  "frame %llu: the stream was closed locally while it was being sent",
                  static_cast<ull>(next_));
    case Wake::hung_up:
      return fail(ChannelStatus::closed, FrameFault::peer_closed,
                  "frame %llu: the reader closed the stream while it was being sent",
                  static_cast<ull>(next_));
    default:
      return fail(ChannelStatus::closed, FrameFault::send_timeout,
                  "frame %llu: the deadline passed while UCX was sending it; the stream is "
                  "broken (a send cannot be taken back)",
                  static_cast<ull>(next_));
    }
  }
  if (s != UCS_OK) {
    return fail(ChannelStatus::closed,
                s == UCS_ERR_CONNECTION_RESET || s == UCS_ERR_ENDPOINT_TIMEOUT
                    ? FrameFault::peer_closed
                    : FrameFault::connection_error,
                "frame %llu: UCX could not send it: %s", static_cast<ull>(next_),
                ucs_status_string(s));
  }
  pending_ = false;
  if (counted_)
    ++next_;
  return ChannelStatus::ok;
}

// ---- UcxReader --------------------------------------------------------------

std::unique_ptr<UcxReader> UcxReader::offer(TcpReader control, Deadline deadline,
                                            std::string& error, std::uint64_t max_payload) {
  const FrameKey key = control.key();
  UniqueFd fd(control.release_fd());
  const int control_fd = fd.get();
  auto reader = std::unique_ptr<UcxReader>(new UcxReader);
  reader->end_ = UcxEnd::make(std::move(fd), error);
  if (!reader->end_)
    return nullptr;
  reader->max_payload_ = max_payload;
  reader->key_ = key;
  if (::getrandom(&reader->tag_, sizeof reader->tag_, 0) != sizeof reader->tag_) {
    error = "UCX stream: no random bytes for its tag";
    return nullptr;
  }
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  if (ucs_status_t s = ucp_worker_get_address(reader->end_->worker(), &address, &length);
      s != UCS_OK) {
    error = std::string("UCX stream: the worker has no address: ") + ucs_status_string(s);
    return nullptr;
  }
  std::string message(16 + length, '\0');
  const auto length32 = static_cast<std::uint32_t>(length);
  std::memcpy(message.data(), &offer_magic, 4);
  std::memcpy(message.data() + 4, &length32, 4);
  std::memcpy(message.data() + 8, &reader->tag_, 8);
  std::memcpy(message.data() + 16, address, length);
  ucp_worker_release_address(reader->end_->worker(), address);
  if (key.set()) {
    std::byte tag[frame_tag_bytes];
    offer_tag(key, reinterpret_cast<const std::byte*>(message.data()), message.size(), tag);
    message.append(reinterpret_cast<const char*>(tag), sizeof tag);
  }
  if (send_all(control_fd, message.data(), message.size(), deadline, error) != NetStatus::ok) {
    error = "UCX stream: cannot send the worker address to the writer: " + error;
    return nullptr;
  }
  return reader;
}

UcxReader::~UcxReader() {
  if (buffer_ != nullptr)
    ::operator delete[](buffer_, buffer_alignment);
}

void UcxReader::close() noexcept { end_->close(); }

ChannelStatus UcxReader::receive(Message& message, Deadline deadline) noexcept {
  if (failed_ != ChannelStatus::ok)
    return failed_; // error_ still says why
  bool writer_gone = false;
  for (;;) {
    if (end_->closing()) {
      return fail(ChannelStatus::closed, FrameFault::closed_locally,
                  "the stream was closed locally after %llu frames", static_cast<ull>(next_));
    }
    ucp_tag_recv_info_t info{};
    if (ucp_tag_message_h m = ucp_tag_probe_nb(end_->worker(), tag_, ~ucp_tag_t{0}, 1, &info)) {
      const ChannelStatus s = take(m, info.length);
      if (s != ChannelStatus::ok)
        return s;
      const FrameHeader header = decode_frame_header(buffer_);
      message.kind = static_cast<MessageKind>(header.kind);
      message.payload = std::span<const std::byte>(buffer_ + frame_header_bytes, header.length);
      message.sequence = next_++;
      message.paging = nullptr; // our own receive buffer: it stays mapped
      return ChannelStatus::ok;
    }
    if (writer_gone) {
      // Frames the writer sent before it closed are delivered first.
      if (ucp_worker_progress(end_->worker()) != 0)
        continue;
      return fail(ChannelStatus::closed, FrameFault::peer_closed,
                  "the peer closed the connection after %llu frames", static_cast<ull>(next_));
    }
    switch (end_->wait(deadline)) {
    case Wake::again:
      break;
    case Wake::timeout:
      return ChannelStatus::timeout;
    case Wake::hung_up:
      writer_gone = true;
      break;
    case Wake::closing:
      break; // said at the top
    }
  }
}

// Receives the probed message `m` of `bytes` bytes whole, and checks it.
ChannelStatus UcxReader::take(void* m, std::size_t bytes) noexcept {
  const std::size_t framing = frame_header_bytes + trailer_bytes();
  if (bytes < framing) {
    return fail(ChannelStatus::corrupt, FrameFault::bad_header,
                "frame %llu: a message of %zu bytes, shorter than a frame's header and trailer",
                static_cast<ull>(next_), bytes);
  }
  if (bytes - framing > max_payload_) {
    return fail(ChannelStatus::corrupt, FrameFault::too_large,
                "frame %llu: payload of %zu bytes exceeds the limit of %llu",
                static_cast<ull>(next_), bytes - framing, static_cast<ull>(max_payload_));
  }
  if (bytes > capacity_) {
    const std::size_t capacity = receive_buffer_capacity(bytes, capacity_);
    auto* fresh =
        capacity == 0
            ? nullptr
            : static_cast<std::byte*>(::operator new[](capacity, buffer_alignment, std::nothrow));
    if (fresh == nullptr) {
      return fail(ChannelStatus::too_large, FrameFault::no_memory,
                  "frame %llu: no memory for a buffer of %zu bytes", static_cast<ull>(next_),
                  bytes);
    }
    if (buffer_ != nullptr)
      ::operator delete[](buffer_, buffer_alignment);
    buffer_ = fresh;
    capacity_ = capacity;
  }
  ucp_request_param_t param{};
  void* request = ucp_tag_msg_recv_nbx(end_->worker(), buffer_, bytes,
                                       static_cast<ucp_tag_message_h>(m), &param);
  // A frame begun is received whole: only the writer's going away, or
  // close(), ends the wait.
  Wake why = Wake::again;
  const ucs_status_t s = end_->finish(request, Deadline::max(), why);
  if (s == UCS_INPROGRESS && why == Wake::closing) {
    return fail(ChannelStatus::closed, FrameFault::closed_locally,
                "the stream was closed locally inside frame %llu", static_cast<ull>(next_));
  }
  if (s == UCS_INPROGRESS) {
    return fail(ChannelStatus::closed, FrameFault::truncated,
                "the peer closed the connection inside frame %llu, of %zu bytes",
                static_cast<ull>(next_), bytes);
  }
  if (s != UCS_OK) {
    return fail(ChannelStatus::closed, FrameFault::connection_error,
                "frame %llu: UCX could not receive it: %s", static_cast<ull>(next_),
                ucs_status_string(s));
  }
  const FrameHeader header = decode_frame_header(buffer_);
  if (const FrameFault f =
          check_frame_start(header, header_checksum_of(buffer_), next_, max_payload_, error_);
      f != FrameFault::none)
    return fail(ChannelStatus::corrupt, f);
  if (header.length != bytes - framing) {
    return fail(ChannelStatus::corrupt, FrameFault::bad_header,
                "frame %llu: the header says %llu payload bytes, the message carried %zu",
                static_cast<ull>(next_), static_cast<ull>(header.length), bytes - framing);
  }
  const std::uint32_t crc =
      crc32c_parallel(frame_header_checksum(buffer_), buffer_ + frame_header_bytes, header.length);
  const std::byte* trailer = buffer_ + bytes - trailer_bytes();
  const std::uint32_t carried = decode_frame_trailer(trailer);
  if (const FrameFault f =
          check_frame_end(header, crc, carried, bytes - trailer_bytes(), next_, error_);
      f != FrameFault::none)
    return fail(ChannelStatus::corrupt, f);
  if (key_.set()) {
    std::byte tag[frame_tag_bytes];
    frame_tag(key_, next_, buffer_, buffer_ + frame_header_bytes, header.length, tag);
    if (const FrameFault f = check_frame_tag(tag, trailer + frame_trailer_bytes, next_, error_);
        f != FrameFault::none)
      return fail(ChannelStatus::corrupt, f);
  }
  return ChannelStatus::ok;
}

} // namespace cg::detail
