// cuda_ipc_ports.cpp - the ends of a `cg::transport::cuda_ipc` edge in the generated actor
// programs (the buffers and events themselves: tensor/cuda_ipc.hpp).
//
// A message is the tensor's header (cg::detail::TensorHeader) and, for a
// defined tensor, a CudaIpcCarrier byte, then either the CudaIpcBlock saying
// where its elements wait or, for a tensor of at most kInMessageBytes that
// fits the slot, the elements themselves: one message, so a reader never
// pairs one execution's shape with another's elements. Errors travel as
// error records, as on every channel.
#include "actor/tensor_port_watch.hpp"
#include "tensor/cuda_ipc.hpp"
#include <cg/actor.hpp>

#include <utility>

namespace cg {
namespace {

// Why this process cannot move tensors over CUDA IPC, or "" when it can.
std::string without_device(int cuda_devices) {
  if (cuda_devices > 0)
    return "";
  return std::string("this process has no CUDA device") +
         (built_with_cuda() ? "" : " (the runtime was built without CUDA)");
}

// "float32[2, 3]" of a header.
std::string describe(const detail::TensorHeader& header) {
  std::string text = std::string(to_string(header.dtype)) + "[";
  for (std::size_t i = 0; i < header.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(header.shape[i]);
  return text + "]";
}

} // namespace

CudaIpcOutputPort::CudaIpcOutputPort(ChannelWriter writer, std::uint32_t channel,
                                     std::uint32_t max_in_flight, std::uint32_t slot_bytes,
                                     int device, std::string actor, std::string method,
                                     detail::ActorProfile* profile, const char* nvtx)
    : writer_(std::move(writer)), channel_(channel), max_in_flight_(max_in_flight),
      slot_bytes_(slot_bytes), device_(device), cuda_devices_(cuda_device_count()),
      actor_(std::move(actor)), method_(std::move(method)), profile_(profile), nvtx_(nvtx) {}
CudaIpcOutputPort::CudaIpcOutputPort(CudaIpcOutputPort&&) noexcept = default;
CudaIpcOutputPort::~CudaIpcOutputPort() = default;

bool CudaIpcOutputPort::put_error(const ErrorRecord& record) {
  const ErrorRecord fitted = detail::fit_to_slot(record, slot_bytes_);
  std::span<std::byte> payload;
  const ChannelStatus status = writer_.acquire(encoded_size(fitted), payload, Deadline::max());
  if (status == ChannelStatus::closed)
    return false;
  if (status != ChannelStatus::ok)
    detail::channel_failure("write", channel_, status);
  Encoder encoder(payload);
  encode(encoder, fitted);
  writer_.publish(MessageKind::error, encoder.written());
  return true;
}

bool CudaIpcOutputPort::write(const Result<Tensor>& result) {
  return detail::watched(detail::ProfiledOp::write, channel_, profile_, nvtx_, result,
                         [&] { return write_unprofiled(result); });
}

bool CudaIpcOutputPort::write_unprofiled(const Result<Tensor>& result) {
  if (!result.ok())
    return put_error(result.error());
  const Tensor& tensor = result.value();
  auto refused = [&](const std::string& why) {
    return put_error({actor_, method_, "cg::TensorError",
                      "cannot send " + tensor.describe() + " over cuda_ipc (channel " +
                          std::to_string(channel_) + "): " + why});
  };
  detail::TensorHeader header;
  if (tensor.defined()) {
    if (std::string why = without_device(cuda_devices_); !why.empty())
      return refused(why);
    header = {true, tensor.dtype(), tensor.shape()};
  }
  const std::size_t elements = header.defined ? tensor.nbytes() : 0;
  std::size_t bytes = encoded_size(header);
  const bool in_message =
      header.defined && elements <= detail::kInMessageBytes && bytes + 1 + elements <= slot_bytes_;
  if (header.defined)
    bytes += 1 + (in_message ? elements : Codec<detail::CudaIpcBlock>::kBytes);
  std::span<std::byte> payload;
  // The slot first: its buffer is free only once every reader released it.
  const ChannelStatus status = writer_.acquire(bytes, payload, Deadline::max());
  if (status == ChannelStatus::closed)
    return false;
  if (status != ChannelStatus::ok)
    detail::channel_failure("write", channel_, status);
  Encoder encoder(payload);
  encode(encoder, header);
  if (header.defined) {
    const auto carrier =
        in_message ? detail::CudaIpcCarrier::in_message : detail::CudaIpcCarrier::device_buffer;
    encode(encoder, static_cast<std::uint8_t>(carrier));
    try {
      if (!sender_)
        sender_ = std::make_unique<detail::CudaIpcSender>(max_in_flight_, device_);
      const Tensor& contiguous = tensor.is_contiguous() ? tensor : tensor.contiguous();
      const detail::TimedWork timed =
          detail::device_work(profile_, detail::ProfiledOp::device_write, channel_, elements);
      if (in_message) {
        sender_->copy_out(contiguous, encoder.reserve(elements), timed);
      } else {
        const auto slot = static_cast<std::uint32_t>(writer_.published() % max_in_flight_);
        encode(encoder, sender_->stage(slot, contiguous, timed));
      }
    } catch (const std::exception& e) { // a strided CUDA tensor, no memory, CUDA refused
      return refused(e.what());         // acquiring again gives the same slot
    }
  }
  writer_.publish(MessageKind::value, encoder.written());
  return true;
}

CudaIpcInputPort::CudaIpcInputPort(ChannelReader reader, std::uint32_t channel,
                                   std::uint32_t max_in_flight, int device, Overlap overlap,
                                   std::string actor, std::string method,
                                   detail::ActorProfile* profile, const char* nvtx)
    : reader_(std::move(reader)), channel_(channel), max_in_flight_(max_in_flight), device_(device),
      overlap_(overlap == Overlap::on && max_in_flight >= 2), cuda_devices_(cuda_device_count()),
      actor_(std::move(actor)), method_(std::move(method)), profile_(profile), nvtx_(nvtx) {}
CudaIpcInputPort::CudaIpcInputPort(CudaIpcInputPort&&) noexcept = default;

CudaIpcInputPort::~CudaIpcInputPort() {
  if (holding_ && receiver_) {
    try {
      receiver_->finish();
    } catch (const std::exception&) {
      // The copy is lost with the actor; the writer is going away too.
    }
    reader_.release();
  }
}

void CudaIpcInputPort::settle() {
  if (!holding_)
    return;
  holding_ = false;
  try {
    receiver_->finish();
  } catch (const TensorError& e) { // the device failed under a copy already handed out
    throw detail::ActorFailure("channel " + std::to_string(channel_) +
                               ": cuda_ipc copy: " + e.what());
  }
  reader_.release();
}

Result<Tensor> CudaIpcInputPort::receive(const ChannelReader::Message& message, bool& holding) {
  if (message.kind == MessageKind::error)
    return Result<Tensor>(decode_all<ErrorRecord>(message.payload));
  Decoder decoder(message.payload);
  const auto header = decode<detail::TensorHeader>(decoder);
  if (!header.defined) {
    if (decoder.remaining() != 0)
      throw DecodeError("cg: bytes after an undefined tensor's header");
    return Result<Tensor>(Tensor{});
  }
  const auto carrier = decode<std::uint8_t>(decoder);
  const bool in_message = carrier == static_cast<std::uint8_t>(detail::CudaIpcCarrier::in_message);
  if (!in_message && carrier != static_cast<std::uint8_t>(detail::CudaIpcCarrier::device_buffer))
    throw DecodeError("cg: a cuda_ipc message says its elements are in place " +
                      std::to_string(carrier) + ", which no writer sends");
  std::span<const std::byte> elements;
  detail::CudaIpcBlock block;
  if (in_message) {
    elements = decoder.take(decoder.remaining());
  } else {
    block = decode<detail::CudaIpcBlock>(decoder);
    if (decoder.remaining() != 0)
      throw DecodeError("cg: bytes after a cuda_ipc block");
  }
  auto refused = [&](const std::string& why) {
    return Result<Tensor>(ErrorRecord{actor_, method_, "cg::TensorError",
                                      "cannot receive " + describe(header) +
                                          " over cuda_ipc (channel " + std::to_string(channel_) +
                                          "): " + why});
  };
  if (std::string why = without_device(cuda_devices_); !why.empty())
    return refused(why);
  try {
    if (!receiver_)
      receiver_ = std::make_unique<detail::CudaIpcReceiver>(max_in_flight_, device_);
    const detail::TimedWork timed =
        detail::device_work(profile_, detail::ProfiledOp::device_read, channel_,
                            in_message ? elements.size() : block.bytes);
    if (in_message) // read when this returns: the slot may go back at once
      return Result<Tensor>(receiver_->copy_in(elements, header.dtype, header.shape, timed));
    const auto slot = static_cast<std::uint32_t>(message.sequence % max_in_flight_);
    Tensor tensor = receiver_->receive(slot, block, header.dtype, header.shape, overlap_, timed);
    holding = overlap_;
    return Result<Tensor>(std::move(tensor));
  } catch (const TensorError& e) {
    return refused(e.what());
  }
}

bool CudaIpcInputPort::read(Result<Tensor>& out) {
  return detail::watched(detail::ProfiledOp::read, channel_, profile_, nvtx_, out,
                         [&] { return read_unprofiled(out); });
}

bool CudaIpcInputPort::read_unprofiled(Result<Tensor>& out) {
  settle();
  ChannelReader::Message message;
  const ChannelStatus status = reader_.acquire(message, Deadline::max());
  if (status == ChannelStatus::closed)
    return false;
  if (status != ChannelStatus::ok)
    detail::channel_failure("read", channel_, status);
  bool holding = false;
  try {
    out = receive(message, holding);
  } catch (const DecodeError& e) {
    out = Result<Tensor>(detail::undecodable(actor_, channel_, e));
  } catch (const std::exception& e) { // bad_alloc
    out = Result<Tensor>(ErrorRecord{actor_, method_, detail::current_exception_type(), e.what()});
  }
  if (holding)
    holding_ = true; // released by settle(), once the copy is done
  else
    reader_.release(); // the copy is done: the writer may reuse the slot's buffer
  return true;
}

} // namespace cg
