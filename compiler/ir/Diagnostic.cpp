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
#include <nlohmann/json.hpp>

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

nlohmann::ordered_json point(const SourceLoc& loc) {
  return {{"line", loc.line}, {"column", loc.column}};
}

nlohmann::ordered_json rangesJson(const std::vector<SourceRange>& ranges) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SourceRange& range : ranges)
    out.push_back(
        {{"file", range.begin.file}, {"begin", point(range.begin)}, {"end", point(range.end)}});
  return out;
}

nlohmann::ordered_json fixitsJson(const std::vector<FixIt>& fixits) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FixIt& fixit : fixits)
    out.push_back({{"range", rangesJson({fixit.range})[0]},
                   {"insertion", fixit.insertion},
                   {"code", fixit.code}});
  return out;
}

// The location's fields, then the message: {"file", "line", "column", "message"}.
nlohmann::ordered_json located(const SourceLoc& loc, const std::string& message) {
  return {{"file", loc.file}, {"line", loc.line}, {"column", loc.column}, {"message", message}};
}

std::string_view severityName(Severity severity) {
  switch (severity) {
  case Severity::error:
    return "error";
  case Severity::warning:
    return "warning";
  case Severity::note:
    return "note";
  }
  return "error";
}

} // namespace

std::string formatDiagnostic(const Diagnostic& diagnostic) {
  std::string out;
  appendLine(out, diagnostic.loc, severityName(diagnostic.severity), diagnostic.message);
  for (const Note& note : diagnostic.notes)
    appendLine(out, note.loc, "note", note.message);
  return out;
}

std::string diagnosticsToJson(const std::vector<Diagnostic>& diagnostics) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Diagnostic& diagnostic : diagnostics) {
    nlohmann::ordered_json entry = located(diagnostic.loc, diagnostic.message);
    entry["severity"] = severityName(diagnostic.severity);
    entry["ranges"] = rangesJson(diagnostic.ranges);
    entry["fixits"] = fixitsJson(diagnostic.fixits);
    entry["notes"] = nlohmann::ordered_json::array();
    for (const Note& note : diagnostic.notes) {
      nlohmann::ordered_json noteEntry = located(note.loc, note.message);
      noteEntry["ranges"] = rangesJson(note.ranges);
      noteEntry["fixits"] = fixitsJson(note.fixits);
      entry["notes"].push_back(std::move(noteEntry));
    }
    out.push_back(std::move(entry));
  }
  return out.dump(2) + "\n";
}

} // namespace cg::ir
