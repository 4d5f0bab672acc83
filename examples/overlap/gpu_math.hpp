// gpu_math.hpp - the GPU work of the overlap example: a tensor filled with one value, and a
// square matrix product through cuBLAS.
//
// Defined in gpu_math.cpp, compiled once and linked into the actors
// (add_compiled_graph(... LINK_LIBRARIES overlap_gpu_math)); this header
// names no CUDA type, so cgc parses the graph without CUDA's headers.
#pragma once

#include <cg/tensor.hpp>

#include <cstdint>

namespace overlap {

/// An n x n float16 tensor on this process's first GPU, every element
/// `value` (filled on the GPU, on the legacy default stream).
cg::Tensor filled(std::int64_t n, float value);

/// `a` x `a` into `out` (both n x n float16 on one GPU, row-major) with
/// cuBLAS, queued on the legacy default stream. cuBLAS is loaded on first
/// use from CG_CUBLAS_LIBRARY, else as libcublas.so.13; a TensorError says
/// why when it cannot be.
void square(const cg::Tensor& a, cg::Tensor& out);

/// Element (0, 0) of a float16 CUDA tensor, as a float (waits for the
/// legacy default stream).
float first_element(const cg::Tensor& t);

} // namespace overlap
