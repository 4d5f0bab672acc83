//===- Layout.cpp - Generated code laid out as the formatter would -------===//
//
// The rules here are the few of LLVM style that generated code meets:
// the column limit, trailing comments aligned over consecutive lines (or
// above their lines where they would not fit), and token spacing, which for
// the spellings cgc produces is already the formatter's when
// isPlainSpelling() says so.
//
//===----------------------------------------------------------------------===//
#include "codegen/Layout.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>

namespace cg::codegen {
namespace {

constexpr std::string_view kMarker = "// @cgc-table-";

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The table number of a marker line (without its indentation), or SIZE_MAX.
std::size_t markedTable(std::string_view line) {
  if (line.substr(0, kMarker.size()) != kMarker)
    return SIZE_MAX;
  std::string_view number = line.substr(kMarker.size());
  if (!number.empty() && number.back() == '\n')
    number.remove_suffix(1);
  if (number.empty() || number.size() > 8 || !std::all_of(number.begin(), number.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return SIZE_MAX;
  return std::stoul(std::string(number));
}

} // namespace

bool fitsColumnLimit(std::string_view code) {
  while (!code.empty()) {
    std::size_t end = std::min(code.find('\n'), code.size());
    if (end > kColumnLimit)
      return false;
    code.remove_prefix(std::min(end + 1, code.size()));
  }
  return true;
}

bool isPlainSpelling(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    char previous = i ? text[i - 1] : '\0';
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '"' || c == '\'') { // a literal: the formatter keeps what is inside
      for (++i; i < text.size() && text[i] != c; ++i)
        if (text[i] == '\\')
          ++i;
      if (i >= text.size())
        return false;
    } else if (c == ',') { // ", " and then no second space
      if (next != ' ' || i + 2 >= text.size() || text[i + 2] == ' ')
        return false;
      ++i;
    } else if (c == ' ') { // between two words: `unsigned int`
      if (!isWordChar(previous) || !isWordChar(next))
        return false;
    } else if (c == '-' || c == '+') { // a sign, or an exponent's: `-1`, `1e-05`
      bool sign = c == '-' && (i == 0 || previous == '(');
      bool exponent = (previous == 'e' || previous == 'E') && i >= 2 &&
                      (std::isdigit(static_cast<unsigned char>(text[i - 2])) || text[i - 2] == '.');
      if (!sign && !exponent)
        return false;
    } else if (!isWordChar(c) && std::string_view(":<>().").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string alignTrailingComments(const std::vector<std::pair<std::string, std::string>>& rows,
                                  std::size_t spaces) {
  std::size_t width = 0;
  for (const auto& [code, comment] : rows)
    width = std::max(width, code.size());
  std::string out;
  for (const auto& [code, comment] : rows) {
    out += code;
    out.append(width - code.size() + spaces, ' ');
    out += "// ";
    out += comment;
    out += '\n';
  }
  return out;
}

std::string commentedLines(const std::vector<std::pair<std::string, std::string>>& rows,
                           std::size_t indent) {
  std::size_t width = 0;
  for (const auto& [code, comment] : rows)
    width = std::max(width, code.size());
  const bool trailing = std::all_of(rows.begin(), rows.end(), [&](const auto& row) {
    return indent + width + std::string_view(" // ").size() + row.second.size() <= kColumnLimit;
  });
  if (trailing)
    return alignTrailingComments(rows, 1);
  std::string out;
  for (const auto& [code, comment] : rows) {
    out.append(std::min(code.find_first_not_of(' '), code.size()), ' ');
    out += "// ";
    out += comment;
    out += '\n';
    out += code;
    out += '\n';
  }
  return out;
}

std::string LaidOutTables::add(std::string rows) {
  tables_.push_back(std::move(rows));
  return std::string(kMarker) + std::to_string(tables_.size() - 1) + "\n";
}

std::string LaidOutTables::addRuns(const std::vector<LaidOutBlock>& blocks) {
  std::string code, run;
  for (const LaidOutBlock& block : blocks) {
    if (block.laidOut && fitsColumnLimit(block.code)) {
      run += block.code;
      continue;
    }
    if (!run.empty())
      code += add(std::exchange(run, {}));
    code += block.code;
  }
  if (!run.empty())
    code += add(std::move(run));
  return code;
}

std::optional<std::string> LaidOutTables::splice(std::string_view formatted) const {
  return replaceMarkers(formatted, true);
}

std::string LaidOutTables::expand(std::string_view code) const {
  return *replaceMarkers(code, false);
}

std::optional<std::string> LaidOutTables::replaceMarkers(std::string_view code, bool indent) const {
  std::string out;
  out.reserve(code.size());
  while (!code.empty()) {
    std::size_t end = code.find('\n');
    std::string_view line = code.substr(0, end == std::string_view::npos ? code.size() : end + 1);
    code.remove_prefix(line.size());
    std::size_t first = line.find_first_not_of(' ');
    std::string_view text = first == std::string_view::npos ? "" : line.substr(first);
    std::size_t table = markedTable(text);
    if (table >= tables_.size()) {
      out += line;
      continue;
    }
    std::string_view prefix = indent ? line.substr(0, first) : "";
    std::string_view rows = tables_[table];
    while (!rows.empty()) {
      std::size_t rowEnd = rows.find('\n');
      std::string_view row =
          rows.substr(0, rowEnd == std::string_view::npos ? rows.size() : rowEnd + 1);
      rows.remove_prefix(row.size());
      std::size_t width = prefix.size() + row.size() - (row.back() == '\n' ? 1 : 0);
      if (indent && width > kColumnLimit)
        return std::nullopt;
      out += prefix;
      out += row;
    }
  }
  return out;
}

} // namespace cg::codegen
