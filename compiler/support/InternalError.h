//===- InternalError.h - The compiler is wrong, not the user ----*- C++ -*-===//
//
// The one way any part of cgc reports a bug of its own: a broken invariant
// between passes, a record the decoder cannot read, a schedule the simulator
// refutes. cgc catches InternalError by type, prints its message and exits 70;
// the user's mistakes are diagnostics (ir/Diagnostic.h), never this.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace cg {

/// A bug in cgc. what() is "internal compiler error: <what went wrong>".
class InternalError : public std::logic_error {
public:
  explicit InternalError(std::string_view what)
      : std::logic_error("internal compiler error: " + std::string(what)) {}
};

/// Throws InternalError(what).
[[noreturn]] inline void internalError(std::string_view what) { throw InternalError(what); }

} // namespace cg
