// cg/ports.hpp - An actor's channel ends (cg/actor.hpp): the values its
// tasks read and write (Result, Received: a value or the error that replaced
// it) and the ports that move them through a channel by value.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/detail/error_codec.hpp>
#include <cg/detail/graph_records.hpp>
#include <cg/detail/graph_spec.hpp>
#include <cg/detail/in_place.hpp>
#include <cg/detail/nvtx.hpp>
#include <cg/detail/profile.hpp>
#include <cg/detail/tensor_transport.hpp>
#include <cg/serialize.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

namespace cg {

/// A task's input or result in one execution: a value, or the error that
/// replaced it upstream.
template <class T> class Result {
public:
  Result() = default;
  Result(T value) : state_(std::in_place_index<1>, std::move(value)) {}
  Result(ErrorRecord error) : state_(std::in_place_index<2>, std::move(error)) {}

  bool ok() const noexcept { return state_.index() == 1; }
  T& value() { return std::get<1>(state_); }
  const T& value() const { return std::get<1>(state_); }
  T take() { return std::move(std::get<1>(state_)); }
  const ErrorRecord& error() const { return std::get<2>(state_); }

private:
  std::variant<std::monostate, T, ErrorRecord> state_;
};

/// A value read from a channel by this actor, or the error that replaced it.
/// A value that can be read in place (cg/detail/in_place.hpp) stays in its
/// channel slot, which this object holds until it is destroyed or the value
/// is decoded (value(), take()); a view parameter then reads it there.
template <class T> class Received : public Result<T> {
public:
  Received() = default;
  Received(const Received&) = delete;
  Received& operator=(const Received&) = delete;
  ~Received() { release(); }

  bool ok() const noexcept { return pending_.has_value() || Result<T>::ok(); }
  T& value() {
    materialize();
    return Result<T>::value();
  }
  T take() {
    materialize();
    return Result<T>::take();
  }
  /// The value as its view type, in the slot when it is still there.
  auto view()
    requires detail::readable_in_place_v<T>
  {
    if (pending_) {
      if (auto in_place = detail::view_in_place<T>(*pending_))
        return *in_place;
      materialize(); // misaligned: decode a copy, kept here
    }
    return typename detail::InPlace<T>::view(Result<T>::value());
  }

  /// Keeps `bytes` (validated) in `reader`'s acquired slot until released.
  void hold(ChannelReader& reader, std::span<const std::byte> bytes) noexcept {
    reader_ = &reader;
    pending_ = bytes;
  }
  /// Gives the slot back to the channel (the value must have been decoded).
  void release() noexcept {
    if (reader_)
      reader_->release();
    reader_ = nullptr;
    pending_.reset();
  }

private:
  void materialize() {
    if (!pending_)
      return;
    T decoded = decode_all<T>(*pending_);
    release();
    Result<T>::operator=(Result<T>(std::move(decoded)));
  }
  ChannelReader* reader_ = nullptr;
  std::optional<std::span<const std::byte>> pending_;
};

namespace detail {
/// An argument on its last use, handed to the method as the parameter wants
/// it: moved out as T, or, for a view parameter, as a view of the value (in
/// its slot, if it was read there). Made by cg::pass().
template <class R> class Passed {
public:
  explicit Passed(R& result) : result_(result) {}
  using value_type = std::remove_cvref_t<decltype(std::declval<R&>().take())>;
  operator value_type() && { return result_.take(); }
  template <class V = value_type>
    requires readable_in_place_v<V>
  operator typename InPlace<V>::view() && {
    if constexpr (requires { result_.view(); })
      return result_.view();
    else
      return typename InPlace<V>::view(result_.value());
  }

private:
  R& result_;
};
} // namespace detail

/// Passes a task's argument on its last use: by value (moved), or in place
/// to a view parameter (std::span<const E>, std::string_view).
template <class T> detail::Passed<Result<T>> pass(Result<T>& result) {
  return detail::Passed<Result<T>>(result);
}
template <class T> detail::Passed<Received<T>> pass(Received<T>& received) {
  return detail::Passed<Received<T>>(received);
}

/// Element K of a task's std::tuple result, or the error that replaced it:
/// how a graph's `auto [x, y] = a.bind<&C::split>(...)` reaches the consumers.
template <std::size_t K, class... T>
Result<std::tuple_element_t<K, std::tuple<T...>>> element(Result<std::tuple<T...>>& result) {
  if (!result.ok())
    return result.error();
  return std::get<K>(std::move(result.value()));
}

namespace detail {
/// The demangled dynamic type of the exception being handled.
std::string current_exception_type();
/// Why an actor cannot go on (a broken channel, a segment not made for it):
/// ends the actor, never silently. The process exits 2; a thread reports it.
class ActorFailure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
/// Throws ActorFailure for a broken channel (corrupt data).
[[noreturn]] void channel_failure(const char* what, std::uint32_t channel, ChannelStatus status);
/// The error record that replaces a message of `channel` whose bytes do not
/// decode (corrupted in shared memory): the channel stays in step and the
/// driver is told, as cg::DecodeError of `actor`'s read.
ErrorRecord undecodable(const std::string& actor, std::uint32_t channel, const DecodeError& e);
} // namespace detail

/// Reading end of a channel for one actor.
template <class T> class InputPort {
public:
  /// `profile`: where each read is recorded, if the launch is profiled;
  /// `nvtx`: the name of its NVTX range, null for none (cg/detail/nvtx.hpp).
  InputPort(ChannelReader reader, std::uint32_t channel, std::string actor = {},
            detail::ActorProfile* profile = nullptr, const char* nvtx = nullptr)
      : reader_(std::move(reader)), channel_(channel), actor_(std::move(actor)), profile_(profile),
        nvtx_(nvtx) {}

  /// The next execution's value (or forwarded error); false once the driver
  /// has closed the channel (teardown). A message whose bytes do not decode
  /// (corrupted in shared memory) becomes an error record of type
  /// cg::DecodeError: the channel stays in step and the driver is told. A
  /// broken channel (impossible slot header) ends the process instead.
  bool read(Result<T>& out) {
    const detail::NvtxRange range(nvtx_);
    ChannelReader::Message message;
    if (!next(message))
      return false;
    if (message.kind == MessageKind::error) {
      out = read_error(message.payload);
    } else {
      try {
        out = Result<T>(decode_all<T>(message.payload));
      } catch (const DecodeError& e) {
        out = Result<T>(undecodable(e));
      }
    }
    reader_.release();
    profiled(message);
    return true;
  }

  /// As above, into a Received: a value that can be read in place is only
  /// validated, and stays in the slot until `out` releases it.
  bool read(Received<T>& out) {
    if constexpr (!detail::readable_in_place_v<T>) {
      return read(static_cast<Result<T>&>(out));
    } else {
      out.release();
      const detail::NvtxRange range(nvtx_);
      ChannelReader::Message message;
      if (!next(message))
        return false;
      if (message.kind != MessageKind::error) {
        try {
          detail::validate_in_place<T>(message.payload);
          out.hold(reader_, message.payload);
          profiled(message);
          return true;
        } catch (const DecodeError& e) {
          static_cast<Result<T>&>(out) = Result<T>(undecodable(e));
        }
      } else {
        static_cast<Result<T>&>(out) = read_error(message.payload);
      }
      reader_.release();
      profiled(message);
      return true;
    }
  }

private:
  // A READ that found its message in its slot at the first look did not
  // wait, and its copy is short: it is recorded without a clock read of its
  // own (cg/detail/profile.hpp).
  void profiled(const ChannelReader::Message& message) noexcept {
    if (!profile_)
      return;
    if (waited_ || message.paging != nullptr)
      profile_->record(detail::ProfiledOp::read, channel_, message.payload.size());
    else
      profile_->read_without_wait(channel_, message.payload.size());
  }

  // Waits for the next message; false once the channel is closed. Recording
  // a profile, it looks once first, to know whether it waited.
  bool next(ChannelReader::Message& message) {
    ChannelStatus status = ChannelStatus::timeout;
    if (profile_ && profile_->recording)
      status = reader_.acquire(message, Deadline::min());
    waited_ = status == ChannelStatus::timeout;
    if (waited_)
      status = reader_.acquire(message, Deadline::max());
    if (status == ChannelStatus::closed)
      return false;
    if (status != ChannelStatus::ok)
      detail::channel_failure("read", channel_, status);
    return true;
  }

  ErrorRecord undecodable(const DecodeError& e) const {
    return detail::undecodable(actor_, channel_, e);
  }
  Result<T> read_error(std::span<const std::byte> payload) const {
    try {
      return Result<T>(decode_all<ErrorRecord>(payload));
    } catch (const DecodeError& e) {
      return Result<T>(undecodable(e));
    }
  }

  ChannelReader reader_;
  std::uint32_t channel_;
  std::string actor_;
  detail::ActorProfile* profile_;
  const char* nvtx_;
  bool waited_ = true; // whether the last message was not there at the first look
};

/// Writing end of a channel for one actor.
template <class T> class OutputPort {
public:
  /// `profile`: where each write is recorded, if the launch is profiled;
  /// `nvtx`: the name of its NVTX range, null for none (cg/detail/nvtx.hpp).
  OutputPort(ChannelWriter writer, std::uint32_t channel, std::uint32_t slot_bytes,
             std::string actor, std::string method, detail::ActorProfile* profile = nullptr,
             const char* nvtx = nullptr)
      : writer_(std::move(writer)), channel_(channel), slot_bytes_(slot_bytes),
        actor_(std::move(actor)), method_(std::move(method)), profile_(profile), nvtx_(nvtx) {}

  /// Publishes this execution's result; false once the channel is closed.
  /// A value larger than a slot goes through the channel's overflow buffer;
  /// only if no buffer that large can be made is it replaced by an error
  /// record saying so (never truncated).
  bool write(const Result<T>& result) {
    const detail::NvtxRange range(nvtx_);
    const bool written = write_unprofiled(result);
    if (written && profile_)
      profile_->record(detail::ProfiledOp::write, channel_, written_bytes_);
    return written;
  }

  /// Lets `observer` hear of the overflow buffers this port's writer makes
  /// (ChannelWriter::observe_mappings).
  void observe_mappings(detail::MappingObserver* observer) noexcept {
    writer_.observe_mappings(observer);
  }

private:
  bool write_unprofiled(const Result<T>& result) {
    if (!result.ok())
      return put(MessageKind::error, detail::fit_to_slot(result.error(), slot_bytes_));
    switch (ChannelStatus status = try_put(MessageKind::value, result.value())) {
    case ChannelStatus::ok:
      return true;
    case ChannelStatus::closed:
      return false;
    case ChannelStatus::too_large:
      return put(MessageKind::error,
                 detail::fit_to_slot({actor_, method_, "std::bad_alloc",
                                      "result of " + std::to_string(encoded_size(result.value())) +
                                          " bytes: no shared-memory buffer that large could be "
                                          "allocated for channel " +
                                          std::to_string(channel_)},
                                     slot_bytes_));
    default:
      detail::channel_failure("write", channel_, status);
    }
  }

  template <class V> ChannelStatus try_put(MessageKind kind, const V& value) {
    std::size_t bytes = encoded_size(value);
    std::span<std::byte> slot;
    ChannelStatus status = writer_.acquire(bytes, slot, Deadline::max());
    if (status != ChannelStatus::ok)
      return status;
    // A large result only another host reads goes from the method's value
    // itself while the stream takes it (cg/detail/borrowed_runs.hpp). That
    // waits only on a stream that moves: one that stalls is left the rest,
    // copied, so the actor never waits on its reader's schedule.
    detail::BorrowedRuns borrowed;
    const bool borrowing = bytes >= detail::BorrowedRuns::min_bytes && writer_.sends_borrowed();
    Encoder encoder(slot, borrowing ? &borrowed : nullptr);
    encode(encoder, value);
    if (borrowing)
      writer_.publish_borrowed(kind, encoder.written(), borrowed, Deadline::max());
    else
      writer_.publish(kind, encoder.written());
    written_bytes_ = encoder.written();
    return ChannelStatus::ok;
  }
  template <class V> bool put(MessageKind kind, const V& value) {
    ChannelStatus status = try_put(kind, value);
    if (status == ChannelStatus::closed)
      return false;
    if (status != ChannelStatus::ok)
      detail::channel_failure("write", channel_, status);
    return true;
  }
  ChannelWriter writer_;
  std::uint32_t channel_;
  std::uint32_t slot_bytes_;
  std::string actor_;
  std::string method_;
  detail::ActorProfile* profile_;
  const char* nvtx_;
  std::size_t written_bytes_ = 0; // by the last write, for the profile
};

} // namespace cg
