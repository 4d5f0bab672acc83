//===- DiagnosticPrinter.h - cgc's diagnostics, rendered by Clang -*- C++ -*-===//
//
// Every diagnostic cgc prints goes through one DiagnosticPrinter: those Clang
// raised while parsing the user's source (collected, then re-located), the
// frontend's own, and the validator's and scheduler's (ir::Diagnostic). In text
// form Clang's TextDiagnostic renders them, so they read exactly as Clang's
// do: `file:line:col: error: ...`, the source line, a caret and underlined
// ranges, fix-it lines, notes likewise, colours on a terminal. As JSON they
// are one array for tools and CI annotations (ir::diagnosticsToJson).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"

#include <memory>
#include <optional>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace cg::frontend {

enum class DiagnosticFormat { text, json };

/// Whether diagnostics on stderr get colours: `flag` if given
/// (-fcolor-diagnostics, -fno-color-diagnostics), else none when NO_COLOR is
/// set (no-color.org), else as stderr is a terminal that has them.
bool colorsWanted(std::optional<bool> flag);

class DiagnosticPrinter {
public:
  DiagnosticPrinter(DiagnosticFormat format, bool colors, llvm::raw_ostream& out);
  ~DiagnosticPrinter();

  /// Text: renders the diagnostic and its notes at once. JSON: keeps it.
  void print(const ir::Diagnostic& diagnostic);
  void print(const std::vector<ir::Diagnostic>& diagnostics);
  /// JSON: writes every diagnostic printed, as one array (`[]` for none).
  void finish();

  /// How many errors were printed.
  unsigned errors() const { return errors_; }

private:
  struct Renderer; // Clang's file and source managers and TextDiagnostic
  DiagnosticFormat format_;
  llvm::raw_ostream& out_;
  std::unique_ptr<Renderer> renderer_;
  std::vector<ir::Diagnostic> kept_; // JSON
  unsigned errors_ = 0;
};

} // namespace cg::frontend
