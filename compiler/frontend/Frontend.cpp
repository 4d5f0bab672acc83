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
// The preprocessor runs in incremental mode, so that the end of the source is
// not the end of the translation unit and the probe can follow it without
// parsing the source (and the standard library it includes) a second time.
// R and T are capacities large enough for any graph in practice (the
// evaluator materializes only what is written); a graph larger still is
// probed once more with its exact sizes.
// A source that starts with `#include <cg/cg.hpp>` is first parsed with that
// header precompiled (Prelude.h); if anything at all fails that way, it is
// parsed again without, and only that parse reports.
//
//===----------------------------------------------------------------------===//
#include "frontend/Frontend.h"
#include "support/InternalError.h"

#include "frontend/GraphDecoder.h"
#include "frontend/Prelude.h"
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
#include <iostream>
#include <set>
#include <stdexcept>

namespace cg::frontend {
namespace {

constexpr llvm::StringLiteral kProbeNamespace = "cgc_probe";

ir::SourceLoc toLoc(const clang::SourceManager& sm, clang::SourceLocation loc) {
  clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (presumed.isInvalid())
    return {};
  return {presumed.getFilename(), presumed.getLine(), presumed.getColumn()};
}

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
  };

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error && level != clang::DiagnosticsEngine::Note)
      return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    ir::SourceLoc loc;
    if (info.hasSourceManager() && info.getLocation().isValid())
      loc = toLoc(info.getSourceManager(), info.getLocation());
    // A note belongs to the error before it; drop notes of dropped warnings.
    if (level == clang::DiagnosticsEngine::Note && entries.empty())
      return;
    entries.push_back({level, std::move(loc), std::string(text)});
  }

  std::vector<Entry> entries;
};

void printEntry(const CollectingConsumer::Entry& entry) {
  const char* kind = entry.level == clang::DiagnosticsEngine::Note ? "note" : "error";
  if (entry.loc.file.empty())
    std::cerr << "cgc: " << kind << ": " << entry.message << "\n";
  else
    std::cerr << entry.loc.file << ":" << entry.loc.line << ":" << entry.loc.column << ": " << kind
              << ": " << entry.message << "\n";
}

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
  args.push_back("-idirafter" CG_RUNTIME_INCLUDE_DIR);
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
    if (!fn->isThisDeclarationADefinition() || !isAnnotated(fn, "cg::graph"))
      return true;
    ir::SourceLoc loc = toLoc(sm, fn->getLocation());
    bool takesBuilder =
        fn->getNumParams() == 1 && fn->getParamDecl(0)->getType()->isLValueReferenceType() &&
        fn->getParamDecl(0)->getType().getNonReferenceType().getUnqualifiedType().getAsString() ==
            "cg::GraphBuilder";
    if (fn->isTemplated() || !fn->getReturnType()->isVoidType() || !takesBuilder) {
      out.problems.push_back({loc,
                              "a CG_GRAPH function must be a non-template 'void " +
                                  fn->getNameAsString() + "(cg::GraphBuilder&)'",
                              {}});
      return true;
    }
    out.graphs.push_back({fn->getQualifiedNameAsString(), loc});
    return true;
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
  Session(const FrontendOptions& options, std::string source, std::string probePath)
      : options(options), source(std::move(source)), probePath(std::move(probePath)) {}

  const FrontendOptions& options;
  std::string source;    // absolute path
  std::string probePath; // the name the probe's lines are reported under
  CollectingConsumer diagnostics;
  size_t probeDiagnostics = 0; // diagnostics.entries from here on are the probe's

  Discovery discovery;
  std::string selectionError; // printed as is
  std::vector<GraphFunction> graphs;
  std::vector<ProbeLine> probeLines;
  std::vector<std::optional<ir::Graph>> decoded; // per graph
  std::vector<AggregateCodec> codecs;
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
  const auto& found = session.discovery.graphs;
  for (const std::string& wanted : session.options.onlyGraphs) {
    auto it = std::find_if(found.begin(), found.end(),
                           [&](const GraphFunction& g) { return g.name == wanted; });
    if (it == found.end()) {
      session.selectionError =
          "cgc: error: no CG_GRAPH function named '" + wanted + "' in " + session.source + "\n";
      return false;
    }
    session.graphs.push_back(*it);
  }
  if (session.options.onlyGraphs.empty())
    session.graphs = found;
  if (session.graphs.empty()) {
    session.selectionError = session.source +
                             ":1:1: error: no CG_GRAPH function found; mark a "
                             "'void graph(cg::GraphBuilder&)' function with CG_GRAPH\n";
    return false;
  }
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
    pp.enableIncrementalProcessing(); // the source's end is not the unit's
    if (!ci.hasSema())
      ci.createSema(getTranslationUnitKind(), nullptr);
    clang::Sema& sema = ci.getSema();
    clang::Parser parser(pp, sema, /*SkipFunctionBodies=*/false);
    pp.addPPCallbacks(std::make_unique<RegularFilesOnly>(pp.getDiagnostics()));
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
    }
    if (hasErrors(session_.diagnostics) || !session_.discovery.problems.empty()) {
      session_.parseFailed = true;
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

bool runAction(std::unique_ptr<clang::FrontendAction> action, std::vector<std::string> args,
               CollectingConsumer& diagnostics) {
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(),
                                                             llvm::vfs::getRealFileSystem());
  clang::tooling::ToolInvocation invocation(std::move(args), std::move(action), files.get());
  invocation.setDiagnosticConsumer(&diagnostics);
  return invocation.run();
}

bool isUserLocation(const ir::SourceLoc& loc, const std::string& probePath) {
  return !loc.file.empty() && loc.file != probePath &&
         !llvm::StringRef(loc.file).starts_with(CG_RUNTIME_INCLUDE_DIR);
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

// Prints the probe's diagnostics. An error on the probe is about a graph: it
// moves to the graph function, keeping Clang's notes that point at the user's
// code and dropping those inside the probe or the builder. A broken builder
// rule (graph_error) becomes an error with its own message at the user's line.
void reportEvaluationErrors(const Session& session) {
  std::set<size_t> reported; // one error per graph
  const auto& entries = session.diagnostics.entries;
  for (size_t i = session.probeDiagnostics; i < entries.size(); ++i) {
    if (entries[i].level == clang::DiagnosticsEngine::Note)
      continue;
    size_t end = i + 1;
    while (end < entries.size() && entries[end].level == clang::DiagnosticsEngine::Note)
      ++end;
    CollectingConsumer::Entry shown = entries[i];
    if (shown.loc.file == session.probePath) {
      auto probe = std::find_if(session.probeLines.begin(), session.probeLines.end(),
                                [&](const ProbeLine& p) { return p.line == shown.loc.line; });
      if (probe != session.probeLines.end()) {
        if (!reported.insert(probe->graph).second)
          continue;
        if (auto rule = brokenRule(entries, i + 1, end, session.probePath)) {
          printEntry(*rule);
          continue;
        }
        const GraphFunction& graph = session.graphs[probe->graph];
        shown.loc = graph.loc;
        shown.message = "graph '" + graph.name + "' cannot be evaluated at compile time";
      }
    }
    printEntry(shown);
    for (size_t n = i + 1; n < end; ++n) {
      if (!isUserLocation(entries[n].loc, session.probePath))
        continue;
      printEntry(entries[n]);
    }
    for (size_t n = i + 1; n < end; ++n)
      if (llvm::StringRef(entries[n].message).contains("maximum step limit"))
        printEntry({clang::DiagnosticsEngine::Note, shown.loc,
                    "cgc evaluates graphs with -fconstexpr-steps=" +
                        std::to_string(session.options.constexprSteps) +
                        "; raise it with 'cgc --constexpr-steps=N' (add_compiled_graph(... "
                        "CONSTEXPR_STEPS N))"});
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

// Prints pass-1 diagnostics. Errors raised inside the runtime headers (the
// builder's static_asserts: a static method, a method of another class...)
// are moved to the user's innermost line that led there, with their message.
void reportParseErrors(const CollectingConsumer& diagnostics) {
  const auto& entries = diagnostics.entries;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].level == clang::DiagnosticsEngine::Note)
      continue;
    size_t end = i + 1;
    while (end < entries.size() && entries[end].level == clang::DiagnosticsEngine::Note)
      ++end;
    size_t user = end;
    if (llvm::StringRef(entries[i].loc.file).starts_with(CG_RUNTIME_INCLUDE_DIR))
      for (size_t n = i + 1; n < end && user == end; ++n)
        if (isUserLocation(entries[n].loc, ""))
          user = n;
    if (user == end) {
      for (size_t n = i; n < end; ++n)
        printEntry(entries[n]);
      continue;
    }
    printEntry({entries[i].level, entries[user].loc, assertionText(entries[i].message)});
    for (size_t n = user + 1; n < end; ++n)
      if (isUserLocation(entries[n].loc, ""))
        printEntry(entries[n]);
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

/// What a run that found no problem found; `prelude`, if it ran with one,
/// adds the files read for it.
FrontendResult resultOf(Session& session, const Prelude* prelude = nullptr) {
  FrontendResult result;
  result.codecs = std::move(session.codecs);
  for (auto& graph : session.decoded) {
    if (!graph)
      internalError("a graph probe was not evaluated");
    result.graphs.push_back(std::move(*graph));
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

/// The run with the precompiled prelude, if the source can have one: the
/// result if nothing at all went wrong, else nullopt with nothing printed
/// and `prelude` naming the prelude that was tried.
std::optional<FrontendResult> runWithPrelude(const FrontendOptions& options,
                                             const std::string& source,
                                             const std::string& probePath,
                                             std::optional<Prelude>& prelude) {
  auto text = llvm::MemoryBuffer::getFile(source);
  if (!text || !startsWithPrelude((*text)->getBuffer()))
    return std::nullopt;
  prelude = findOrBuildPrelude(options.preludeCache, parseFlags(options), source);
  if (!prelude)
    return std::nullopt;
  Session session(options, source, probePath);
  bool ran = false;
  try {
    ran = runAction(std::make_unique<GraphAction>(session),
                    clangArgs(options, session.source, &*prelude), session.diagnostics);
  } catch (const InternalError&) {
    return std::nullopt; // the parse without the prelude says it again, if it is so
  }
  if (!ran || !session.probed || session.parseFailed || !session.selectionError.empty() ||
      session.evaluationFailed || !session.problems.empty() || hasErrors(session.diagnostics) ||
      std::find(session.decoded.begin(), session.decoded.end(), std::nullopt) !=
          session.decoded.end())
    return std::nullopt;
  return resultOf(session, &*prelude);
}

} // namespace

std::optional<FrontendResult> runFrontend(const FrontendOptions& options) {
  llvm::SmallString<256> source(options.source);
  if (std::error_code ec = llvm::sys::fs::make_absolute(source)) {
    std::cerr << "cgc: error: " << options.source << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  llvm::sys::path::remove_dots(source, /*remove_dot_dot=*/true);
  if (!llvm::sys::fs::exists(source)) {
    std::cerr << "cgc: error: no such file: " << options.source << "\n";
    return std::nullopt;
  }

  // The probe is reported under a name beside the source.
  llvm::SmallString<256> probePath(source);
  llvm::sys::path::replace_extension(probePath, "cgc-probe.cpp");
  // With the precompiled prelude when there is one; when anything goes wrong
  // with it, the parse without it is the one that reports.
  std::optional<Prelude> prelude;
  if (!options.preludeCache.empty())
    if (std::optional<FrontendResult> result =
            runWithPrelude(options, source.str().str(), probePath.str().str(), prelude))
      return result;
  Session session(options, source.str().str(), probePath.str().str());
  bool ran = runAction(std::make_unique<GraphAction>(session), clangArgs(options, session.source),
                       session.diagnostics);
  if (!ran && !session.probed && session.selectionError.empty())
    session.parseFailed = true; // Clang stopped before the probe
  if (session.parseFailed) {
    reportParseErrors(session.diagnostics);
    for (const auto& problem : session.discovery.problems)
      std::cerr << ir::formatDiagnostic(problem);
    return std::nullopt;
  }
  if (!session.selectionError.empty()) {
    std::cerr << session.selectionError;
    return std::nullopt;
  }
  if (!ran || session.evaluationFailed || !session.problems.empty()) {
    reportEvaluationErrors(session);
    for (const auto& problem : session.problems)
      std::cerr << ir::formatDiagnostic(problem);
    return std::nullopt;
  }

  // The prelude failed where a plain parse did not: it is broken somehow
  // (a damaged file, say); the next run builds it again.
  if (prelude)
    forgetPrelude(*prelude);
  return resultOf(session);
}

} // namespace cg::frontend
