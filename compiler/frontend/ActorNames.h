//===- ActorNames.h - Actor names the builder cannot see whole ----*- C++ -*-===//
//
// An actor's name reaches the builder as a `const char*`, which ends at the
// first NUL: g.actor<E>("ab\0cd") would name the actor "ab" without a word.
// The literal's full length is known only to the AST, so the frontend finds
// such names there, at their line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"

#include <vector>

namespace clang {
class ASTContext;
class Decl;
} // namespace clang

namespace cg::frontend {

/// An error at each string literal with a NUL character inside it that is
/// made a cg::ActorName or given to cg::indexed_name, in `decls`.
std::vector<ir::Diagnostic> actorNamesWithNul(clang::ASTContext& context,
                                              const std::vector<clang::Decl*>& decls);

} // namespace cg::frontend
