//===- Diagnostic.h - A user-facing problem at a source location -*- C++ -*-===//
//
// Passes below the frontend (validator, scheduler) do not depend on Clang; they
// report problems in the user's graph as these records, and the tool prints
// them Clang-style: `file:line:col: error: message`, then the notes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace cg::ir {

struct Note {
  SourceLoc loc;
  std::string message;
};

struct Diagnostic {
  SourceLoc loc;
  std::string message; // lower-case, no trailing period (Clang style)
  std::vector<Note> notes;
};

/// Formats `file:line:col: error: message` followed by `file:line:col: note: ...`
/// lines, each ending in a newline.
std::string formatDiagnostic(const Diagnostic& diagnostic);

} // namespace cg::ir
