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
//
// Its channel ends are declared beside it: cg/ports.hpp (values, by value)
// and cg/tensor_ports.hpp (tensors over NCCL, to a device, over CUDA IPC).
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/detail/error_codec.hpp>
#include <cg/detail/graph_records.hpp>
#include <cg/detail/graph_spec.hpp>
#include <cg/detail/in_place.hpp>
#include <cg/detail/nvtx.hpp>
#include <cg/detail/profile.hpp>
#include <cg/detail/tensor_transport.hpp>
#include <cg/ports.hpp>
#include <cg/serialize.hpp>
#include <cg/tensor_ports.hpp>

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
  /// rank 0, reader slot r is rank r + 1). `overlap`: cg::Overlap.
  NcclOutputPort nccl_output(std::uint32_t channel, const char* method, Communicator& communicator,
                             Overlap overlap = Overlap::off) {
    return NcclOutputPort(
        OutputPort<detail::TensorHeader>(writer_of(channel), channel, slot_bytes_, name_, method),
        communicator, channel, communicator_bytes(), name_, method, device_profile(),
        nvtx_name(detail::ProfiledOp::write, channel), overlap);
  }
  NcclInputPort nccl_input(std::uint32_t channel, std::uint32_t reader, Communicator& communicator,
                           Overlap overlap = Overlap::off) {
    return NcclInputPort(
        InputPort<detail::TensorHeader>(reader_of(channel, reader), channel, name_), communicator,
        channel, device::cpu, device_profile(), nvtx_name(detail::ProfiledOp::read, channel),
        overlap);
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
    return CudaIpcOutputPort(writer_of(channel), channel, max_in_flight_of(channel), slot_bytes_,
                             cuda_device_, name_, method, device_profile(),
                             nvtx_name(detail::ProfiledOp::write, channel));
  }
  CudaIpcInputPort cuda_ipc_input(std::uint32_t channel, std::uint32_t reader, const char* method,
                                  Overlap overlap = Overlap::off) {
    return CudaIpcInputPort(reader_of(channel, reader), channel, max_in_flight_of(channel),
                            cuda_device_, overlap, name_, method, device_profile(),
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
      (await_input(inputs), ...); // a tensor read ahead, with overlap: the GPU waits for it
      return Result<R>(fn());
    } catch (const std::exception& e) {
      return Result<R>(ErrorRecord{name_, method, detail::current_exception_type(), e.what()});
    } catch (...) {
      return Result<R>(
          ErrorRecord{name_, method, detail::current_exception_type(), "unknown exception"});
    }
  }

  // Makes the kernels queued next wait, on the GPU, for an input tensor that
  // an overlapped port returned before its transfer was done; nothing for
  // any other input. Throws TensorError with CUDA's message.
  template <class T> static void await_input(const Result<T>&) noexcept {}
  static void await_input(const Result<Tensor>& input);

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
  std::uint32_t max_in_flight_of(std::uint32_t channel) const {
    return channel_at(channel).config().max_in_flight;
  }

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
