//===- Locations.h - Clang's source locations as the IR's -------*- C++ -*-===//
//
// Diagnostics outlive the parse that raised them (the SourceManager goes with
// it), so they carry plain file:line:column records; these convert Clang's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"

#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/SourceManager.h"

#include <optional>

namespace cg::frontend {

/// Where `loc` is as the user reads it: a macro's use, not its definition.
inline ir::SourceLoc toLoc(const clang::SourceManager& sm, clang::SourceLocation loc) {
  clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (presumed.isInvalid())
    return {};
  return {presumed.getFilename(), presumed.getLine(), presumed.getColumn()};
}

/// `range` as a token range within one file (its end is where the last token
/// starts); none when it is invalid or spans files.
inline std::optional<ir::SourceRange> rangeOf(const clang::SourceManager& sm,
                                              const clang::CharSourceRange& range) {
  if (range.isInvalid())
    return std::nullopt;
  ir::SourceLoc begin = toLoc(sm, range.getBegin()), end = toLoc(sm, range.getEnd());
  if (begin.file.empty() || begin.file != end.file || end.line < begin.line)
    return std::nullopt;
  if (range.isCharRange() && end.column > 1 && range.getBegin() != range.getEnd())
    --end.column; // a character range ends one past its last character
  return ir::SourceRange{begin, end};
}

} // namespace cg::frontend
