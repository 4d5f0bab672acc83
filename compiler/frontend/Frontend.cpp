//===- Frontend.cpp - From an annotated C++ source to graph IR -----------===//
//
// One parse of the user's translation unit, in two steps over one Sema:
//   1. the source itself: find CG_GRAPH functions and every file read (for the
//      build's depfile); errors here are the user's C++ errors, shown as is;
//   2. a probe appended to the same translation unit, one line per graph,
//      `constexpr auto probe_N = ::cg::detail::encode<&::graph, R, T>();`
//      Clang's Sema evaluates those initializers; a graph that cannot be
//      evaluated surfaces as Sema's "must be initialized by a constant
//      expression" error on the probe, which we re-locate to the graph
//      function, keeping Clang's notes that point into the user's code.
// The probe follows the source without parsing the source (and the standard
// library it includes) a second time: the translation unit's main file is a
// one-line file of ours that includes the source, and once the source has
// ended the preprocessor turns incremental, so that the main file's end is
// not the unit's. The source itself is parsed as a compiler parses it (in
// incremental mode Clang 16 would take statements at file scope, and crash on
// some).
// R and T are capacities large enough for any graph in practice (the
// evaluator materializes only what is written); a graph larger still is
// probed once more with its exact sizes.
// A source that starts with `#include <cg/cg.hpp>` is first parsed with that
// header precompiled (Prelude.h). A source that fails that way is reported
// from that run, its mistakes being its own (parsing a large graph's mistake
// twice doubled the wait for its error), unless a diagnostic is about the
// precompiled header itself or the run stopped on a fatal error: then it is
// parsed again without the prelude, and only that parse reports.
//
// One file, about 1,050 lines: both steps and the reports that re-locate the
// probe's errors read one Session (its diagnostics, in the order Clang gave
// them, and the probe's layout), which nothing outside this file needs.
//
//===----------------------------------------------------------------------===//
#include "frontend/Frontend.h"
#include "support/InternalError.h"

#include "frontend/ActorNames.h"
#include "frontend/BindMismatch.h"
#include "frontend/GraphDecoder.h"
#include "frontend/Locations.h"
#include "frontend/Prelude.h"
#include "frontend/RuntimeHeaders.h"
#include "frontend/SourceIncludes.h"
#include "ir/Diagnostic.h"
#include "support/PhaseTimes.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Parse/Parser.h"
#include "clang/Sema/Sema.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace cg::frontend {
namespace {

constexpr llvm::StringLiteral kProbeNamespace = "cgc_probe";

bool isAnnotated(const clang::Decl* decl, llvm::StringRef annotation) {
  for (const auto* attr : decl->specific_attrs<clang::AnnotateAttr>())
    if (attr->getAnnotation() == annotation)
      return true;
  return false;
}

/// Collects Clang's diagnostics instead of printing them, so that errors on
/// our probe can be re-located to the graph they are about.
class CollectingConsumer : public clang::DiagnosticConsumer {
public:
  struct Entry {
    clang::DiagnosticsEngine::Level level;
    ir::SourceLoc loc;
    std::string message;
    std::vector<ir::SourceRange> ranges = {}; // those in files (not in macros' bodies)
    std::vector<ir::FixIt> fixits = {};
    std::optional<BindMismatch> bind = {}; // a note about a bind's argument
  };

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error && level != clang::DiagnosticsEngine::Note)
      return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    ir::SourceLoc loc;
    Entry entry{level, {}, std::string(text)};
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const clang::SourceManager& sm = info.getSourceManager();
      entry.loc = toLoc(sm, info.getLocation());
      for (const clang::CharSourceRange& range : info.getRanges())
        if (auto kept = rangeOf(sm, range))
          entry.ranges.push_back(*kept);
      for (const clang::FixItHint& fix : info.getFixItHints())
        if (auto kept = rangeOf(sm, fix.RemoveRange))
          entry.fixits.push_back({*kept,
                                  fix.RemoveRange.getBegin() == fix.RemoveRange.getEnd() &&
                                      fix.RemoveRange.isCharRange(),
                                  fix.CodeToInsert});
      if (level == clang::DiagnosticsEngine::Note)
        entry.bind = bindMismatchOf(info);
    }
    // A note belongs to the error before it; drop notes of dropped warnings.
    if (level == clang::DiagnosticsEngine::Note && entries.empty())
      return;
    entries.push_back(std::move(entry));
  }

  std::vector<Entry> entries;
};

/// The diagnostics a run reports: an error starts one, a note joins the last.
class Report {
public:
  explicit Report(std::vector<ir::Diagnostic>& out) : out_(out) {}

  void add(const CollectingConsumer::Entry& entry) {
    if (entry.level != clang::DiagnosticsEngine::Note || out_.empty())
      out_.push_back(
          {entry.loc, entry.message, {}, ir::Severity::error, entry.ranges, entry.fixits});
    else
      out_.back().notes.push_back({entry.loc, entry.message, entry.ranges});
  }
  void add(ir::Diagnostic diagnostic) { out_.push_back(std::move(diagnostic)); }

private:
  std::vector<ir::Diagnostic>& out_;
};

/// The Clang driver's arguments for a parse, without the action and the file.
std::vector<std::string> parseFlags(const FrontendOptions& options) {
  // C++20 first, so that a -std among the target's flags wins.
  // A real argv[0]: the Clang driver finds the GCC installation relative to it.
  std::vector<std::string> args{CG_CLANG_EXECUTABLE, "-std=c++20"};
  args.insert(args.end(), options.compileFlags.begin(), options.compileFlags.end());
  args.push_back("-resource-dir=" + (options.resourceDir.empty()
                                         ? std::string(CG_CLANG_RESOURCE_DIR)
                                         : options.resourceDir));
  // The runtime headers are always reachable, after the target's own paths.
  args.push_back("-idirafter" + runtimeIncludeDir());
  args.push_back("-fconstexpr-steps=" + std::to_string(options.constexprSteps));
  args.insert(args.end(), {"-fno-caret-diagnostics", "-w", "-Wno-unknown-warning-option",
                           "-Qunused-arguments", "-ferror-limit=20"});
  return args;
}

/// The arguments to parse `file`, with the precompiled prelude if any.
std::vector<std::string> clangArgs(const FrontendOptions& options, const std::string& file,
                                   const Prelude* prelude = nullptr) {
  std::vector<std::string> args = parseFlags(options);
  args.push_back("-fsyntax-only");
  if (prelude)
    args.insert(args.end(), {"-include-pch", prelude->pch});
  args.push_back(file);
  return args;
}

// ---- step 1: the source ------------------------------------------------

struct Discovery {
  std::vector<GraphFunction> graphs;
  std::vector<ir::Diagnostic> problems;
  std::vector<std::string> files;
};

struct DiscoverVisitor : clang::RecursiveASTVisitor<DiscoverVisitor> {
  DiscoverVisitor(Discovery& out, const clang::SourceManager& sm) : out(out), sm(sm) {}
  // Graph functions are declarations; nothing inside a function body is one.
  bool TraverseStmt(clang::Stmt*) { return true; }
  bool VisitFunctionDecl(clang::FunctionDecl* fn) {
    const bool actorSet = isAnnotated(fn, "cg::actor_set");
    if (!fn->isThisDeclarationADefinition() || !(actorSet || isAnnotated(fn, "cg::graph")))
      return true;
    ir::SourceLoc loc = toLoc(sm, fn->getLocation());
    bool takesBuilder =
        fn->getNumParams() == 1 && fn->getParamDecl(0)->getType()->isLValueReferenceType() &&
        fn->getParamDecl(0)->getType().getNonReferenceType().getUnqualifiedType().getAsString() ==
            "cg::GraphBuilder";
    if (fn->isTemplated() || !fn->getReturnType()->isVoidType() || !takesBuilder) {
      out.problems.push_back(
          {loc,
           std::string(actorSet ? "a CG_ACTOR_SET function" : "a CG_GRAPH function") +
               " must be a non-template 'void " + fn->getNameAsString() + "(cg::GraphBuilder&)'",
           {}});
      return true;
    }
    GraphFunction found{fn->getQualifiedNameAsString(), loc, actorSet, {}};
    if (const clang::FunctionDecl* set = actorSetOf(fn)) {
      if (!isAnnotated(set, "cg::actor_set")) {
        out.problems.push_back({loc,
                                "graph '" + found.name + "' runs over '" +
                                    set->getQualifiedNameAsString() +
                                    "', which is not marked CG_ACTOR_SET",
                                {{toLoc(sm, set->getLocation()),
                                  "mark '" + set->getNameAsString() + "' CG_ACTOR_SET"}}});
        return true;
      }
      if (!set->isDefined()) {
        out.problems.push_back({loc,
                                "graph '" + found.name + "' runs over actor set '" +
                                    set->getQualifiedNameAsString() +
                                    "', which this source declares but does not define",
                                {{toLoc(sm, set->getLocation()), "declared here"}}});
        return true;
      }
      found.over = set->getQualifiedNameAsString();
    }
    out.graphs.push_back(std::move(found));
    return true;
  }

  // The function named by CG_GRAPH_OVER(set): the annotation's argument `&set`.
  static const clang::FunctionDecl* actorSetOf(const clang::FunctionDecl* fn) {
    for (const auto* attr : fn->specific_attrs<clang::AnnotateAttr>()) {
      if (attr->getAnnotation() != "cg::graph" || attr->args_size() == 0)
        continue;
      const clang::Expr* arg = (*attr->args_begin())->IgnoreParenImpCasts();
      if (const auto* address = llvm::dyn_cast<clang::UnaryOperator>(arg))
        arg = address->getSubExpr()->IgnoreParenImpCasts();
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(arg))
        if (const auto* set = llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl()))
          return set;
    }
    return nullptr;
  }
  Discovery& out;
  const clang::SourceManager& sm;
};

Discovery discover(clang::ASTContext& context) {
  Discovery out;
  const clang::SourceManager& sm = context.getSourceManager();
  // Only what was parsed here: declarations of a precompiled prelude are
  // <cg/cg.hpp>'s, and visiting them would load every one from the PCH.
  DiscoverVisitor visitor(out, sm);
  for (clang::Decl* decl : context.getTranslationUnitDecl()->noload_decls())
    visitor.TraverseDecl(decl);
  std::vector<clang::Decl*> parsed(context.getTranslationUnitDecl()->noload_decls_begin(),
                                   context.getTranslationUnitDecl()->noload_decls_end());
  for (ir::Diagnostic& problem : actorNamesWithNul(context, parsed))
    out.problems.push_back(std::move(problem));
  out.files = filesRead(sm);
  return out;
}

// ---- step 2: the probe --------------------------------------------------

/// One probe variable: which graph it evaluates, and the line it is on.
struct ProbeLine {
  size_t graph;
  unsigned line;
};

/// Everything one run of the frontend finds, filled in by GraphAction.
struct Session {
  Session(const FrontendOptions& options, std::string source, std::string probePath,
          std::string mainPath)
      : options(options), source(std::move(source)), probePath(std::move(probePath)),
        mainPath(std::move(mainPath)) {}

  const FrontendOptions& options;
  std::string source;    // absolute path
  std::string probePath; // the name the probe's lines are reported under
  std::string mainPath;  // the main file that includes the source (in memory)
  CollectingConsumer diagnostics;
  size_t probeDiagnostics = 0; // diagnostics.entries from here on are the probe's

  Discovery discovery;
  std::optional<ir::Diagnostic> selectionError;
  std::vector<FailedCall> failedCalls; // when the source has errors
  std::vector<GraphFunction> graphs;
  std::vector<ProbeLine> probeLines;
  std::vector<std::optional<ir::Graph>> decoded; // per graph
  std::vector<AggregateCodec> codecs;
  SourceIncludes actorIncludes;
  std::vector<ir::Diagnostic> problems; // found while decoding
  bool probed = false;                  // step 2 began
  bool parseFailed = false;
  bool evaluationFailed = false;
};

bool hasErrors(const CollectingConsumer& diagnostics, size_t from = 0) {
  for (size_t i = from; i < diagnostics.entries.size(); ++i)
    if (diagnostics.entries[i].level >= clang::DiagnosticsEngine::Error)
      return true;
  return false;
}

// The graphs to compile: those named on the command line, or all.
bool selectGraphs(Session& session) {
  std::vector<GraphFunction> found, sets;
  for (const GraphFunction& function : session.discovery.graphs)
    (function.actorSet ? sets : found).push_back(function);
  for (const std::string& wanted : session.options.onlyGraphs) {
    auto it = std::find_if(found.begin(), found.end(),
                           [&](const GraphFunction& g) { return g.name == wanted; });
    if (it == found.end()) {
      session.selectionError =
          ir::Diagnostic{{}, "no CG_GRAPH function named '" + wanted + "' in " + session.source};
      return false;
    }
    session.graphs.push_back(*it);
  }
  if (session.options.onlyGraphs.empty())
    session.graphs = found;
  if (session.graphs.empty()) {
    session.selectionError =
        ir::Diagnostic{{session.source, 1, 1},
                       "no CG_GRAPH function found; mark a 'void graph(cg::GraphBuilder&)' "
                       "function with CG_GRAPH"};
    return false;
  }
  // Every actor set, after the graphs: evaluated as they are, returned apart.
  session.graphs.insert(session.graphs.end(), sets.begin(), sets.end());
  return true;
}

/// Refuses an #include of anything but a regular file: Clang reads a device
/// such as /dev/zero as an empty file, and a pipe or a terminal would block.
class RegularFilesOnly : public clang::PPCallbacks {
public:
  explicit RegularFilesOnly(clang::DiagnosticsEngine& diagnostics)
      : diagnostics_(diagnostics),
        notRegular_(diagnostics.getCustomDiagID(
            clang::DiagnosticsEngine::Error,
            "'%0' is not a regular file (a device, a pipe or a socket): it cannot be included")) {}

  void InclusionDirective(clang::SourceLocation, const clang::Token&, llvm::StringRef fileName,
                          bool, clang::CharSourceRange range, clang::OptionalFileEntryRef file,
                          llvm::StringRef, llvm::StringRef, const clang::Module*,
                          clang::SrcMgr::CharacteristicKind) override {
    if (!file)
      return;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(file->getName(), status))
      return; // Clang has read it: its own errors, if any
    if (status.type() != llvm::sys::fs::file_type::regular_file &&
        status.type() != llvm::sys::fs::file_type::directory_file)
      diagnostics_.Report(range.getBegin(), notRegular_) << fileName;
  }

private:
  clang::DiagnosticsEngine& diagnostics_;
  unsigned notRegular_;
};

/// Turns the preprocessor incremental once the source has ended and the main
/// file that included it is lexed again: its end then leaves the translation
/// unit open for the probe.
class IncrementalAfterSource : public clang::PPCallbacks {
public:
  explicit IncrementalAfterSource(clang::Preprocessor& pp) : pp_(pp) {}

  void FileChanged(clang::SourceLocation loc, FileChangeReason reason,
                   clang::SrcMgr::CharacteristicKind, clang::FileID exited) override {
    // Back in the main file from a file, not from the predefines buffer.
    const clang::SourceManager& sm = pp_.getSourceManager();
    if (reason == ExitFile && sm.getFileID(loc) == sm.getMainFileID() &&
        sm.getFileEntryForID(exited))
      pp_.enableIncrementalProcessing();
  }

private:
  clang::Preprocessor& pp_;
};

/// Runs Clang over the source and then the probe, as one translation unit.
class GraphAction : public clang::ASTFrontendAction {
public:
  explicit GraphAction(Session& session) : session_(session) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&,
                                                        llvm::StringRef) override {
    return std::make_unique<clang::ASTConsumer>();
  }

  // ASTFrontendAction::ExecuteAction parses one file to its end (ParseAST);
  // this parses the source, then the probe after it.
  void ExecuteAction() override {
    clang::CompilerInstance& ci = getCompilerInstance();
    if (!ci.hasPreprocessor()) {
      session_.parseFailed = true;
      return;
    }
    clang::Preprocessor& pp = ci.getPreprocessor();
    if (!ci.hasSema())
      ci.createSema(getTranslationUnitKind(), nullptr);
    clang::Sema& sema = ci.getSema();
    clang::Parser parser(pp, sema, /*SkipFunctionBodies=*/false);
    pp.addPPCallbacks(std::make_unique<RegularFilesOnly>(pp.getDiagnostics()));
    pp.addPPCallbacks(std::make_unique<IncrementalAfterSource>(pp));
    pp.addPPCallbacks(
        recordSourceIncludes(ci.getSourceManager(), session_.source, session_.actorIncludes));
    pp.EnterMainSourceFile();
    if (!pp.getCurrentLexer()) {
      session_.parseFailed = true;
      return;
    }

    {
      support::PhaseTimer timer("parse");
      parser.Initialize();
      clang::Parser::DeclGroupPtrTy decl;
      clang::Sema::ModuleImportState importState;
      for (bool atEnd = parser.ParseFirstTopLevelDecl(decl, importState); !atEnd;
           atEnd = parser.ParseTopLevelDecl(decl, importState)) {
      }
      // What the end of the translation unit would do for the source alone:
      // instantiate the templates it uses, with their errors.
      sema.ActOnEndOfTranslationUnitFragment(clang::Sema::TUFragmentKind::Normal);
    }
    {
      support::PhaseTimer timer("discover");
      session_.discovery = discover(ci.getASTContext());
      std::erase(session_.discovery.files, session_.mainPath); // not a file
      checkSourceDeclarations(ci.getASTContext(), session_.source, session_.actorIncludes);
    }
    if (hasErrors(session_.diagnostics) || !session_.discovery.problems.empty()) {
      session_.parseFailed = true;
      clang::DeclContext* unit = ci.getASTContext().getTranslationUnitDecl();
      std::vector<clang::Decl*> parsed(unit->noload_decls_begin(), unit->noload_decls_end());
      session_.failedCalls = failedCalls(ci.getASTContext(), parsed);
      return;
    }
    if (!selectGraphs(session_))
      return;

    session_.probed = true;
    session_.probeDiagnostics = session_.diagnostics.entries.size();
    session_.decoded.resize(session_.graphs.size());
    SerializerPlanner serializers(ci.getASTContext());
    std::vector<size_t> all(session_.graphs.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = i;
    // Graphs larger than the probe's arrays, with their sizes.
    std::vector<std::pair<size_t, EncodedSizes>> larger;
    probe(parser, all, {}, serializers, larger);
    if (!larger.empty()) {
      std::vector<size_t> again;
      for (const auto& [graph, sizes] : larger)
        again.push_back(graph);
      std::vector<std::pair<size_t, EncodedSizes>> stillLarger;
      probe(parser, again, larger, serializers, stillLarger);
      if (!stillLarger.empty())
        internalError("a graph's size changed between two "
                      "evaluations");
    }
    session_.codecs = serializers.codecs();
    // The rest of what the end of the translation unit does (its errors,
    // rare, are the source's).
    sema.ActOnEndOfTranslationUnit();
    if (hasErrors(session_.diagnostics, session_.probeDiagnostics))
      session_.evaluationFailed = true;
  }

private:
  // Parses a probe for `graphs` (with their exact sizes if given, else the
  // default capacities) as more of the translation unit, and decodes what
  // fits; graphs that did not fit go to `larger`.
  void probe(clang::Parser& parser, const std::vector<size_t>& graphs,
             const std::vector<std::pair<size_t, EncodedSizes>>& sizes,
             SerializerPlanner& serializers, std::vector<std::pair<size_t, EncodedSizes>>& larger) {
    clang::CompilerInstance& ci = getCompilerInstance();
    clang::SourceManager& sm = ci.getSourceManager();
    // Lines go on from the last probe's, so that a line names one probe variable.
    unsigned line = session_.probeLines.empty() ? 1 : session_.probeLines.back().line + 2;
    std::string code(line - 1, '\n');
    code += "namespace " + kProbeNamespace.str() + " {\n";
    std::vector<std::pair<std::string, size_t>> names; // variable, graph
    const FrontendOptions& options = session_.options;
    for (size_t n = 0; n < graphs.size(); ++n) {
      size_t graph = graphs[n];
      // At least 1: std::array<T, 0> has another layout.
      uint64_t records =
          std::max<uint64_t>(1, sizes.empty() ? options.probeRecords : sizes[n].second.records);
      uint64_t text =
          std::max<uint64_t>(1, sizes.empty() ? options.probeText : sizes[n].second.text);
      std::string name = "probe_" + std::to_string(session_.probeLines.size());
      session_.probeLines.push_back({graph, line + 1 + static_cast<unsigned>(n)});
      code += "constexpr auto " + name +
              " = ::cg::detail::encode<&::" + session_.graphs[graph].name + ", " +
              std::to_string(records) + "u, " + std::to_string(text) + "u>();\n";
      names.emplace_back(name, graph);
    }
    code += "}\n";

    {
      support::PhaseTimer timer("evaluate");
      clang::FileID file =
          sm.createFileID(llvm::MemoryBuffer::getMemBufferCopy(code, session_.probePath),
                          clang::SrcMgr::C_User, 0, 0, sm.getLocForEndOfFile(sm.getMainFileID()));
      clang::Preprocessor& pp = ci.getPreprocessor();
      pp.EnterSourceFile(file, nullptr, clang::SourceLocation());
      parser.ConsumeToken(); // the end of what was parsed before
      clang::Parser::DeclGroupPtrTy decl;
      auto importState = clang::Sema::ModuleImportState::NotACXX20Module;
      while (!parser.ParseTopLevelDecl(decl, importState)) {
      }
    }

    support::PhaseTimer timer("decode");
    clang::ASTContext& context = ci.getASTContext();
    for (const auto& [name, graph] : names) {
      const clang::VarDecl* var = probeVariable(context, name);
      if (!var || var->isInvalidDecl())
        continue; // Sema already reported why
      const clang::APValue* value = var->evaluateValue();
      if (!value)
        continue; // Sema already reported why
      EncodedSizes encoded = encodedSizes(*value);
      if (!encoded.fit) {
        larger.emplace_back(graph, encoded);
        continue;
      }
      auto result = decodeGraph(*value, session_.graphs[graph], serializers);
      if (auto* decoded = std::get_if<ir::Graph>(&result))
        session_.decoded[graph] = std::move(*decoded);
      else
        for (auto& problem : std::get<std::vector<ir::Diagnostic>>(result))
          session_.problems.push_back(std::move(problem));
    }
  }

  static const clang::VarDecl* probeVariable(clang::ASTContext& context, llvm::StringRef name) {
    for (clang::Decl* decl : context.getTranslationUnitDecl()->decls()) {
      auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(decl);
      if (!ns || ns->getName() != kProbeNamespace)
        continue;
      for (clang::Decl* member : ns->decls())
        if (auto* var = llvm::dyn_cast<clang::VarDecl>(member); var && var->getName() == name)
          return var;
    }
    return nullptr;
  }

  Session& session_;
};

/// Runs `action` over the session's main file: a line in memory, beside the
/// source, that includes it.
bool runAction(std::unique_ptr<clang::FrontendAction> action, std::vector<std::string> args,
               Session& session) {
  auto real = llvm::vfs::getRealFileSystem();
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  if (auto cwd = real->getCurrentWorkingDirectory())
    memory->setCurrentWorkingDirectory(*cwd);
  std::string include = "#include \"" + llvm::sys::path::filename(session.source).str() + "\"\n";
  memory->addFile(session.mainPath, 0,
                  llvm::MemoryBuffer::getMemBufferCopy(include, session.mainPath));
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(real);
  overlay->pushOverlay(memory);
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
  clang::tooling::ToolInvocation invocation(std::move(args), std::move(action), files.get());
  invocation.setDiagnosticConsumer(&session.diagnostics);
  return invocation.run();
}

bool isUserLocation(const ir::SourceLoc& loc, const std::string& probePath) {
  return !loc.file.empty() && loc.file != probePath &&
         !llvm::StringRef(loc.file).starts_with(runtimeIncludeDir());
}

// The message of a builder rule the graph broke: Clang's note for the failed
// call reads `in call to 'graph_error(&"message"[0])'`.
std::optional<std::string> graphErrorMessage(llvm::StringRef note) {
  constexpr llvm::StringLiteral prefix = "in call to 'graph_error(&\"";
  constexpr llvm::StringLiteral suffix = "\"[0])'";
  if (!note.starts_with(prefix) || !note.ends_with(suffix))
    return std::nullopt;
  return note.drop_front(prefix.size()).drop_back(suffix.size()).str();
}

// The error a broken builder rule stands for, from the notes [begin, end) of
// a failed evaluation: the rule's message at the innermost line of the user's.
std::optional<CollectingConsumer::Entry>
brokenRule(const std::vector<CollectingConsumer::Entry>& entries, size_t begin, size_t end,
           const std::string& probePath) {
  for (size_t n = begin; n < end; ++n) {
    std::optional<std::string> rule = graphErrorMessage(entries[n].message);
    if (!rule)
      continue;
    for (size_t m = n + 1; m < end; ++m)
      if (isUserLocation(entries[m].loc, probePath))
        return CollectingConsumer::Entry{clang::DiagnosticsEngine::Error, entries[m].loc, *rule};
  }
  return std::nullopt;
}

// Clang's reason for a failed evaluation when it lies inside the builder or
// the probe (a read of a non-constexpr global passed to g.actor(), say): the
// note is dropped with the builder's location, so its text joins the error.
std::optional<std::string> hiddenReason(const std::vector<CollectingConsumer::Entry>& entries,
                                        size_t begin, size_t end, const std::string& probePath) {
  for (size_t n = begin; n < end; ++n) {
    llvm::StringRef message(entries[n].message);
    if (isUserLocation(entries[n].loc, probePath) || message.starts_with("in call to '") ||
        message.contains("maximum step limit"))
      continue;
    return message.str();
  }
  return std::nullopt;
}

// What to do about a graph whose evaluation needs what only a run has.
CollectingConsumer::Entry notConstantHint(const ir::SourceLoc& graph) {
  return {clang::DiagnosticsEngine::Note, graph,
          "a graph's shape is fixed when cgc compiles it: take its sizes and names from "
          "constexpr values, template parameters or -D definitions, not from run-time data"};
}

// Prints the probe's diagnostics. An error on the probe is about a graph: it
// moves to the graph function, keeping Clang's notes that point at the user's
// code and dropping those inside the probe or the builder. A broken builder
// rule (graph_error) becomes an error with its own message at the user's line.
void reportEvaluationErrors(const Session& session, Report& report) {
  std::set<size_t> reported; // one error per graph
  const auto& entries = session.diagnostics.entries;
  for (size_t i = session.probeDiagnostics; i < entries.size(); ++i) {
    if (entries[i].level == clang::DiagnosticsEngine::Note)
      continue;
    size_t end = i + 1;
    while (end < entries.size() && entries[end].level == clang::DiagnosticsEngine::Note)
      ++end;
    CollectingConsumer::Entry shown = entries[i];
    bool aboutGraph = false;
    if (shown.loc.file == session.probePath) {
      auto probe = std::find_if(session.probeLines.begin(), session.probeLines.end(),
                                [&](const ProbeLine& p) { return p.line == shown.loc.line; });
      if (probe != session.probeLines.end()) {
        if (!reported.insert(probe->graph).second)
          continue;
        if (auto rule = brokenRule(entries, i + 1, end, session.probePath)) {
          report.add(*rule);
          continue;
        }
        const GraphFunction& graph = session.graphs[probe->graph];
        shown.loc = graph.loc;
        shown.message = "graph '" + graph.name + "' cannot be evaluated at compile time";
        if (std::optional<std::string> reason =
                hiddenReason(entries, i + 1, end, session.probePath))
          shown.message += ": " + *reason;
        shown.ranges.clear(); // they were the probe's
        shown.fixits.clear();
        aboutGraph = true;
      }
    }
    report.add(shown);
    for (size_t n = i + 1; n < end; ++n) {
      if (!isUserLocation(entries[n].loc, session.probePath))
        continue;
      CollectingConsumer::Entry note = entries[n];
      // Clang spells the call as the builder received it ('&g->actor({{&"emb"[0],
      // 3, -1}, ...})'); the user's line says it better.
      if (aboutGraph && (llvm::StringRef(note.message).starts_with("in call to '&") ||
                         llvm::StringRef(note.message).contains("unnamed-global-constant")))
        note.message = "in this call";
      report.add(note);
    }
    bool stepLimit = false;
    for (size_t n = i + 1; n < end; ++n)
      stepLimit |= llvm::StringRef(entries[n].message).contains("maximum step limit");
    if (stepLimit)
      report.add(CollectingConsumer::Entry{
          clang::DiagnosticsEngine::Note, shown.loc,
          "cgc evaluates graphs with -fconstexpr-steps=" +
              std::to_string(session.options.constexprSteps) +
              "; raise it with 'cgc --constexpr-steps=N' (add_compiled_graph(... "
              "CONSTEXPR_STEPS N))"});
    else if (aboutGraph)
      report.add(notConstantHint(shown.loc));
  }
}

// The text of a static_assert of ours, without Clang's preamble.
std::string assertionText(const std::string& message) {
  llvm::StringRef text(message);
  if (text.consume_front("static assertion failed due to requirement '")) {
    size_t end = text.find("': ");
    if (end != llvm::StringRef::npos)
      return text.drop_front(end + 3).str();
  }
  text.consume_front("static assertion failed: ");
  return text.str();
}

// The one cg::Value declared before a failed call that carries `type`, if
// exactly one does: the argument the user most likely meant.
std::optional<std::string> onlyValueOfType(const FailedCall& call, const std::string& type) {
  std::optional<std::string> found;
  for (const FailedCall::Value& value : call.valuesInScope) {
    if (value.type != type)
      continue;
    if (found)
      return std::nullopt;
    found = value.name;
  }
  return found;
}

std::string wrongClassMessage(const std::string& method, const std::string& owner,
                              const std::string& actorClass) {
  return "'" + method + "' is a method of '" + owner + "', but this actor's class is '" +
         actorClass + "'; bind it on an actor of class '" + owner + "', or bind a method of '" +
         actorClass + "'";
}

// A method of one class bound on an actor of another: the builder's
// static_assert names neither, but its requirement (is_base_of_v<Owner, C>)
// and the instantiation notes (bind<&Owner::method, ...>) do.
std::optional<std::string> wrongClassText(const Session& session, size_t error, size_t end) {
  const auto& entries = session.diagnostics.entries;
  llvm::StringRef message(entries[error].message);
  if (!message.contains("the method does not belong to this actor's class"))
    return std::nullopt;
  llvm::StringRef requirement = message;
  if (!requirement.consume_front("static assertion failed due to requirement 'std::is_base_of_v<"))
    return std::nullopt;
  requirement = requirement.take_until([](char c) { return c == '\''; });
  if (!requirement.consume_back(">"))
    return std::nullopt;
  auto [owner, actorClass] = requirement.rsplit(", ");
  if (owner.empty() || actorClass.empty())
    return std::nullopt;
  std::string method;
  for (size_t n = error + 1; n < end && method.empty(); ++n) {
    llvm::StringRef note(entries[n].message);
    size_t at = note.find("bind<&");
    if (at != llvm::StringRef::npos)
      method =
          note.drop_front(at + 6).take_until([](char c) { return c == ',' || c == '>'; }).str();
  }
  if (method.empty())
    method = owner.str() + "::<method>";
  return wrongClassMessage(method, owner.str(), actorClass.str());
}

// Prints pass-1 diagnostics. Errors raised inside the runtime headers (the
// builder's static_asserts: a static method, a method of another class...)
// are moved to the user's innermost line that led there, with their message.
// A bind whose argument has the wrong type, as one error at the argument and
// a note at the method: from Clang's overload failure and its notes.
std::optional<ir::Diagnostic> bindArgumentError(const Session& session, size_t error, size_t end) {
  const auto& entries = session.diagnostics.entries;
  for (size_t n = error + 1; n < end; ++n) {
    if (!entries[n].bind)
      continue;
    const BindMismatch& bind = *entries[n].bind;
    ir::Diagnostic out{entries[error].loc, "argument " + std::to_string(bind.argument + 1) +
                                               " of '" + bind.method + "' is " + bind.given +
                                               "; the parameter is '" + bind.parameter + "'"};
    for (const FailedCall& call : session.failedCalls)
      if (call.callee == entries[error].loc && bind.argument < call.arguments.size() &&
          !call.arguments[bind.argument].begin.file.empty()) {
        out.loc = call.arguments[bind.argument].begin;
        out.ranges.push_back(call.arguments[bind.argument]);
        if (std::optional<std::string> only = onlyValueOfType(call, bind.parameterCanonical))
          out.message += "; did you mean '" + *only + "'?";
      }
    ir::Note declared{bind.declared, "'" + bind.method + "' is declared here"};
    if (bind.parameterRange)
      declared.ranges.push_back(*bind.parameterRange);
    out.notes.push_back(std::move(declared));
    return out;
  }
  return std::nullopt;
}

// A bind given more or fewer arguments than its method takes.
std::optional<ir::Diagnostic> bindArityError(const Session& session, size_t error) {
  const CollectingConsumer::Entry& entry = session.diagnostics.entries[error];
  if (entry.message != "no matching member function for call to 'bind'")
    return std::nullopt;
  for (const FailedCall& call : session.failedCalls) {
    if (call.callee != entry.loc || !call.bound || call.bound->parameters == call.arguments.size())
      continue;
    const FailedCall::Method& bound = *call.bound;
    // A method of another class: that is the mistake to report, not its arity.
    if (!bound.actorClass.empty() && bound.actorClass != bound.owner)
      return ir::Diagnostic{entry.loc,
                            wrongClassMessage(bound.name, bound.owner, bound.actorClass),
                            {},
                            ir::Severity::error,
                            entry.ranges};
    auto count = [](size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); };
    ir::Diagnostic out{entry.loc,
                       "'" + call.bound->name + "' takes " + count(call.bound->parameters) +
                           ", but bind was given " + std::to_string(call.arguments.size()),
                       {{call.bound->declared, "'" + call.bound->name + "' is declared here"}},
                       ir::Severity::error,
                       entry.ranges};
    return out;
  }
  return std::nullopt;
}

void reportParseErrors(const Session& session, Report& report) {
  const auto& entries = session.diagnostics.entries;
  // Lines where a method was bound on an actor of another class: the bind's
  // result has that method's type, so an argument error of the same line
  // follows from the first mistake and is not reported.
  std::set<std::pair<std::string, unsigned>> wrongClassLines;
  auto followsWrongClass = [&](const ir::SourceLoc& loc) {
    return wrongClassLines.count({loc.file, loc.line}) != 0;
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].level == clang::DiagnosticsEngine::Note)
      continue;
    size_t end = i + 1;
    while (end < entries.size() && entries[end].level == clang::DiagnosticsEngine::Note)
      ++end;
    // `cg::Value<int> state;` to assign later, the start of a feedback edge:
    // Clang lists the builder's constructors; the graph's terms say why not.
    if (llvm::StringRef(entries[i].message)
            .starts_with("no matching constructor for initialization of 'cg::Value<")) {
      report.add(CollectingConsumer::Entry{
          entries[i].level, entries[i].loc,
          "a cg::Value cannot be declared before it is bound: a graph has no cycles, so every "
          "value is a task's result, a graph input or a constant; state that carries from one "
          "execution to the next lives in the actor (a member its method updates)",
          entries[i].ranges});
      continue;
    }
    if (std::optional<ir::Diagnostic> bind = bindArityError(session, i)) {
      if (!followsWrongClass(bind->loc))
        report.add(std::move(*bind));
      continue;
    }
    if (std::optional<ir::Diagnostic> bind = bindArgumentError(session, i, end)) {
      if (!followsWrongClass(bind->loc))
        report.add(std::move(*bind));
      continue;
    }
    // A CG_GRAPH function that reads run-time data: Clang checks constexpr
    // functions as it parses them, before cgc's probe would.
    auto graph = std::find_if(
        session.discovery.graphs.begin(), session.discovery.graphs.end(),
        [&](const GraphFunction& g) {
          return g.loc == entries[i].loc &&
                 entries[i].message == "constexpr function never produces a constant expression";
        });
    if (graph != session.discovery.graphs.end()) {
      report.add(CollectingConsumer::Entry{
          entries[i].level, graph->loc,
          "graph '" + graph->name + "' cannot be evaluated at compile time", entries[i].ranges});
      for (size_t n = i + 1; n < end; ++n)
        report.add(entries[n]);
      report.add(notConstantHint(graph->loc));
      continue;
    }
    size_t user = end;
    if (llvm::StringRef(entries[i].loc.file).starts_with(runtimeIncludeDir()))
      for (size_t n = i + 1; n < end && user == end; ++n)
        if (isUserLocation(entries[n].loc, ""))
          user = n;
    if (user == end) {
      for (size_t n = i; n < end; ++n)
        report.add(entries[n]);
      continue;
    }
    std::optional<std::string> wrongClass = wrongClassText(session, i, end);
    if (wrongClass)
      wrongClassLines.insert({entries[user].loc.file, entries[user].loc.line});
    report.add(CollectingConsumer::Entry{entries[i].level, entries[user].loc,
                                         wrongClass.value_or(assertionText(entries[i].message)),
                                         entries[user].ranges});
    for (size_t n = user + 1; n < end; ++n)
      if (isUserLocation(entries[n].loc, ""))
        report.add(entries[n]);
  }
}

} // namespace

std::variant<std::vector<std::string>, std::string>
flagsFromCompileDatabase(const std::string& buildDir, const std::string& source) {
  std::string error;
  auto loaded = clang::tooling::CompilationDatabase::loadFromDirectory(buildDir, error);
  if (!loaded)
    return "cannot load a compile database from " + buildDir + ": " + error;
  // A graph source is usually not compiled on its own (the generated code
  // includes it): borrow the flags of the nearest file that is.
  auto database = clang::tooling::inferMissingCompileCommands(std::move(loaded));
  llvm::SmallString<256> absolute(source);
  llvm::sys::fs::make_absolute(absolute);
  std::vector<clang::tooling::CompileCommand> commands =
      database->getCompileCommands(absolute.str());
  if (commands.empty())
    return "the compile database in " + buildDir + " has no entry for " + source;
  const clang::tooling::CompileCommand& command = commands.front();
  // Relative paths in the command are relative to its directory.
  std::vector<std::string> flags{"-working-directory", command.Directory};
  const std::vector<std::string>& line = command.CommandLine;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == "-c" || line[i] == command.Filename || line[i] == "--")
      continue;
    if (line[i] == "-o" || line[i] == "-MF" || line[i] == "-MT" || line[i] == "-MQ") {
      ++i;
      continue;
    }
    if (llvm::StringRef(line[i]).starts_with("-M"))
      continue;
    flags.push_back(line[i]);
  }
  return flags;
}

namespace {

/// Moves the errors Clang gives at our main file's end (a source cut off
/// inside a brace: "expected '}'") to where the user's source ends, the
/// last character of its last line: the main file is ours, not the user's.
void atEndOfSource(std::vector<ir::Diagnostic>& diagnostics, const std::string& mainPath,
                   const std::string& source) {
  ir::SourceLoc end{source, 1, 1};
  if (auto text = llvm::MemoryBuffer::getFile(source)) {
    llvm::StringRef rest = (*text)->getBuffer();
    if (rest.ends_with("\n"))
      rest = rest.drop_back();
    end.line += static_cast<unsigned>(rest.count('\n'));
    llvm::StringRef last = rest.substr(rest.rfind('\n') + 1);
    end.column = static_cast<unsigned>(std::max<size_t>(1, last.size()));
  }
  for (ir::Diagnostic& diagnostic : diagnostics) {
    if (diagnostic.loc.file == mainPath) {
      diagnostic.loc = end;
      diagnostic.ranges.clear();
      diagnostic.fixits.clear();
    }
    for (ir::Note& note : diagnostic.notes)
      if (note.loc.file == mainPath)
        note.loc = end;
  }
}

/// What a run that found no problem found; `prelude`, if it ran with one,
/// adds the files read for it.
FrontendResult resultOf(Session& session, const Prelude* prelude = nullptr) {
  FrontendResult result;
  result.codecs = std::move(session.codecs);
  result.actorIncludes = std::move(session.actorIncludes);
  for (size_t i = 0; i < session.decoded.size(); ++i) {
    std::optional<ir::Graph>& graph = session.decoded[i];
    if (!graph)
      internalError("a graph probe was not evaluated");
    (session.graphs[i].actorSet ? result.actorSets : result.graphs).push_back(std::move(*graph));
  }
  std::set<std::string> unique(session.discovery.files.begin(), session.discovery.files.end());
  if (prelude) {
    unique.insert(prelude->files.begin(), prelude->files.end());
    llvm::SmallString<256> header;
    if (llvm::sys::fs::real_path(prelude->header, header))
      header = prelude->header;
    unique.erase(header.str().str());
  }
  result.dependencies.assign(unique.begin(), unique.end());
  return result;
}

/// What the run with the precompiled prelude came to: a result if nothing at
/// all went wrong; else, where what went wrong is the source's own mistake,
/// the session to report from; else neither, with nothing printed.
struct PreludeRun {
  std::optional<FrontendResult> result;
  std::unique_ptr<Session> failed;
  bool ran = false; // whether Clang's action ran to its end, for `failed`
};

/// Whether a run with `prelude` may have failed for the prelude's sake, not
/// the source's: a diagnostic names the precompiled header (stale, damaged,
/// built with other flags), or the run stopped on a fatal error.
bool aboutThePrelude(const CollectingConsumer& diagnostics, const Prelude& prelude) {
  for (const CollectingConsumer::Entry& entry : diagnostics.entries)
    if (entry.level >= clang::DiagnosticsEngine::Fatal ||
        entry.message.find(prelude.pch) != std::string::npos ||
        entry.message.find("precompiled header") != std::string::npos ||
        entry.message.find("PCH") != std::string::npos)
      return true;
  return false;
}

/// The run with the precompiled prelude, if the source can have one, with
/// `prelude` naming the prelude that was tried.
PreludeRun runWithPrelude(const FrontendOptions& options, const std::string& source,
                          const std::string& probePath, const std::string& mainPath,
                          std::optional<Prelude>& prelude) {
  auto text = llvm::MemoryBuffer::getFile(source);
  if (!text || !startsWithPrelude((*text)->getBuffer()))
    return {};
  prelude = findOrBuildPrelude(options.preludeCache, parseFlags(options), source);
  if (!prelude)
    return {};
  auto session = std::make_unique<Session>(options, source, probePath, mainPath);
  bool ran = false;
  try {
    ran = runAction(std::make_unique<GraphAction>(*session),
                    clangArgs(options, session->mainPath, &*prelude), *session);
  } catch (const InternalError&) {
    return {}; // the parse without the prelude says it again, if it is so
  }
  const bool undecoded = std::find(session->decoded.begin(), session->decoded.end(),
                                   std::nullopt) != session->decoded.end();
  if (ran && session->probed && !session->parseFailed && !session->selectionError &&
      !session->evaluationFailed && session->problems.empty() && !hasErrors(session->diagnostics) &&
      !undecoded)
    return {resultOf(*session, &*prelude), nullptr, ran};
  if (!aboutThePrelude(session->diagnostics, *prelude))
    return {std::nullopt, std::move(session), ran};
  return {};
}

/// Reports why `session` has no graph (Clang's errors, re-located, and the
/// problems found decoding) and returns true, or returns false if it has one.
bool reportFailure(Session& session, bool ran, Report& report,
                   std::vector<ir::Diagnostic>& diagnostics) {
  if (!ran && !session.probed && !session.selectionError)
    session.parseFailed = true; // Clang stopped before the probe
  if (session.parseFailed) {
    reportParseErrors(session, report);
    for (const auto& problem : session.discovery.problems)
      report.add(problem);
    atEndOfSource(diagnostics, session.mainPath, session.source);
    return true;
  }
  if (session.selectionError) {
    report.add(*session.selectionError);
    return true;
  }
  if (!ran || session.evaluationFailed || !session.problems.empty()) {
    reportEvaluationErrors(session, report);
    for (const auto& problem : session.problems)
      report.add(problem);
    return true;
  }
  return false;
}

} // namespace

std::optional<FrontendResult> runFrontend(const FrontendOptions& options,
                                          std::vector<ir::Diagnostic>& diagnostics) {
  Report report(diagnostics);
  llvm::SmallString<256> source(options.source);
  if (std::error_code ec = llvm::sys::fs::make_absolute(source)) {
    report.add(ir::Diagnostic{{}, options.source + ": " + ec.message()});
    return std::nullopt;
  }
  llvm::sys::path::remove_dots(source, /*remove_dot_dot=*/true);
  if (!llvm::sys::fs::exists(source)) {
    report.add(ir::Diagnostic{{}, "no such file: " + options.source});
    return std::nullopt;
  }
  if (llvm::sys::path::filename(source).find_first_of("\"\n") != llvm::StringRef::npos) {
    report.add(ir::Diagnostic{{},
                              options.source +
                                  ": a graph source's file name cannot hold '\"' or a line "
                                  "break"});
    return std::nullopt;
  }

  // The probe and the main file that includes the source have names beside it.
  llvm::SmallString<256> probePath(source);
  llvm::sys::path::replace_extension(probePath, "cgc-probe.cpp");
  llvm::SmallString<256> mainPath(source);
  llvm::sys::path::replace_extension(mainPath, "cgc-main.cpp");
  // With the precompiled prelude when there is one; when anything goes wrong
  // with it, the parse without it is the one that reports.
  std::optional<Prelude> prelude;
  if (!options.preludeCache.empty()) {
    PreludeRun run = runWithPrelude(options, source.str().str(), probePath.str().str(),
                                    mainPath.str().str(), prelude);
    if (run.result)
      return run.result;
    if (run.failed) {
      reportFailure(*run.failed, run.ran, report, diagnostics);
      return std::nullopt;
    }
  }
  Session session(options, source.str().str(), probePath.str().str(), mainPath.str().str());
  bool ran = runAction(std::make_unique<GraphAction>(session), clangArgs(options, session.mainPath),
                       session);
  if (reportFailure(session, ran, report, diagnostics))
    return std::nullopt;

  // The prelude failed where a plain parse did not: it is broken somehow
  // (a damaged file, say); the next run builds it again.
  if (prelude)
    forgetPrelude(*prelude);
  return resultOf(session);
}

} // namespace cg::frontend
