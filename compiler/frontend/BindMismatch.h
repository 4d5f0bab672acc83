//===- BindMismatch.h - A bind argument of the wrong type, in graph terms -*- C++ -*-===//
//
// `post.bind<&Post::combine>(x, y)` with an argument of the wrong type fails
// overload resolution among bind's arity overloads, and Clang reports it as
// `no matching member function for call to 'bind'` with a note per overload,
// naming `detail::arg_t<&Post::combine, 1>` (aka `BindArg<Prediction>`). The
// facts are all in the note's arguments; these helpers recover them so that
// cgc can say instead, at the argument itself:
//   argument 2 of 'Post::combine' is a cg::Value<Request>; the parameter is 'Prediction'
// with a note at the method's declaration.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace clang {
class ASTContext;
class Decl;
class Diagnostic;
} // namespace clang

namespace cg::frontend {

struct BindMismatch {
  unsigned argument = 0;          // 0-based
  std::string method;             // "Post::combine"
  std::string given;              // "a cg::Value<Request>", "a constant of type 'const char *'"
  std::string parameter;          // "Prediction", as declared
  std::string parameterCanonical; // the same type, spelled as FailedCall::Value::type
  ir::SourceLoc declared;         // the method's name
  std::optional<ir::SourceRange> parameterRange;
};

/// The mismatch an overload note describes, if it is one of bind's
/// ("no known conversion from X to detail::arg_t<&C::m, I>").
std::optional<BindMismatch> bindMismatchOf(const clang::Diagnostic& note);

/// A call that failed to resolve (Clang keeps it as a RecoveryExpr): where the
/// called member's name is (what Clang's "no matching member function" error
/// points at), its arguments, and for `a.bind<&C::m>(...)` the method bound.
struct FailedCall {
  ir::SourceLoc callee;
  std::vector<ir::SourceRange> arguments;
  struct Method {
    std::string name;    // "Post::combine"
    unsigned parameters; // how many it takes
    ir::SourceLoc declared;
    std::string owner;      // "Post"
    std::string actorClass; // the class of the actor bound on, when known
  };
  std::optional<Method> bound; // a bind<&C::m> call
  struct Value {
    std::string name; // a cg::Value variable declared before the call
    std::string type; // what it carries, desugared
  };
  std::vector<Value> valuesInScope; // for "did you mean"
};

/// Every failed call in `decls` (the user's declarations, with their bodies).
std::vector<FailedCall> failedCalls(clang::ASTContext& context,
                                    const std::vector<clang::Decl*>& decls);

} // namespace cg::frontend
