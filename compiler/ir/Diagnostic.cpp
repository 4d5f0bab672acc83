//===- Diagnostic.cpp - Clang-style printing of diagnostics ---------------===//
//
// cgc reports problems the way Clang does so that editors and CI log parsers
// that already understand `file:line:col: error: ...` pick them up unchanged.
// A diagnostic without a file (e.g. about the command line) is attributed to
// the tool itself, again like Clang's `clang: error: ...`.
//
//===----------------------------------------------------------------------===//

#include "ir/Diagnostic.h"

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>

namespace cg::ir {
namespace {

/// Appends `<where>: <severity>: <message>\n`. Line and column are omitted
/// when unknown (0) rather than printed as a misleading `:0`.
void appendLine(std::string& out, const SourceLoc& loc, std::string_view severity,
                std::string_view message) {
  auto it = std::back_inserter(out);
  if (loc.file.empty())
    fmt::format_to(it, "cgc");
  else if (loc.line == 0)
    fmt::format_to(it, "{}", loc.file);
  else if (loc.column == 0)
    fmt::format_to(it, "{}:{}", loc.file, loc.line);
  else
    fmt::format_to(it, "{}:{}:{}", loc.file, loc.line, loc.column);
  fmt::format_to(it, ": {}: {}\n", severity, message);
}

} // namespace

std::string formatDiagnostic(const Diagnostic& diagnostic) {
  std::string out;
  appendLine(out, diagnostic.loc, "error", diagnostic.message);
  for (const Note& note : diagnostic.notes)
    appendLine(out, note.loc, "note", note.message);
  return out;
}

} // namespace cg::ir
