// tensor/tensor_copy.hpp - copying a strided host tensor to and from packed bytes (internal).
//
// The codec and HostCommunicator move a tensor's elements in row-major order
// whatever its strides; these walk it as few contiguous runs as its layout
// allows (one for a contiguous tensor).
#pragma once

#include <cg/tensor.hpp>

#include <cstddef>
#include <functional>
#include <span>

namespace cg::detail {

/// Calls fn(run, bytes) for the tensor's elements in row-major order, in as
/// few contiguous runs as its strides allow. Host memory only: the caller
/// checks the device.
void for_each_run(const Tensor& t,
                  const std::function<void(std::byte* run, std::size_t bytes)>& fn);

/// Copies the elements of a host tensor into `out` (nbytes() bytes), row-major.
void gather(const Tensor& t, std::byte* out);

/// Copies nbytes() bytes from `in` into the elements of a host tensor, row-major.
void scatter(const std::byte* in, const Tensor& t);

/// A whole encoded cg::Tensor (Codec<Tensor>), checked as decode() checks it
/// except bool bytes, as a host tensor borrowing its elements where they are
/// in `encoded` (which must outlive it): how a device transport copies a
/// value to the GPU straight from its channel slot. DecodeError if corrupt.
Tensor decode_tensor_view(std::span<const std::byte> encoded);

} // namespace cg::detail
