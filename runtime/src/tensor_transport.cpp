// tensor_transport.cpp - NCCL edges and collectives of the generated actor programs.
//
// See cg/detail/tensor_transport.hpp for the protocol. What each side checks
// before any blocking call is chosen so that the ranks always agree on the
// calls they make: a problem with one tensor becomes that task's error
// record on every side, never a rank left waiting for a peer that skipped.
#include <cg/actor.hpp>

#include <cstring>
#include <optional>
#include <utility>

namespace cg {
namespace {

// Each rank's error record, when a collective's input failed, travels in a
// block of this many bytes: a u32 length (0: this rank's input was fine),
// then the record, shortened to fit.
constexpr std::size_t kErrorBlockBytes = detail::kMinSlotBytes;

std::span<std::byte> bytes_of(const Tensor& t) {
  return {static_cast<std::byte*>(t.data_ptr()), t.nbytes()};
}

// Why `t` cannot be sent through a host communicator of `max_bytes` per
// message, or nothing.
std::optional<std::string> unsendable(const Tensor& t, std::uint64_t max_bytes) {
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

[[noreturn]] void communicator_failure(const std::string& where, const CommunicatorError& e) {
  if (e.kind() == CommErrorKind::aborted)
    throw detail::GraphStopped(where + ": " + e.what());
  throw detail::ActorFailure(where + ": " + e.what());
}

// Every rank learns the error of the lowest rank whose input failed.
ErrorRecord agreed_error(Communicator& communicator, const std::optional<ErrorRecord>& mine) {
  Tensor block = Tensor::zeros(DType::uint8, {static_cast<std::int64_t>(kErrorBlockBytes)});
  if (mine) {
    ErrorRecord record = detail::fit_to_slot(*mine, kErrorBlockBytes - sizeof(std::uint32_t));
    Encoder encoder(bytes_of(block));
    encode(encoder, static_cast<std::uint32_t>(encoded_size(record)));
    encode(encoder, record);
  }
  Tensor all = Tensor::empty(
      DType::uint8, {static_cast<std::int64_t>(kErrorBlockBytes) * communicator.size()});
  communicator.allgather(block, all);
  for (int rank = 0; rank < communicator.size(); ++rank) {
    std::span<const std::byte> theirs = bytes_of(all).subspan(rank * kErrorBlockBytes,
                                                              kErrorBlockBytes);
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

} // namespace

bool NcclOutputPort::write(const Result<Tensor>& result) {
  if (!result.ok())
    return header_.write(Result<detail::TensorHeader>(result.error()));
  Tensor tensor = result.value();
  if (!tensor.defined())
    return header_.write(Result<detail::TensorHeader>(detail::TensorHeader{}));
  if (auto why = unsendable(tensor, max_bytes_))
    return header_.write(Result<detail::TensorHeader>(
        ErrorRecord{actor_, method_, "cg::TensorError",
                    "cannot send over nccl (channel " + std::to_string(channel_) + "): " + *why}));
  if (!header_.write(Result<detail::TensorHeader>(
          detail::TensorHeader{true, tensor.dtype(), tensor.shape()})))
    return false;
  if (!tensor.is_contiguous())
    tensor = tensor.contiguous();
  try {
    for (int peer = 1; peer < communicator_.size(); ++peer)
      communicator_.send(tensor, peer);
  } catch (const CommunicatorError& e) {
    if (e.kind() == CommErrorKind::aborted)
      return false;
    communicator_failure("channel " + std::to_string(channel_) + ": nccl send", e);
  }
  return true;
}

bool NcclInputPort::read(Result<Tensor>& out) {
  Result<detail::TensorHeader> header;
  if (!header_.read(header))
    return false;
  if (!header.ok()) {
    out = Result<Tensor>(header.error());  // the writer sends nothing
    return true;
  }
  const detail::TensorHeader& h = header.value();
  if (!h.defined) {
    out = Result<Tensor>(Tensor{});
    return true;
  }
  const std::string where = "channel " + std::to_string(channel_) + ": nccl recv";
  try {
    Tensor tensor = Tensor::empty(h.dtype, h.shape, device_);
    communicator_.recv(tensor, 0);
    out = Result<Tensor>(std::move(tensor));
  } catch (const CommunicatorError& e) {
    if (e.kind() == CommErrorKind::aborted)
      return false;
    communicator_failure(where, e);
  } catch (const std::exception& e) {  // a header that cannot be allocated
    throw detail::ActorFailure(where + ": " + e.what());
  }
  return true;
}

Result<Tensor> ActorProcess::allreduce(Communicator& communicator, const Result<Tensor>& input,
                                       ReduceOp op) {
  return collective(CollectiveKind::allreduce, communicator, input, op);
}

Result<Tensor> ActorProcess::allgather(Communicator& communicator, const Result<Tensor>& input) {
  return collective(CollectiveKind::allgather, communicator, input, ReduceOp::sum);
}

Result<Tensor> ActorProcess::reducescatter(Communicator& communicator,
                                           const Result<Tensor>& input, ReduceOp op) {
  return collective(CollectiveKind::reducescatter, communicator, input, op);
}

Result<Tensor> ActorProcess::collective(CollectiveKind kind, Communicator& communicator,
                                        const Result<Tensor>& input, ReduceOp op) {
  const char* method = kind == CollectiveKind::allreduce   ? "allreduce"
                       : kind == CollectiveKind::allgather ? "allgather"
                                                           : "reducescatter";
  const std::int64_t size = communicator.size();
  auto problem = [&](const std::string& why) {
    return ErrorRecord{name_, method, "cg::TensorError", why};
  };

  // This rank's verdict on its input, before any blocking call.
  std::optional<ErrorRecord> failed;
  Tensor in;
  if (!input.ok()) {
    failed = input.error();
  } else {
    in = input.value();
    if (!in.defined())
      failed = problem("the input tensor is undefined");
    else if (auto why = unsendable(in, communicator_bytes()))
      failed = problem(*why);
    else if (kind != CollectiveKind::allreduce && in.dim() == 0)
      failed = problem(std::string(method) + " needs a tensor of at least one dimension, not " +
                       in.describe());
    else if (kind == CollectiveKind::reducescatter && in.shape()[0] % size != 0)
      failed = problem("reducescatter over " + std::to_string(size) +
                       " ranks needs dimension 0 to be a multiple of " + std::to_string(size) +
                       ", not " + in.describe());
  }

  try {
    Tensor flag = Tensor::empty(DType::int32, {1});
    flag.data<std::int32_t>()[0] = failed ? 1 : 0;
    communicator.allreduce(flag, ReduceOp::max);
    if (flag.data<std::int32_t>()[0] != 0)
      return Result<Tensor>(agreed_error(communicator, failed));

    if (!in.is_contiguous())
      in = in.contiguous();
    std::vector<std::int64_t> shape = in.shape();
    switch (kind) {
    case CollectiveKind::allreduce: {
      Tensor out = Tensor::empty(in.dtype(), shape);  // the input stays as it was
      std::memcpy(out.data_ptr(), in.data_ptr(), in.nbytes());
      communicator.allreduce(out, op);
      return Result<Tensor>(std::move(out));
    }
    case CollectiveKind::allgather: {
      shape[0] *= size;
      Tensor out = Tensor::empty(in.dtype(), shape);
      communicator.allgather(in, out);
      return Result<Tensor>(std::move(out));
    }
    case CollectiveKind::reducescatter: {
      shape[0] /= size;
      Tensor out = Tensor::empty(in.dtype(), shape);
      communicator.reducescatter(in, out, op);
      return Result<Tensor>(std::move(out));
    }
    }
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
