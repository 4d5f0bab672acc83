// cg/reduce_op.hpp - The reductions of allreduce and reducescatter.
//
//   g.output(cg::allreduce(g, {w0.grad(x0), w1.grad(x1)}, cg::ReduceOp::sum));
//   comm.allreduce(grads, cg::ReduceOp::avg);   // cg/communicator.hpp
//
// Shared by the graph language (cg/builder.hpp), the communicators and cgc,
// which reads the enumerators' values from a graph's records
// (cg/detail/graph_records.hpp) and names them with to_string().
#pragma once

#include <string_view>

namespace cg {

/// The reduction of cg::allreduce and cg::reducescatter.
enum class ReduceOp : int { sum = 0, product = 1, min = 2, max = 3, avg = 4 };

/// "sum", "product", "min", "max" or "avg"; "reduce-op(invalid)" for a value out of range.
constexpr std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
  case ReduceOp::sum:
    return "sum";
  case ReduceOp::product:
    return "product";
  case ReduceOp::min:
    return "min";
  case ReduceOp::max:
    return "max";
  case ReduceOp::avg:
    return "avg";
  }
  return "reduce-op(invalid)";
}

} // namespace cg
