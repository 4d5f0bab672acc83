// tensor/tensor_wire.hpp - the host tensor's wire format (cg::Codec<cg::Tensor>), for writers
// that copy the elements themselves (internal).
//
// DeviceOutputPort writes a CUDA tensor in this format by copying its
// elements from the device straight into the channel slot after the header.
#pragma once

#include <cg/serialize.hpp>
#include <cg/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cg::detail {

/// The elements of an encoded tensor start at a multiple of this many bytes
/// from the start of its encoding: a tensor that is a whole message (whose
/// payload starts on a cache line) has its elements aligned for any type and
/// vector instruction where they arrive, as a view of them needs
/// (decode_tensor_view, a graph's input tensors made in place).
inline constexpr std::size_t wire_element_alignment = 64;

/// Bytes of the header's fields: kind and dtype (u8 each), ndim (u64), the
/// shape and the strides (i64 each), the byte count (u64).
constexpr std::size_t wire_field_bytes(std::size_t ndim) {
  return 2 + sizeof(std::uint64_t) * 2 + 2 * sizeof(std::int64_t) * ndim;
}

/// Bytes of a defined tensor's encoding before its elements: the fields,
/// then zero bytes up to the next multiple of wire_element_alignment.
std::size_t wire_header_bytes(std::size_t ndim);
std::size_t wire_header_bytes(const Tensor& t);

/// Bytes of the encoding of a contiguous host tensor of `dtype` and `shape`:
/// header and elements. Throws TensorError for a negative extent or a size
/// that overflows.
std::size_t wire_bytes(DType dtype, const std::vector<std::int64_t>& shape);

/// Writes those bytes: kind, dtype, shape, the contiguous strides, the byte
/// count, the padding.
void encode_wire_header(Encoder& e, const Tensor& t);

} // namespace cg::detail
