// comm/host_reduce.hpp - elementwise reduction of host buffers, for HostCommunicator (internal).
#pragma once

#include <cg/dtype.hpp>
#include <cg/reduce_op.hpp>

#include <cstddef>
#include <span>

namespace cg::detail {

/// True when `op` is defined for `dtype` (bool: min, max and product only).
bool reduction_supported(DType dtype, ReduceOp op) noexcept;

/// out[i] = sources[0][i] op sources[1][i] op ... for i < count, combining in
/// the order of `sources`, so every caller with the same sources gets the
/// same bits. float16/bfloat16 combine in float and round once; integers
/// wrap; avg divides the sum by sources.size() (integers truncate). `out` may
/// alias sources[0]. Preconditions: reduction_supported, !sources.empty().
void reduce(DType dtype, ReduceOp op, std::span<const std::byte* const> sources, std::byte* out,
            std::size_t count) noexcept;

} // namespace cg::detail
