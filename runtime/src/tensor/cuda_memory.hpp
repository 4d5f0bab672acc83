// tensor/cuda_memory.hpp - the few CUDA memory calls cg::Tensor makes (internal).
//
// Declared in both configurations so that tensor.cpp has no #ifdef; without
// CUDA each call throws cg::TensorError explaining how to get a CUDA build.
#pragma once

#include <cstddef>

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace cg::detail {

/// `bytes` (at least 1) of device `index`'s memory, from its memory pool in
/// the order of the legacy default stream (see cuda_memory.cpp), leaving the
/// calling thread's current device as it was. Throws TensorError with CUDA's
/// message. With `stream` (a cudaStream_t of that device), in its order
/// instead: the memory is ready for work queued there after this call.
void* cuda_allocate(std::size_t bytes, int index, CUstream_st* stream = nullptr);

/// Gives a pointer from cuda_allocate back, after the work queued on the
/// legacy default stream so far; errors are ignored (it runs in destructors,
/// possibly after the driver has shut down at exit).
void cuda_free(void* pointer, int index) noexcept;

/// cudaMemcpy with cudaMemcpyDefault (host or device on either side, unified
/// addressing), synchronous. Throws TensorError with CUDA's message.
void cuda_copy(void* dst, const void* src, std::size_t bytes);

/// cudaMemset(pointer, 0, bytes) on device `index`, synchronous.
void cuda_zero(void* pointer, std::size_t bytes, int index);

/// cudaMallocHost: page-locked host memory, which the GPU's copy engines
/// read and write directly (the baseline of host <-> device bandwidth).
void* cuda_allocate_pinned(std::size_t bytes);

/// cudaFreeHost of a pointer from cuda_allocate_pinned; errors are ignored.
void cuda_free_pinned(void* pointer) noexcept;

} // namespace cg::detail
