//===- SourceIncludes.h - What actor programs include instead of the source -*- C++ -*-===//
//
// An actor program needs the actor classes and the types that cross actors,
// not the graph functions. When the graph source declares none of those
// itself (it holds #includes, CG_GRAPH functions, helper functions and
// constants), the programs include the source's own #includes instead of
// the source: an edit to a graph function then leaves every program it does
// not change byte-identical, and the build does not recompile them. A
// source that declares a class, an alias, a specialization, a macro (...)
// is included whole, as before; `neededFor` says which declaration made it
// so, for the generated header's comment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/Lex/Preprocessor.h"

#include <memory>
#include <string>
#include <vector>

namespace cg::frontend {

/// One `#include` written in the graph source itself.
struct SourceInclude {
  std::string spelled;       // the name between the quotes or brackets
  bool angled = false;       // <...> rather than "..."
  bool besideSource = false; // "..." found in the source's own folder
};

struct SourceIncludes {
  std::vector<SourceInclude> includes; // in source order
  /// Why the programs must include the source whole (e.g. "struct 'Order'
  /// (tour.cg.cpp:16)"); empty when its #includes are enough.
  std::string neededFor;
};

/// Records the source's #includes and macro definitions as the preprocessor
/// meets them into `out`. `source` is the graph source's absolute path.
std::unique_ptr<clang::PPCallbacks> recordSourceIncludes(const clang::SourceManager& sm,
                                                         const std::string& source,
                                                         SourceIncludes& out);

/// After the parse: sets `out.neededFor` if the source declares anything
/// the actor programs may need (a type, an alias, a template, a
/// specialization, an out-of-class member).
void checkSourceDeclarations(clang::ASTContext& context, const std::string& source,
                             SourceIncludes& out);

/// The `#include` line that names `include` from generated code, which is
/// compiled with the folder `sourceInclude` is relative to on its include
/// path (the driver header includes the source as `sourceInclude`).
std::string includeLineFor(const SourceInclude& include, const std::string& sourceInclude);

} // namespace cg::frontend
