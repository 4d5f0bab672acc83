//===- Layout.h - Generated code laid out as the formatter would -*- C++ -*-===//
//
// Formatting every generated file costs more than everything else cgc does
// once a graph has a thousand actors: clang-format is roughly quadratic on
// the driver header's tables and costs about a millisecond per actor
// program; the declarations a graph has one of per channel or per actor
// (reader arrays, COMPUTE name tables) come to tens of thousands of lines.
// So codegen writes all those already laid out as the formatter would
// (the formatter leaves them as they are; codegen_test checks it) and only
// falls back to the formatter where it cannot be sure: a line over the
// column limit, or a type or expression spelled in a way it does not know.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cg::codegen {

/// The formatter's column limit (FormatCode.cpp).
inline constexpr std::size_t kColumnLimit = 100;

/// True when no line of `code` is wider than kColumnLimit.
bool fitsColumnLimit(std::string_view code);

/// True when the formatter leaves `text`, a type or a constant expression,
/// as it is wherever codegen puts it: names, `::`, numbers, `<>`, `()`, `.`,
/// a space after a comma or between two words (`unsigned int`), string
/// literals. False for anything else (`const char *`, `a+b`), which the
/// formatter then lays out.
bool isPlainSpelling(std::string_view text);

/// Lines of code with trailing comments, the comments aligned as the
/// formatter aligns them: `spaces` columns after the widest line's code. Each
/// line is code, padding, "// ", comment and a newline, without indentation.
std::string alignTrailingComments(const std::vector<std::pair<std::string, std::string>>& rows,
                                  std::size_t spaces);

/// Lines of code with a comment each, laid out as the formatter keeps them
/// `indent` columns in: trailing comments aligned one space after the widest
/// line when every line fits the column limit with its comment; else each
/// comment on a line of its own above its code, so that a line the formatter
/// wraps cannot take its comment out of line with the others. A comment
/// above takes its code's own leading spaces.
std::string commentedLines(const std::vector<std::pair<std::string, std::string>>& rows,
                           std::size_t indent);

/// A declaration (or a few) of generated code at column 0, and whether
/// codegen laid it out as the formatter would.
struct LaidOutBlock {
  std::string code;
  bool laidOut = true;
};

/// Tables (rows of one shape, possibly thousands) that codegen lays out
/// itself: the code given to the formatter holds one marker line in place
/// of each, and the rows go in after formatting, indented as the marker.
class LaidOutTables {
public:
  /// The marker line to put in the code in place of `rows` (complete lines,
  /// without indentation).
  std::string add(std::string rows);

  /// Code for `blocks` (complete lines each, at column 0, in order) in which
  /// each run of blocks that codegen laid out and whose every line fits the
  /// column limit is one table, and every other block is left in the code
  /// for the formatter: the thousands of small declarations of a large graph
  /// skip the formatter, and the one too wide still gets laid out by it.
  std::string addRuns(const std::vector<LaidOutBlock>& blocks);

  /// `formatted` with every marker replaced by its rows; std::nullopt if a
  /// row would not fit in the column limit at the marker's indentation.
  std::optional<std::string> splice(std::string_view formatted) const;

  /// `code` with every marker replaced by its rows as they are, for the
  /// formatter to lay out.
  std::string expand(std::string_view code) const;

private:
  std::optional<std::string> replaceMarkers(std::string_view code, bool indent) const;

  std::vector<std::string> tables_;
};

} // namespace cg::codegen
