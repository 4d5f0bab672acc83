//===- FormatCode.cpp - clang-format for generated sources ---------------===//
//
// clang::format::reformat runs one pass per enabled fixer before formatting,
// each lexing and parsing the whole file again. Two of LLVM style's passes
// can only act on a keyword (the using-declaration sorter on `using`, the
// namespace end-comment fixer on `namespace`), so a file without that word is
// formatted without the pass: the same output for a third less work on small
// files.
//
//===----------------------------------------------------------------------===//
#include "codegen/FormatCode.h"

#include "support/PhaseTimes.h"

#include "clang/Format/Format.h"
#include "clang/Tooling/Core/Replacement.h"

namespace cg::codegen {
namespace {

clang::format::FormatStyle generatedCodeStyle() {
  clang::format::FormatStyle style = clang::format::getLLVMStyle();
  style.ColumnLimit = 100;
  style.PointerAlignment = clang::format::FormatStyle::PAS_Left;
  style.SortIncludes = clang::format::FormatStyle::SI_Never; // the templates order them
  return style;
}

} // namespace

std::string formatCode(const std::string& code, const std::string& fileName) {
  support::PhaseTimer timer("format");
  static const clang::format::FormatStyle kStyle = generatedCodeStyle();
  clang::format::FormatStyle style = kStyle;
  llvm::StringRef text(code);
  if (!text.contains("using"))
    style.SortUsingDeclarations = clang::format::FormatStyle::SUD_Never;
  if (!text.contains("namespace"))
    style.FixNamespaceComments = false;
  clang::tooling::Replacements replacements = clang::format::reformat(
      style, code, {clang::tooling::Range(0, static_cast<unsigned>(code.size()))}, fileName);
  llvm::Expected<std::string> formatted = clang::tooling::applyAllReplacements(code, replacements);
  if (!formatted) {
    llvm::consumeError(formatted.takeError());
    return code;
  }
  return *formatted;
}

} // namespace cg::codegen
