// cg/tensor_ports.hpp - The channel ends of cg::Tensor values that do not
// travel by value through the channel alone (cg/actor.hpp): NCCL edges, values
// copied to a device on arrival, and CUDA IPC edges.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/detail/profile.hpp>
#include <cg/detail/tensor_transport.hpp>
#include <cg/ports.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace cg {

/// Whether a port overlaps its transfer with the GPU's other work (cgc
/// --overlap-gpu-communication): `off`, the transfer is done before the task
/// runs; `on`, it runs on the communication stream and the kernels the task
/// queues on the legacy default stream wait for it on the GPU (the host does
/// not) when it takes the tensor as an input. A CUDA IPC reader's slot is
/// then released at the port's next read (a ring of one slot cannot lend it
/// for that long: there it is always `off`). An NCCL edge's send and receive
/// return once queued; a sent tensor is kept until its send is done, and the
/// sender's later kernels run beside the send: they must not write the
/// tensor they returned (a method that returns a new tensor each time
/// never does).
enum class Overlap : bool { off, on };

/// Writing end of an NCCL edge (cg/detail/tensor_transport.hpp): the header
/// through the channel, then the elements to each reader (ranks 1, 2, ...).
class NcclOutputPort {
public:
  /// `header` records nothing: this port records its write once the
  /// elements went (`profile`, if the launch is profiled).
  NcclOutputPort(OutputPort<detail::TensorHeader> header, Communicator& communicator,
                 std::uint32_t channel, std::uint64_t max_bytes, std::string actor,
                 std::string method, detail::ActorProfile* profile = nullptr,
                 const char* nvtx = nullptr, Overlap overlap = Overlap::off)
      : header_(std::move(header)), communicator_(communicator), channel_(channel),
        max_bytes_(max_bytes), actor_(std::move(actor)), method_(std::move(method)),
        profile_(profile), nvtx_(nvtx), overlap_(overlap == Overlap::on) {}

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
  bool overlap_;
};

/// Reading end of an NCCL edge: the header, then the elements from rank 0.
class NcclInputPort {
public:
  /// `header` records nothing: this port records its read once the
  /// elements arrived (`profile`, if the launch is profiled).
  NcclInputPort(InputPort<detail::TensorHeader> header, Communicator& communicator,
                std::uint32_t channel, Device device, detail::ActorProfile* profile = nullptr,
                const char* nvtx = nullptr, Overlap overlap = Overlap::off)
      : header_(std::move(header)), communicator_(communicator), channel_(channel), device_(device),
        profile_(profile), nvtx_(nvtx), overlap_(overlap == Overlap::on) {}

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
  bool overlap_;
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
  CudaIpcOutputPort(ChannelWriter writer, std::uint32_t channel, std::uint32_t max_in_flight,
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
  std::uint32_t max_in_flight_;
  std::uint32_t slot_bytes_;
  int device_;
  int cuda_devices_; // this process's, counted once
  std::string actor_;
  std::string method_;
  std::unique_ptr<detail::CudaIpcSender> sender_; // made on the first tensor
  detail::ActorProfile* profile_;
  const char* nvtx_;
};

/// Reading end of a CUDA IPC edge: the tensor arrives on this actor's GPU
/// (a copy of the writer's slot buffer, made before the slot is released).
/// A reader that cannot receive it (no CUDA device, the writer's GPU not
/// visible) gets the value's error record (cg::TensorError) of the reading
/// task: its method is skipped and the driver's get() throws.
class CudaIpcInputPort {
public:
  /// `profile`: where each read is recorded, its copy included (or, with
  /// overlap, its queueing), if the launch is profiled.
  CudaIpcInputPort(ChannelReader reader, std::uint32_t channel, std::uint32_t max_in_flight,
                   int device, Overlap overlap, std::string actor, std::string method,
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
  std::uint32_t max_in_flight_;
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

} // namespace cg
