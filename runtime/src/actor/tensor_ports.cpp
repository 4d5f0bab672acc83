// tensor_ports.cpp - NCCL edges, collectives and device deliveries of the generated actor programs.
//
// See cg/detail/tensor_transport.hpp for the protocol. What each side checks
// before any blocking call is chosen so that the ranks always agree on the
// calls they make: a problem with one tensor becomes that task's error
// record on every side, never a rank left waiting for a peer that skipped.
#include "actor/tensor_port_watch.hpp"
#include "tensor/arrival_book.hpp"
#include "tensor/arrivals.hpp"
#include "tensor/cuda_memory.hpp"
#include "tensor/pinned_mappings.hpp"
#include "tensor/tensor_copy.hpp"
#include "tensor/tensor_wire.hpp"
#include <cg/actor.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <cstring>
#include <optional>
#include <utility>

namespace cg {
namespace {

// Each rank's error record, when a collective's input failed, travels in a
// block of this many bytes: a u32 length (0: this rank's input was fine),
// then the record, shortened to fit.
constexpr std::size_t kErrorBlockBytes = detail::kMinSlotBytes;

// Where `communicator` moves tensors: its GPU for NCCL, else host memory.
Device device_of(const Communicator& communicator) {
#if defined(CG_HAVE_CUDA)
  if (const auto* nccl = dynamic_cast<const NcclCommunicator*>(&communicator))
    return {DeviceKind::cuda, nccl->cuda_device()};
#endif
  (void)communicator;
  return device::cpu;
}

// `t` where `communicator` moves tensors: a host tensor goes to an NCCL
// communicator's GPU (one copy); the host communicator takes host tensors
// only, so the caller's unsendable() check comes first.
Tensor placed(const Communicator& communicator, const Tensor& t) {
  Device device = device_of(communicator);
  if (device.kind == DeviceKind::cpu || t.device() == device)
    return t.is_contiguous() ? t : t.contiguous();
  return t.to(device);
}

// A new tensor holding a copy of `t`'s elements (contiguous, same device).
Tensor copied(const Tensor& t) {
  Tensor out = Tensor::empty(t.dtype(), t.shape(), t.device());
  if (t.device().kind == DeviceKind::cpu)
    std::memcpy(out.data_ptr(), t.data_ptr(), t.nbytes());
  else
    detail::cuda_copy(out.data_ptr(), t.data_ptr(), t.nbytes());
  return out;
}

std::span<std::byte> bytes_of(const Tensor& t) {
  return {static_cast<std::byte*>(t.data_ptr()), t.nbytes()};
}

// Why `t` cannot be sent through `communicator`, a host communicator
// carrying `max_bytes` per message, or nothing (NCCL takes any tensor: a host
// one is copied to its GPU).
std::optional<std::string> unsendable(const Communicator& communicator, const Tensor& t,
                                      std::uint64_t max_bytes) {
  if (device_of(communicator).kind == DeviceKind::cuda)
    return std::nullopt;
  if (t.device() != device::cpu)
    return t.describe() + " is on " + to_string(t.device()) +
           "; the host communicator moves host tensors (an NCCL communicator needs a CUDA build "
           "and device)";
  if (t.nbytes() > max_bytes)
    return t.describe() + " has " + std::to_string(t.nbytes()) +
           " bytes, more than one message may carry (cg::LaunchOptions::communicator_bytes, " +
           std::to_string(max_bytes) + ")";
  return std::nullopt;
}

const char* collective_name(detail::CollectiveKind kind) {
  return kind == detail::CollectiveKind::allreduce   ? "allreduce"
         : kind == detail::CollectiveKind::allgather ? "allgather"
                                                     : "reducescatter";
}

[[noreturn]] void communicator_failure(const std::string& where, const CommunicatorError& e) {
  if (e.kind() == CommErrorKind::aborted)
    throw detail::GraphStopped(where + ": " + e.what());
  throw detail::ActorFailure(where + ": " + e.what());
}

// Every rank learns the error of the lowest rank whose input failed.
ErrorRecord agreed_error(Communicator& communicator, const std::optional<ErrorRecord>& mine) {
  const Device device = device_of(communicator);
  Tensor block = Tensor::zeros(DType::uint8, {static_cast<std::int64_t>(kErrorBlockBytes)});
  if (mine) {
    ErrorRecord record = detail::fit_to_slot(*mine, kErrorBlockBytes - sizeof(std::uint32_t));
    Encoder encoder(bytes_of(block));
    encode(encoder, static_cast<std::uint32_t>(encoded_size(record)));
    encode(encoder, record);
  }
  Tensor all = Tensor::empty(
      DType::uint8, {static_cast<std::int64_t>(kErrorBlockBytes) * communicator.size()}, device);
  communicator.allgather(block.to(device), all);
  communicator.synchronize();
  all = all.to(device::cpu);
  for (int rank = 0; rank < communicator.size(); ++rank) {
    std::span<const std::byte> theirs =
        bytes_of(all).subspan(rank * kErrorBlockBytes, kErrorBlockBytes);
    std::uint32_t length = 0;
    std::memcpy(&length, theirs.data(), sizeof length);
    if (length == 0)
      continue;
    try {
      if (length > kErrorBlockBytes - sizeof length)
        throw DecodeError("cg: error record longer than its block");
      return decode_all<ErrorRecord>(theirs.subspan(sizeof length, length));
    } catch (const DecodeError& e) {
      return {"", "", "cg::DecodeError",
              "rank " + std::to_string(rank) + "'s error record cannot be decoded: " + e.what()};
    }
  }
  return {"", "", "cg::Error", "a rank reported a failed input but no error record"};
}

// After an NCCL edge's send of `t` is queued: without overlap, or on a
// communicator that runs on no stream, the host waits for it; with overlap
// `t` is kept until the send is done, and the sender goes on
// (tensor/arrivals.hpp).
void settle_send(Communicator& communicator, bool overlap, const Tensor& t) {
  void* stream = communicator.cuda_stream();
  if (detail::transfer_order(overlap && stream != nullptr).host_waits)
    communicator.synchronize();
  else
    detail::hold_until_sent(t, stream);
}

} // namespace

bool NcclOutputPort::write(const Result<Tensor>& result) {
  return detail::watched(detail::ProfiledOp::write, channel_, profile_, nvtx_, result,
                         [&] { return write_unprofiled(result); });
}

bool NcclOutputPort::write_unprofiled(const Result<Tensor>& result) {
  if (!result.ok())
    return header_.write(Result<detail::TensorHeader>(result.error()));
  Tensor tensor = result.value();
  if (!tensor.defined())
    return header_.write(Result<detail::TensorHeader>(detail::TensorHeader{}));
  std::optional<std::string> why = unsendable(communicator_, tensor, max_bytes_);
  if (!why) {
    try {
      tensor = placed(communicator_, tensor);
    } catch (const std::exception& e) { // no room on the GPU, a strided CUDA tensor
      why = e.what();
    }
  }
  if (why)
    return header_.write(Result<detail::TensorHeader>(
        ErrorRecord{actor_, method_, "cg::TensorError",
                    "cannot send over nccl (channel " + std::to_string(channel_) + "): " + *why}));
  if (!header_.write(
          Result<detail::TensorHeader>(detail::TensorHeader{true, tensor.dtype(), tensor.shape()})))
    return false;
  try {
    detail::TimedSpan sends(
        detail::device_work(profile_, detail::ProfiledOp::device_write, channel_, tensor.nbytes()),
        communicator_.cuda_stream(), detail::DeviceTimer::Start::after_legacy_stream);
    for (int peer = 1; peer < communicator_.size(); ++peer)
      communicator_.send(tensor, peer);
    sends.queued();
    settle_send(communicator_, overlap_, tensor);
  } catch (const CommunicatorError& e) {
    if (e.kind() == CommErrorKind::aborted)
      return false;
    communicator_failure("channel " + std::to_string(channel_) + ": nccl send", e);
  } catch (const TensorError& e) { // CUDA refused the event after an overlapped send
    throw detail::ActorFailure("channel " + std::to_string(channel_) + ": nccl send: " + e.what());
  }
  return true;
}

bool NcclInputPort::read(Result<Tensor>& out) {
  return detail::watched(detail::ProfiledOp::read, channel_, profile_, nvtx_, out,
                         [&] { return read_unprofiled(out); });
}

bool NcclInputPort::read_unprofiled(Result<Tensor>& out) {
  Result<detail::TensorHeader> header;
  if (!header_.read(header))
    return false;
  if (!header.ok()) {
    out = Result<Tensor>(header.error()); // the writer sends nothing
    return true;
  }
  const detail::TensorHeader& h = header.value();
  if (!h.defined) {
    out = Result<Tensor>(Tensor{});
    return true;
  }
  const std::string where = "channel " + std::to_string(channel_) + ": nccl recv";
  try {
#if defined(CG_HAVE_CUDA)
    // With overlap the receive goes into memory made in the communication
    // stream's order, and waits for nothing on the legacy default stream:
    // it runs beside the kernels queued there (tensor/arrival_book.hpp).
    if (auto* nccl = dynamic_cast<NcclCommunicator*>(&communicator_);
        nccl != nullptr && !detail::transfer_order(overlap_).host_waits) {
      std::uint64_t bytes = dtype_size(h.dtype);
      for (const std::int64_t extent : h.shape)
        bytes *= static_cast<std::uint64_t>(extent);
      detail::TimedSpan receive(
          detail::device_work(profile_, detail::ProfiledOp::device_read, channel_, bytes),
          nccl->stream(), detail::DeviceTimer::Start::as_queued);
      Tensor tensor = nccl->recv_new(h.dtype, h.shape, 0);
      receive.queued();
      detail::expect_arrival(tensor, nccl->stream());
      out = Result<Tensor>(std::move(tensor));
      return true;
    }
#endif
    Tensor tensor = Tensor::empty(h.dtype, h.shape, device_of(communicator_));
    detail::TimedSpan receive(
        detail::device_work(profile_, detail::ProfiledOp::device_read, channel_, tensor.nbytes()),
        communicator_.cuda_stream(), detail::DeviceTimer::Start::after_legacy_stream);
    communicator_.recv(tensor, 0);
    receive.queued();
    communicator_.synchronize();
    out = Result<Tensor>(std::move(tensor));
  } catch (const CommunicatorError& e) {
    if (e.kind() == CommErrorKind::aborted)
      return false;
    communicator_failure(where, e);
  } catch (const std::exception& e) { // a header that cannot be allocated
    throw detail::ActorFailure(where + ": " + e.what());
  }
  return true;
}

DeviceInputPort::DeviceInputPort(ChannelReader reader, std::uint32_t channel, Device device,
                                 std::string actor, std::string method,
                                 detail::ActorProfile* profile, const char* nvtx)
    : reader_(std::move(reader)), channel_(channel), device_(device),
      cuda_devices_(device.kind == DeviceKind::cuda ? cuda_device_count() : 0),
      actor_(std::move(actor)), method_(std::move(method)), profile_(profile), nvtx_(nvtx) {
  if (device_.kind == DeviceKind::cuda && device_.index < cuda_devices_) {
    pinned_ = detail::pin_mappings_for(device_.index, detail::PinnedAccess::read_only);
    reader_.observe_mappings(pinned_.get());
  }
}

bool DeviceInputPort::read(Result<Tensor>& out) {
  return detail::watched(detail::ProfiledOp::read, channel_, profile_, nvtx_, out,
                         [&] { return read_unprofiled(out); });
}

bool DeviceInputPort::read_unprofiled(Result<Tensor>& out) {
  ChannelReader::Message message;
  ChannelStatus status = reader_.acquire(message, Deadline::max());
  if (status == ChannelStatus::closed)
    return false;
  if (status != ChannelStatus::ok)
    detail::channel_failure("read", channel_, status);
  try {
    if (message.kind == MessageKind::error) {
      out = Result<Tensor>(decode_all<ErrorRecord>(message.payload));
    } else if (device_.kind == DeviceKind::cpu) {
      out = Result<Tensor>(decode_all<Tensor>(message.payload));
    } else {
      Tensor host = detail::decode_tensor_view(message.payload);
      if (!host.defined())
        out = Result<Tensor>(Tensor{});
      else if (device_.index >= cuda_devices_)
        out = Result<Tensor>(
            ErrorRecord{actor_, method_, "cg::TensorError",
                        "cannot copy " + host.describe() + " to " + to_string(device_) +
                            " (channel " + std::to_string(channel_) + "): this process has " +
                            (cuda_devices_ == 0 ? std::string("no CUDA device")
                                                : std::to_string(cuda_devices_) + " CUDA device" +
                                                      (cuda_devices_ == 1 ? "" : "s")) +
                            (built_with_cuda() ? "" : " (the runtime was built without CUDA)")});
      else
        out = Result<Tensor>(host.to(device_)); // one copy, from the slot
    }
  } catch (const DecodeError& e) {
    out = Result<Tensor>(detail::undecodable(actor_, channel_, e));
  } catch (const std::exception& e) {
    out = Result<Tensor>(ErrorRecord{actor_, method_, detail::current_exception_type(), e.what()});
  }
  reader_.release();
  return true;
}

std::size_t Codec<detail::TensorToHost>::size(const detail::TensorToHost& wrapped) {
  const Tensor& t = wrapped.tensor;
  if (!t.defined() || t.device().kind == DeviceKind::cpu)
    return Codec<Tensor>::size(t);
  if (!t.is_contiguous())
    throw TensorError("cg: " + t.describe() +
                      " is not contiguous; make it so on its device before it is written");
  return detail::wire_header_bytes(t) + t.nbytes();
}

void Codec<detail::TensorToHost>::encode(Encoder& e, const detail::TensorToHost& wrapped) {
  const Tensor& t = wrapped.tensor;
  if (!t.defined() || t.device().kind == DeviceKind::cpu)
    return Codec<Tensor>::encode(e, t);
  detail::encode_wire_header(e, t);
  detail::cuda_copy(e.reserve(t.nbytes()).data(), t.data_ptr(), t.nbytes()); // the one copy
}

bool DeviceOutputPort::write(const Result<Tensor>& result) {
  using Wire = detail::TensorToHost;
  if (!result.ok())
    return port_.write(Result<Wire>(result.error()));
  // From the first tensor on a GPU, the buffers large ones are copied into
  // are pinned (an actor that never has one never touches CUDA here).
  if (const Device device = result.value().device();
      !pinned_ && device.kind == DeviceKind::cuda && device.index < cuda_device_count()) {
    pinned_ = detail::pin_mappings_for(device.index, detail::PinnedAccess::read_write);
    port_.observe_mappings(pinned_.get());
  }
  try {
    return port_.write(Result<Wire>(Wire{result.value()}));
  } catch (const std::exception& e) { // a strided CUDA tensor, a copy CUDA refused
    return port_.write(
        Result<Wire>(ErrorRecord{actor_, method_, detail::current_exception_type(), e.what()}));
  }
}

Result<Tensor> ActorProcess::allreduce(Communicator& communicator, const Result<Tensor>& input,
                                       ReduceOp op) {
  return profiled_collective(CollectiveKind::allreduce, communicator, input, op);
}

Result<Tensor> ActorProcess::allgather(Communicator& communicator, const Result<Tensor>& input) {
  return profiled_collective(CollectiveKind::allgather, communicator, input, ReduceOp::sum);
}

Result<Tensor> ActorProcess::reducescatter(Communicator& communicator, const Result<Tensor>& input,
                                           ReduceOp op) {
  return profiled_collective(CollectiveKind::reducescatter, communicator, input, op);
}

// A collective is one of the actor's COMPUTE operations.
Result<Tensor> ActorProcess::profiled_collective(CollectiveKind kind, Communicator& communicator,
                                                 const Result<Tensor>& input, ReduceOp op) {
  const detail::NvtxRange range(nvtx_ ? nvtx_task(collective_name(kind)) : nullptr);
  Result<Tensor> result = collective(kind, communicator, input, op);
  if (profile_.recorder.on())
    profile_.computed();
  return result;
}

Result<Tensor> ActorProcess::collective(CollectiveKind kind, Communicator& communicator,
                                        const Result<Tensor>& input, ReduceOp op) {
  const char* method = collective_name(kind);
  const std::int64_t size = communicator.size();
  auto problem = [&](const std::string& why) {
    return ErrorRecord{name_, method, "cg::TensorError", why};
  };

  // An input still arriving (read ahead, with overlap) is waited for on the
  // GPU before the collective reads it (tensor/arrivals.hpp).
  std::optional<std::string> unarrived;
  if (input.ok()) {
    try {
      detail::await_arrival(input.value());
    } catch (const TensorError& e) {
      unarrived = e.what();
    }
  }

  // This rank's verdict on its input, before any blocking call.
  std::optional<ErrorRecord> failed;
  Tensor in;
  if (!input.ok()) {
    failed = input.error();
  } else {
    in = input.value();
    if (unarrived)
      failed = problem(*unarrived);
    else if (!in.defined())
      failed = problem("the input tensor is undefined");
    else if (auto why = unsendable(communicator, in, communicator_bytes()))
      failed = problem(*why);
    else if (kind != CollectiveKind::allreduce && in.dim() == 0)
      failed = problem(std::string(method) + " needs a tensor of at least one dimension, not " +
                       in.describe());
    else if (kind == CollectiveKind::reducescatter && in.shape()[0] % size != 0)
      failed = problem("reducescatter over " + std::to_string(size) +
                       " ranks needs dimension 0 to be a multiple of " + std::to_string(size) +
                       ", not " + in.describe());
  }

  // Where the communicator moves tensors (an NCCL one: its GPU; a host
  // input is copied there first, which can fail only on this rank).
  const Device device = device_of(communicator);
  if (!failed && device.kind == DeviceKind::cuda) {
    try {
      in = placed(communicator, in);
    } catch (const std::exception& e) {
      failed = problem(e.what());
    }
  }

  try {
    Tensor flag = Tensor::empty(DType::int32, {1});
    flag.data<std::int32_t>()[0] = failed ? 1 : 0;
    flag = flag.to(device);
    communicator.allreduce(flag, ReduceOp::max);
    communicator.synchronize();
    if (flag.to(device::cpu).data<std::int32_t>()[0] != 0)
      return Result<Tensor>(agreed_error(communicator, failed));

    if (!in.is_contiguous())
      in = in.contiguous();
    std::vector<std::int64_t> shape = in.shape();
    Tensor out;
    switch (kind) {
    case CollectiveKind::allreduce:
      out = copied(in); // the input stays as it was
      communicator.allreduce(out, op);
      break;
    case CollectiveKind::allgather:
      shape[0] *= size;
      out = Tensor::empty(in.dtype(), shape, device);
      communicator.allgather(in, out);
      break;
    case CollectiveKind::reducescatter:
      shape[0] /= size;
      out = Tensor::empty(in.dtype(), shape, device);
      communicator.reducescatter(in, out, op);
      break;
    }
    communicator.synchronize();
    return Result<Tensor>(std::move(out));
  } catch (const CommunicatorError& e) {
    // Every rank reports a mismatch (dtypes or shapes that differ between
    // ranks): a task error, the group stays usable.
    if (e.kind() == CommErrorKind::mismatch)
      return Result<Tensor>(ErrorRecord{name_, method, "cg::CommunicatorError", e.what()});
    communicator_failure(std::string(method) + " of actor '" + name_ + "'", e);
  }
  throw std::logic_error("cg: unknown collective");
}

} // namespace cg
