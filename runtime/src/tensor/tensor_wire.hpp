// tensor/tensor_wire.hpp - the host tensor's wire format (cg::Codec<cg::Tensor>), for writers
// that copy the elements themselves (internal).
//
// DeviceOutputPort writes a CUDA tensor in this format by copying its
// elements from the device straight into the channel slot after the header.
#pragma once

#include <cg/serialize.hpp>
#include <cg/tensor.hpp>

#include <cstddef>

namespace cg::detail {

/// Bytes of a defined tensor's encoding before its elements.
std::size_t wire_header_bytes(const Tensor& t);

/// Writes those bytes: kind, dtype, shape, the contiguous strides, the byte count.
void encode_wire_header(Encoder& e, const Tensor& t);

} // namespace cg::detail
