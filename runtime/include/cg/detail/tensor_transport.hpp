// cg/detail/tensor_transport.hpp - NCCL edges, collectives and device deliveries in the generated
// actor programs.
//
// A value sent with `with_tensor_transport(cg::transport::nccl)` (always a
// cg::Tensor, cgc checks) travels in two parts: its header (dtype and shape,
// or the ErrorRecord that replaced it upstream) through an ordinary channel
// of the segment, and its elements through the actors' Communicator, the
// writer being rank 0 of the edge's group and its readers ranks 1, 2, ... in
// reader-slot order. A reader allocates the tensor from the header, then
// receives into it; a header holding an error skips the transfer on both
// sides, so errors reach the driver's get() even when the data would have
// gone GPU to GPU.
//
// A collective (allreduce, allgather, reducescatter) first agrees on whether
// every rank has a usable input: an allreduce(max) of a one-element int32
// flag. If any rank has none, all skip the collective and give the error of
// the lowest such rank (exchanged by an allgather of fixed-size records),
// so the members never disagree about which blocking calls they make.
//
// Over an NcclCommunicator (LaunchOptions::communicator = nccl) tensors live
// on the communicator's GPU: a host tensor sent or given to a collective is
// copied there first, received and collective results are allocated there,
// and each call is followed by synchronize(). Over the host communicator
// they are host tensors, as before.
//
// A value with `with_tensor_transport(cg::device::cuda)` (or `cpu`) is no
// communicator's business: it crosses an ordinary channel as a host tensor
// (DeviceOutputPort copies a CUDA result from its device into the slot) and each reader's
// DeviceInputPort copies it from the slot to its device; a reader that has no
// such device gets the value's error record (cg::TensorError) instead.
//
// A communicator that was aborted (teardown, a dead actor) ends the actor's
// loop as a closed channel does: reads and writes return false, and a
// collective throws GraphStopped, which the actor's host treats as a normal
// end. Any other communicator failure is an ActorFailure.
#pragma once

#include <cg/communicator.hpp>
#include <cg/detail/channel.hpp>
#include <cg/detail/error_codec.hpp>
#include <cg/serialize.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg {

template <class T> class Result;
template <class T> class InputPort;
template <class T> class OutputPort;

namespace detail {

/// What travels through the channel of an NCCL edge: the tensor without its
/// elements.
struct TensorHeader {
  bool defined = false; // false: a default-constructed Tensor, nothing to transfer
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
};

/// A tensor written to a channel in the host tensor's wire format (cg::Codec<
/// cg::Tensor>, which readers decode) wherever it is: a contiguous CUDA tensor
/// is copied from its device straight into the slot, one copy.
struct TensorToHost {
  Tensor tensor;
};

/// The graph stopped (teardown, a dead actor) while this actor waited in a
/// communicator call: its loop ends as it does on a closed channel.
class GraphStopped : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace detail

/// Codec<Tensor>'s bytes; size() throws TensorError for a strided CUDA tensor
/// (before any slot is taken), encode() for a copy CUDA refuses.
template <> struct Codec<detail::TensorToHost> {
  static std::size_t size(const detail::TensorToHost& t);
  static void encode(Encoder& e, const detail::TensorToHost& t);
};

/// u8 defined, u8 dtype, the shape as std::vector<i64>; the dtype is checked.
template <> struct Codec<detail::TensorHeader> {
  static std::size_t size(const detail::TensorHeader& h) { return 2 + encoded_size(h.shape); }
  static void encode(Encoder& e, const detail::TensorHeader& h) {
    cg::encode(e, static_cast<std::uint8_t>(h.defined));
    cg::encode(e, static_cast<std::uint8_t>(h.dtype));
    cg::encode(e, h.shape);
  }
  static detail::TensorHeader decode(Decoder& d) {
    detail::TensorHeader h;
    h.defined = cg::decode<std::uint8_t>(d) != 0;
    auto dtype = static_cast<DType>(cg::decode<std::uint8_t>(d));
    if (!is_valid(dtype))
      throw DecodeError("cg: tensor header with an invalid dtype");
    h.dtype = dtype;
    h.shape = cg::decode<std::vector<std::int64_t>>(d);
    for (std::int64_t extent : h.shape)
      if (extent < 0)
        throw DecodeError("cg: tensor header with a negative extent");
    return h;
  }
};

} // namespace cg
