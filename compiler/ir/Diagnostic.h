//===- Diagnostic.h - A user-facing problem at a source location -*- C++ -*-===//
//
// Passes below the frontend (validator, scheduler) do not depend on Clang; they
// report problems in the user's graph as these records. The tool renders them
// as Clang does (frontend/DiagnosticPrinter.h: the line, a caret, ranges,
// fix-its, colours) or as JSON for tools; formatDiagnostic() is the plain
// `file:line:col: error: message` form, for tests and logs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace cg::ir {

enum class Severity { error, warning, note };

/// Characters of one line of a file, `begin` to `end` inclusive (Clang's
/// token range: `end` is where the last token starts).
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;
};

/// A mechanical fix: replace `range` (empty: insert at `range.begin`) by `code`.
struct FixIt {
  SourceRange range;
  bool insertion = true; // `range` is a point: nothing is removed
  std::string code;
};

struct Note {
  SourceLoc loc;
  std::string message;
  std::vector<SourceRange> ranges = {};
  std::vector<FixIt> fixits = {}; // Clang puts a fix on the note that says where
};

struct Diagnostic {
  SourceLoc loc;
  std::string message; // lower-case, no trailing period (Clang style)
  std::vector<Note> notes = {};
  Severity severity = Severity::error;
  std::vector<SourceRange> ranges = {}; // underlined beside the caret
  std::vector<FixIt> fixits = {};
};

/// Formats `file:line:col: error: message` followed by `file:line:col: note: ...`
/// lines, each ending in a newline.
std::string formatDiagnostic(const Diagnostic& diagnostic);

/// The diagnostics as a JSON array, for tools and CI annotations (cgc
/// --diagnostics-format=json): each {"severity", "file", "line", "column",
/// "message", "ranges": [{"file", "begin": {"line", "column"}, "end": ...}],
/// "fixits": [{"range", "insertion", "code"}], "notes": [{"file", "line",
/// "column", "message", "ranges"}]}; a diagnostic about no file has "file": "".
std::string diagnosticsToJson(const std::vector<Diagnostic>& diagnostics);

} // namespace cg::ir
