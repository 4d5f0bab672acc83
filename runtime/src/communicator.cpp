// communicator.cpp - names of the communicator's error kinds and reductions.
#include "cg/communicator.hpp"

namespace cg {

std::string_view to_string(CommErrorKind kind) noexcept {
  switch (kind) {
    case CommErrorKind::timeout: return "timeout";
    case CommErrorKind::aborted: return "aborted";
    case CommErrorKind::mismatch: return "mismatch";
    case CommErrorKind::invalid: return "invalid";
    case CommErrorKind::backend: return "backend";
  }
  return "unknown";
}

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::product: return "product";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "reduce-op(invalid)";
}

}  // namespace cg
