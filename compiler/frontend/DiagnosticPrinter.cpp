//===- DiagnosticPrinter.cpp - cgc's diagnostics, rendered by Clang -------===//
//
// Diagnostics are collected as plain records (file, line, column) while
// Clang's own SourceManager is alive only inside a parse, so rendering gets a
// SourceManager of its own: each file is loaded from disk when a diagnostic
// first points into it, and file:line:col becomes a SourceLocation again.
// A location in a file that cannot be read (the probe cgc appends, which only
// ever exists in memory) is printed without its source line.
// Clang quotes string literals whole in its messages ("in call to
// 'f(&"..."[0])'"); a literal of megabytes is shortened to its start and its
// size, in text and JSON alike.
//
//===----------------------------------------------------------------------===//
#include "frontend/DiagnosticPrinter.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/TextDiagnostic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cg::frontend {

bool colorsWanted(std::optional<bool> flag) {
  if (flag)
    return *flag;
  if (const char* noColor = std::getenv("NO_COLOR"); noColor && *noColor)
    return false;
  return llvm::sys::Process::StandardErrHasColors();
}

namespace {

// A quoted run longer than this keeps its first kKeptQuoted characters.
constexpr size_t kLongQuoted = 120;
constexpr size_t kKeptQuoted = 60;

/// `message` with every "..." longer than kLongQuoted characters cut to its
/// start, followed by how long it was.
std::string shortenQuoted(const std::string& message) {
  std::string out;
  size_t at = 0;
  while (at < message.size()) {
    size_t open = message.find('"', at);
    if (open == std::string::npos)
      break;
    size_t close = open + 1;
    while (close < message.size() && message[close] != '"')
      close += message[close] == '\\' ? 2 : 1;
    if (close >= message.size())
      break;
    size_t length = close - open - 1;
    out.append(message, at, open + 1 - at);
    if (length > kLongQuoted)
      out += message.substr(open + 1, kKeptQuoted) + "...\" (" + std::to_string(length) +
             " characters)";
    else
      out.append(message, open + 1, length + 1);
    at = close + 1;
  }
  out.append(message, std::min(at, message.size()));
  return out;
}

ir::Diagnostic shortened(ir::Diagnostic diagnostic) {
  diagnostic.message = shortenQuoted(diagnostic.message);
  for (ir::Note& note : diagnostic.notes)
    note.message = shortenQuoted(note.message);
  return diagnostic;
}

clang::DiagnosticsEngine::Level levelOf(ir::Severity severity) {
  switch (severity) {
  case ir::Severity::warning:
    return clang::DiagnosticsEngine::Warning;
  case ir::Severity::note:
    return clang::DiagnosticsEngine::Note;
  case ir::Severity::error:
    break;
  }
  return clang::DiagnosticsEngine::Error;
}

} // namespace

struct DiagnosticPrinter::Renderer {
  Renderer(llvm::raw_ostream& out, bool colors)
      : options(new clang::DiagnosticOptions()),
        engine(new clang::DiagnosticIDs(), options, new clang::IgnoringDiagConsumer()),
        files(clang::FileSystemOptions()), sources(engine, files),
        text(out, languageOptions(), options.get()), out(out) {
    options->ShowColors = colors;
    options->ShowFixits = true;
    options->ShowCarets = true;
  }

  static const clang::LangOptions& languageOptions() {
    static const clang::LangOptions cxx20 = [] {
      clang::LangOptions options;
      options.CPlusPlus = options.CPlusPlus11 = options.CPlusPlus14 = options.CPlusPlus17 =
          options.CPlusPlus20 = true;
      return options;
    }();
    return cxx20;
  }

  /// `loc` in this SourceManager; invalid when its file cannot be read.
  clang::SourceLocation location(const ir::SourceLoc& loc) {
    if (loc.file.empty() || loc.line == 0)
      return {};
    auto file = files.getOptionalFileRef(loc.file);
    if (!file)
      return {};
    clang::FileID id = sources.getOrCreateFileID(&file->getFileEntry(), clang::SrcMgr::C_User);
    if (id.isInvalid())
      return {};
    return sources.translateLineCol(id, loc.line, std::max(1u, loc.column));
  }

  std::vector<clang::CharSourceRange> ranges(const std::vector<ir::SourceRange>& from) {
    std::vector<clang::CharSourceRange> out;
    for (const ir::SourceRange& range : from) {
      clang::SourceLocation begin = location(range.begin), end = location(range.end);
      if (begin.isValid() && end.isValid())
        out.push_back(clang::CharSourceRange::getTokenRange(begin, end));
    }
    return out;
  }

  void emit(const ir::SourceLoc& loc, ir::Severity severity, const std::string& message,
            const std::vector<ir::SourceRange>& underlined,
            const std::vector<ir::FixIt>& fixes = {}) {
    clang::SourceLocation at = location(loc);
    if (at.isInvalid()) {
      // Clang's layout without the source line: `cgc: ` when about no file.
      if (loc.file.empty())
        out << "cgc: ";
      else {
        out << loc.file;
        if (loc.line)
          out << ":" << loc.line;
        if (loc.line && loc.column)
          out << ":" << loc.column;
        out << ": ";
      }
      clang::TextDiagnostic::printDiagnosticLevel(out, levelOf(severity), options->ShowColors);
      clang::TextDiagnostic::printDiagnosticMessage(out, /*IsSupplemental=*/false, message, 0, 0,
                                                    options->ShowColors);
      out << "\n";
      return;
    }
    std::vector<clang::FixItHint> hints;
    for (const ir::FixIt& fix : fixes) {
      clang::SourceLocation begin = location(fix.range.begin);
      if (begin.isInvalid())
        continue;
      if (fix.insertion)
        hints.push_back(clang::FixItHint::CreateInsertion(begin, fix.code));
      else if (clang::SourceLocation end = location(fix.range.end); end.isValid())
        hints.push_back(clang::FixItHint::CreateReplacement(
            clang::CharSourceRange::getTokenRange(begin, end), fix.code));
    }
    text.emitDiagnostic(clang::FullSourceLoc(at, sources), levelOf(severity), message,
                        ranges(underlined), hints);
  }

  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options;
  clang::DiagnosticsEngine engine;
  clang::FileManager files;
  clang::SourceManager sources;
  clang::TextDiagnostic text;
  llvm::raw_ostream& out;
};

DiagnosticPrinter::DiagnosticPrinter(DiagnosticFormat format, bool colors, llvm::raw_ostream& out)
    : format_(format), out_(out), renderer_(std::make_unique<Renderer>(out, colors)) {}

DiagnosticPrinter::~DiagnosticPrinter() = default;

void DiagnosticPrinter::print(const ir::Diagnostic& original) {
  const ir::Diagnostic diagnostic = shortened(original);
  if (diagnostic.severity == ir::Severity::error)
    ++errors_;
  if (format_ == DiagnosticFormat::json) {
    kept_.push_back(diagnostic);
    return;
  }
  renderer_->emit(diagnostic.loc, diagnostic.severity, diagnostic.message, diagnostic.ranges,
                  diagnostic.fixits);
  for (const ir::Note& note : diagnostic.notes)
    renderer_->emit(note.loc, ir::Severity::note, note.message, note.ranges, note.fixits);
  out_.flush();
}

void DiagnosticPrinter::print(const std::vector<ir::Diagnostic>& diagnostics) {
  for (const ir::Diagnostic& diagnostic : diagnostics)
    print(diagnostic);
}

void DiagnosticPrinter::finish() {
  if (format_ == DiagnosticFormat::json)
    out_ << ir::diagnosticsToJson(kept_);
  out_.flush();
}

} // namespace cg::frontend
