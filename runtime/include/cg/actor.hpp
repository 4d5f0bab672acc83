// cg/actor.hpp - What the generated actor programs run on.
//
// cgc emits, per actor instance, one function that constructs the actor,
// opens its channel ports and runs the actor's fixed operation list once per
// execution until the driver closes the channels:
//
//   int run_chain_b(cg::ActorProcess& process) {          // quickstart.chain.b.cpp
//     EchoActor actor;
//     auto c1 = process.input<std::string>(1, 0);         // a.echo, from a
//     auto c2 = process.output<std::string>(2, "echo");   // b.echo, to driver
//     process.ready();
//     for (;;) {
//       cg::Received<std::string> v1;
//       if (!c1.read(v1))                                  // READ; false: the
//         return 0;                                        // driver closed it
//       cg::Result<std::string> v2 = process.call(         // COMPUTE
//           "echo", [&] { return actor.echo(cg::pass(v1)); }, v1);
//       if (!c2.write(v2))                                 // WRITE
//         return 0;
//     }
//   }
//
// Errors are values: a method's exception becomes an ErrorRecord in its
// result; a task whose input holds an error skips its method and forwards it
// (the trailing arguments of process.call(), here v1, are the inputs whose
// errors it forwards).
//
// NCCL edges and collectives (cg::Tensor values) go through the actor's
// communicators instead, one per synchronous group of the schedule:
//
//     cg::Communicator& g0 = process.communicator(0);      // nccl c1: a -> b
//     auto c1 = process.nccl_input(1, 0, g0);              // header, then recv
//     ...
//     cg::Result<cg::Tensor> v4 = process.allreduce(g1, v3, cg::ReduceOp::sum);
//
// (cg/detail/tensor_transport.hpp says how errors cross them.)
//
// The same function runs an actor as a process of the actor executable
// (cg::Mode::processes: the ActorProcess maps the segment it inherited) or as
// a thread of the driver (cg::Mode::threads: it borrows the driver's mapping).
// A broken channel throws detail::ActorFailure out of it in both cases.
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
  void profiled(const ChannelReader::Message& message) noexcept {
    if (profile_)
      profile_->record(detail::ProfiledOp::read, channel_, message.payload.size());
  }

  // Waits for the next message; false once the channel is closed.
  bool next(ChannelReader::Message& message) {
    ChannelStatus status = reader_.acquire(message, Deadline::max());
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

/// Writing end of an NCCL edge (cg/detail/tensor_transport.hpp): the header
/// through the channel, then the elements to each reader (ranks 1, 2, ...).
class NcclOutputPort {
public:
  /// `header` records nothing: this port records its write once the
  /// elements went (`profile`, if the launch is profiled).
  NcclOutputPort(OutputPort<detail::TensorHeader> header, Communicator& communicator,
                 std::uint32_t channel, std::uint64_t max_bytes, std::string actor,
                 std::string method, detail::ActorProfile* profile = nullptr,
                 const char* nvtx = nullptr)
      : header_(std::move(header)), communicator_(communicator), channel_(channel),
        max_bytes_(max_bytes), actor_(std::move(actor)), method_(std::move(method)),
        profile_(profile), nvtx_(nvtx) {}

  /// Publishes this execution's tensor, or its error; false once the graph stopped.
  bool write(const Result<Tensor>& result);

private:
  bool write_unprofiled(const Result<Tensor>& result);
  OutputPort<detail::TensorHeader> header_;
  Communicator& communicator_;
  std::uint32_t channel_;
  std::uint64_t max_bytes_; // the most one message may carry
  std::string actor_;
  std::string method_;
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// Reading end of an NCCL edge: the header, then the elements from rank 0.
class NcclInputPort {
public:
  /// `header` records nothing: this port records its read once the
  /// elements arrived (`profile`, if the launch is profiled).
  NcclInputPort(InputPort<detail::TensorHeader> header, Communicator& communicator,
                std::uint32_t channel, Device device, detail::ActorProfile* profile = nullptr,
                const char* nvtx = nullptr)
      : header_(std::move(header)), communicator_(communicator), channel_(channel), device_(device),
        profile_(profile), nvtx_(nvtx) {}

  /// The next execution's tensor (or forwarded error); false once the graph stopped.
  bool read(Result<Tensor>& out);

private:
  bool read_unprofiled(Result<Tensor>& out);
  InputPort<detail::TensorHeader> header_;
  Communicator& communicator_;
  std::uint32_t channel_;
  Device device_;
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// Reading end of a channel whose cg::Tensor is delivered on a device
/// (`with_tensor_transport(cg::device::cuda)` or `cg::device::cpu`): it
/// crosses shared memory as a host tensor, then is copied to `device` here,
/// for CUDA straight from the channel slot (one host-to-device copy). A copy
/// that fails (no such CUDA device) becomes the value's error record, of the
/// reading task: its method is skipped and the driver's get() throws.
class DeviceInputPort {
public:
  /// `profile`: where each read is recorded, its copy included, if the
  /// launch is profiled.
  DeviceInputPort(ChannelReader reader, std::uint32_t channel, Device device, std::string actor,
                  std::string method, detail::ActorProfile* profile = nullptr,
                  const char* nvtx = nullptr);

  /// The next execution's tensor on the device (or forwarded error); false
  /// once the driver has closed the channel.
  bool read(Result<Tensor>& out);

private:
  bool read_unprofiled(Result<Tensor>& out);
  // Pins the overflow buffers reader_ maps (tensor/pinned_mappings.hpp);
  // declared first so that it outlives the reader, which tells it of unmaps.
  std::unique_ptr<detail::MappingObserver> pinned_;
  ChannelReader reader_;
  std::uint32_t channel_;
  Device device_;
  int cuda_devices_; // this process's, counted once
  std::string actor_;
  std::string method_;
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// Writing end of such a channel: a tensor that is not in host memory is
/// copied from its device straight into the slot (one device-to-host copy).
class DeviceOutputPort {
public:
  DeviceOutputPort(OutputPort<detail::TensorToHost> port, std::string actor, std::string method)
      : port_(std::move(port)), actor_(std::move(actor)), method_(std::move(method)) {}

  /// Publishes this execution's tensor, or its error; false once the channel is closed.
  bool write(const Result<Tensor>& result);

private:
  // Pins the overflow buffers port_ makes, once a tensor on a GPU comes
  // (tensor/pinned_mappings.hpp); declared first so that it outlives the
  // port's writer, which tells it of unmaps.
  std::unique_ptr<detail::MappingObserver> pinned_;
  OutputPort<detail::TensorToHost> port_;
  std::string actor_;
  std::string method_;
};

namespace detail {
class CudaIpcSender;
class CudaIpcReceiver;
} // namespace detail

/// Writing end of a CUDA IPC edge (`with_tensor_transport(cg::transport::cuda_ipc)`,
/// tensor/cuda_ipc.hpp): the tensor's elements are copied into the device
/// buffer of the ring slot it is written to, and the slot's message carries
/// its dtype, shape and where the elements are; a tensor of at most
/// detail::kInMessageBytes that fits the slot travels in the message itself. A tensor that cannot
/// be staged (no CUDA device here, a strided CUDA tensor, CUDA out of memory) becomes the writing
/// task's error record.
class CudaIpcOutputPort {
public:
  /// `profile`: where each write is recorded, if the launch is profiled.
  CudaIpcOutputPort(ChannelWriter writer, std::uint32_t channel, std::uint32_t slots,
                    std::uint32_t slot_bytes, int device, std::string actor, std::string method,
                    detail::ActorProfile* profile = nullptr, const char* nvtx = nullptr);
  CudaIpcOutputPort(CudaIpcOutputPort&&) noexcept;
  ~CudaIpcOutputPort();

  /// Publishes this execution's tensor, or its error; false once the channel is closed.
  bool write(const Result<Tensor>& result);

private:
  bool put_error(const ErrorRecord& record);
  bool write_unprofiled(const Result<Tensor>& result);
  ChannelWriter writer_;
  std::uint32_t channel_;
  std::uint32_t slots_;
  std::uint32_t slot_bytes_;
  int device_;
  int cuda_devices_; // this process's, counted once
  std::string actor_;
  std::string method_;
  std::unique_ptr<detail::CudaIpcSender> sender_; // made on the first tensor
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// Whether a CUDA IPC reader overlaps its copy with the GPU's other work
/// (cgc --overlap-gpu-communication): `off`, the copy is done before the
/// task runs; `on`, it runs on the reader's communication stream and the
/// kernels the task queues on the legacy default stream wait for it on the
/// GPU (the host does not), its slot released at the port's next read. A
/// ring of one slot cannot lend it for that long: there it is always `off`.
enum class Overlap : bool { off, on };

/// Reading end of a CUDA IPC edge: the tensor arrives on this actor's GPU
/// (a copy of the writer's slot buffer, made before the slot is released).
/// A reader that cannot receive it (no CUDA device, the writer's GPU not
/// visible) gets the value's error record (cg::TensorError) of the reading
/// task: its method is skipped and the driver's get() throws.
class CudaIpcInputPort {
public:
  /// `profile`: where each read is recorded, its copy included (or, with
  /// overlap, its queueing), if the launch is profiled.
  CudaIpcInputPort(ChannelReader reader, std::uint32_t channel, std::uint32_t slots, int device,
                   Overlap overlap, std::string actor, std::string method,
                   detail::ActorProfile* profile = nullptr, const char* nvtx = nullptr);
  CudaIpcInputPort(CudaIpcInputPort&&) noexcept;
  ~CudaIpcInputPort();

  /// The next execution's tensor (or forwarded error); false once the driver
  /// has closed the channel.
  bool read(Result<Tensor>& out);

private:
  bool read_unprofiled(Result<Tensor>& out);
  Result<Tensor> receive(const ChannelReader::Message& message, bool& holding);
  void settle(); // the overlapped copy done, its slot released
  ChannelReader reader_;
  std::uint32_t channel_;
  std::uint32_t slots_;
  int device_;
  bool overlap_;
  bool holding_ = false; // an overlapped copy's slot, until settle()
  int cuda_devices_;     // this process's, counted once
  std::string actor_;
  std::string method_;
  std::unique_ptr<detail::CudaIpcReceiver> receiver_; // made on the first tensor
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// One actor's view of the launched graph: its segment and its identity.
class ActorProcess {
public:
  /// An actor process: maps `segment` ("fd:<n>", an inherited descriptor it
  /// takes over, or a /dev/shm name).
  ActorProcess(const detail::GraphSpec& spec, std::uint32_t actor, const std::string& segment);
  /// An actor thread: uses the driver's mapping of the segment, which must
  /// outlive it. Reader slots that `sources` names (an actor process on
  /// another host: streams its actors read directly) read from there, not
  /// from their rings, and writers tell its forwarders of each message (to
  /// send it on at once); `sources` must outlive this.
  ActorProcess(const detail::GraphSpec& spec, std::uint32_t actor, std::span<std::byte> segment,
               const detail::MessageSources* sources = nullptr);
  ~ActorProcess();
  ActorProcess(const ActorProcess&) = delete;
  ActorProcess& operator=(const ActorProcess&) = delete;

  const std::string& actor_name() const noexcept { return name_; }

  template <class T> InputPort<T> input(std::uint32_t channel, std::uint32_t reader) {
    return InputPort<T>(reader_of(channel, reader), channel, name_, profile(),
                        nvtx_name(detail::ProfiledOp::read, channel));
  }
  template <class T> OutputPort<T> output(std::uint32_t channel, const char* method) {
    return OutputPort<T>(writer_of(channel), channel, slot_bytes_, name_, method, profile(),
                         nvtx_name(detail::ProfiledOp::write, channel));
  }

  /// This actor's rank of the graph's communicator group `group`
  /// (GraphSpec::communicators; its rank is its position there). A
  /// cg::HostCommunicator over the group in the segment, or, launched with
  /// CommunicatorKind::nccl, a cg::NcclCommunicator on cuda_device() joined
  /// and warmed up here (so call it for the groups in ascending order, before
  /// ready()); made on first use, kept for the actor's life.
  Communicator& communicator(std::uint32_t group);

  /// The CUDA device this actor's NCCL communicators use: 0, its first GPU,
  /// in a process (CUDA_VISIBLE_DEVICES lists its own); in threads mode the
  /// driver sets the ordinal of its first GPU in the driver's process.
  int cuda_device() const noexcept { return cuda_device_; }
  void set_cuda_device(int ordinal) noexcept { cuda_device_ = ordinal; }

  /// The ends of an NCCL edge; `communicator` is its group's (the writer is
  /// rank 0, reader slot r is rank r + 1).
  NcclOutputPort nccl_output(std::uint32_t channel, const char* method,
                             Communicator& communicator) {
    return NcclOutputPort(
        OutputPort<detail::TensorHeader>(writer_of(channel), channel, slot_bytes_, name_, method),
        communicator, channel, communicator_bytes(), name_, method, device_profile(),
        nvtx_name(detail::ProfiledOp::write, channel));
  }
  NcclInputPort nccl_input(std::uint32_t channel, std::uint32_t reader,
                           Communicator& communicator) {
    return NcclInputPort(
        InputPort<detail::TensorHeader>(reader_of(channel, reader), channel, name_), communicator,
        channel, device::cpu, device_profile(), nvtx_name(detail::ProfiledOp::read, channel));
  }

  /// The ends of a channel delivering a cg::Tensor on a device; `method` is
  /// the reading task's (the writing task's for an output).
  DeviceInputPort device_input(std::uint32_t channel, std::uint32_t reader, Device device,
                               const char* method) {
    return DeviceInputPort(reader_of(channel, reader), channel, device, name_, method, profile(),
                           nvtx_name(detail::ProfiledOp::read, channel));
  }
  DeviceOutputPort device_output(std::uint32_t channel, const char* method) {
    return DeviceOutputPort(output<detail::TensorToHost>(channel, method), name_, method);
  }

  /// The ends of a CUDA IPC edge, on this actor's GPU (cuda_device());
  /// `method` is the reading task's (the writing task's for an output).
  CudaIpcOutputPort cuda_ipc_output(std::uint32_t channel, const char* method) {
    return CudaIpcOutputPort(writer_of(channel), channel, slots_of(channel), slot_bytes_,
                             cuda_device_, name_, method, device_profile(),
                             nvtx_name(detail::ProfiledOp::write, channel));
  }
  CudaIpcInputPort cuda_ipc_input(std::uint32_t channel, std::uint32_t reader, const char* method,
                                  Overlap overlap = Overlap::off) {
    return CudaIpcInputPort(reader_of(channel, reader), channel, slots_of(channel), cuda_device_,
                            overlap, name_, method, device_profile(),
                            nvtx_name(detail::ProfiledOp::read, channel));
  }

  /// A collective's rank on this actor: every rank of `communicator` calls
  /// the same one at the same point of its schedule. The result is a new
  /// tensor (the input is never modified), or the error of the first rank
  /// whose input had one, on every rank (cg/detail/tensor_transport.hpp).
  Result<Tensor> allreduce(Communicator& communicator, const Result<Tensor>& input, ReduceOp op);
  /// Rank r's input becomes the r-th of `size` blocks along dimension 0.
  Result<Tensor> allgather(Communicator& communicator, const Result<Tensor>& input);
  /// Dimension 0 of the input (a multiple of the group's size) is reduced
  /// and rank r gets the r-th block.
  Result<Tensor> reducescatter(Communicator& communicator, const Result<Tensor>& input,
                               ReduceOp op);

  /// Tells the driver this actor is attached and constructed.
  void ready();

  /// Counts one more finished execution where the driver watches for stalls
  /// (the generated loop calls it at the end of each execution).
  void executed() noexcept;

  /// Leaves `words` (why this actor is about to exit: "<exception type>:
  /// <what>") in the segment, for the driver's report of its death.
  void say_last_words(std::string_view words) noexcept;

  /// Makes the actor: from the constructor arguments launch() was given for
  /// it, if any, else from `graph_args`, those the graph passes. Both are a
  /// std::tuple of the graph's argument types.
  template <class C, class... A> C construct(std::tuple<A...> graph_args) const {
    if (!constructor_args_)
      return std::make_from_tuple<C>(std::move(graph_args));
    return std::make_from_tuple<C>(decode_all<std::tuple<A...>>(*constructor_args_));
  }

  /// Runs a task's method unless an input carries an error; a thrown
  /// exception becomes the task's error record.
  template <class F, class... In> auto call(const char* method, F&& fn, const In&... inputs) {
    const detail::NvtxRange range(nvtx_ ? nvtx_task(method) : nullptr);
    auto result = call_unprofiled(method, std::forward<F>(fn), inputs...);
    if (profile_.recorder.on())
      profile_.computed();
    return result;
  }

private:
  template <class F, class... In>
  auto call_unprofiled(const char* method, F&& fn, const In&... inputs) {
    using R = std::remove_cvref_t<decltype(fn())>;
    const ErrorRecord* upstream = nullptr;
    ((upstream = upstream ? upstream : (inputs.ok() ? nullptr : &inputs.error())), ...);
    if (upstream)
      return Result<R>(*upstream);
    try {
      return Result<R>(fn());
    } catch (const std::exception& e) {
      return Result<R>(ErrorRecord{name_, method, detail::current_exception_type(), e.what()});
    } catch (...) {
      return Result<R>(
          ErrorRecord{name_, method, detail::current_exception_type(), "unknown exception"});
    }
  }

  using CollectiveKind = detail::CollectiveKind;
  void bound_run_ahead() noexcept;
  // profile(), with a timer for the device work of ports on CUDA streams.
  detail::ActorProfile* device_profile();
  detail::ActorProfile* profile() noexcept { return profile_.recorder.on() ? &profile_ : nullptr; }
  // The names of this actor's NVTX ranges (cg/detail/nvtx.hpp), kept for its
  // life; null when NVTX is off. "READ c1 (first.echo)", "WRITE c2 (...)".
  const char* nvtx_name(detail::ProfiledOp op, std::uint32_t channel);
  // "second.echo": the range of a task of this actor running `method`.
  const char* nvtx_task(const char* method);
  std::uint64_t communicator_bytes() const noexcept;
  Result<Tensor> collective(CollectiveKind kind, Communicator& communicator,
                            const Result<Tensor>& input, ReduceOp op);
  Result<Tensor> profiled_collective(CollectiveKind kind, Communicator& communicator,
                                     const Result<Tensor>& input, ReduceOp op);
  void attach(const detail::GraphSpec& spec, std::uint32_t actor, std::span<std::byte> memory,
              const std::string& segment);
  Channel channel_at(std::uint32_t channel) const;
  // Reader slot `reader` of `channel`: from its source if it has one, else its ring.
  ChannelReader reader_of(std::uint32_t channel, std::uint32_t reader) const;
  // The writer of `channel`, telling its forwarder (if any) of each message.
  ChannelWriter writer_of(std::uint32_t channel) const;
  std::uint32_t slots_of(std::uint32_t channel) const { return channel_at(channel).config().slots; }

  struct Impl;
  std::unique_ptr<Impl> impl_;
  const detail::GraphSpec* spec_ = nullptr;
  std::uint32_t actor_ = 0;
  std::string name_;
  std::uint32_t slot_bytes_ = 0;
  std::optional<std::span<const std::byte>> constructor_args_; // given to launch()
  int cuda_device_ = 0;
  const detail::MessageSources* sources_ = nullptr;
  detail::ActorProfile profile_; // records nothing unless the launch is profiled
  bool nvtx_ = false;            // CG_NVTX=1: ranges around each operation
};

namespace detail {
/// main() of the generated actor executable, which serves every graph of its
/// target:
///   <exe> <graph> <actor> <segment>     (segment: fd:<n> or a /dev/shm name)
int actor_host_main(int argc, char** argv, std::span<const GraphSpec* const> graphs);
} // namespace detail

} // namespace cg
