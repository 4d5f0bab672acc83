// communicator.cpp - names of the communicator's error kinds.
#include <cg/communicator.hpp>

namespace cg {

std::string_view to_string(CommErrorKind kind) noexcept {
  switch (kind) {
  case CommErrorKind::timeout:
    return "timeout";
  case CommErrorKind::aborted:
    return "aborted";
  case CommErrorKind::mismatch:
    return "mismatch";
  case CommErrorKind::invalid:
    return "invalid";
  case CommErrorKind::backend:
    return "backend";
  }
  return "unknown";
}

} // namespace cg
