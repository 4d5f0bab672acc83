//===- FormatCode.cpp - clang-format for generated sources ---------------===//
#include "codegen/FormatCode.h"

#include "support/PhaseTimes.h"

#include "clang/Format/Format.h"
#include "clang/Tooling/Core/Replacement.h"

namespace cg::codegen {

std::string formatCode(const std::string& code, const std::string& fileName) {
  support::PhaseTimer timer("format");
  clang::format::FormatStyle style = clang::format::getLLVMStyle();
  style.ColumnLimit = 100;
  style.PointerAlignment = clang::format::FormatStyle::PAS_Left;
  style.SortIncludes = clang::format::FormatStyle::SI_Never;   // the templates order them
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
