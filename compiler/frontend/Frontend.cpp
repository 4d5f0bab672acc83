//===- Frontend.cpp - From an annotated C++ source to graph IR -----------===//
//
// Two parses of the user's translation unit:
//   1. the source itself: find CG_GRAPH functions and every file read (for the
//      build's depfile); errors here are the user's C++ errors, shown as is;
//   2. a probe file that includes the source and adds, per graph,
//      `constexpr auto count_N = ::cg::detail::encoded_sizes<&::graph>();`
//      `constexpr auto probe_N = ::cg::detail::encode<&::graph, count_N.records,
//                                                    count_N.text>();`
//      Clang's Sema evaluates those initializers; a graph that cannot be
//      evaluated surfaces as Sema's "must be initialized by a constant
//      expression" error on the probe, which we re-locate to the graph
//      function, keeping Clang's notes that point into the user's code.
//
//===----------------------------------------------------------------------===//
#include "frontend/Frontend.h"

#include "frontend/GraphDecoder.h"
#include "ir/Diagnostic.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <iostream>
#include <set>

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
    std::cerr << entry.loc.file << ":" << entry.loc.line << ":" << entry.loc.column << ": "
              << kind << ": " << entry.message << "\n";
}

std::vector<std::string> clangArgs(const FrontendOptions& options, const std::string& file) {
  // C++20 first, so that a -std among the target's flags wins.
  // A real argv[0]: the Clang driver finds the GCC installation relative to it.
  std::vector<std::string> args{CG_CLANG_EXECUTABLE, "-std=c++20"};
  args.insert(args.end(), options.compileFlags.begin(), options.compileFlags.end());
  args.push_back("-resource-dir=" +
                 (options.resourceDir.empty() ? std::string(CG_CLANG_RESOURCE_DIR)
                                              : options.resourceDir));
  // The runtime headers are always reachable, after the target's own paths.
  args.push_back("-idirafter" CG_RUNTIME_INCLUDE_DIR);
  args.push_back("-fconstexpr-steps=" + std::to_string(options.constexprSteps));
  args.insert(args.end(), {"-fsyntax-only", "-fno-caret-diagnostics", "-w",
                           "-Wno-unknown-warning-option", "-Qunused-arguments",
                           "-ferror-limit=20"});
  args.push_back(file);
  return args;
}

// ---- pass 1: find graphs ------------------------------------------------

struct Discovery {
  std::vector<GraphFunction> graphs;
  std::vector<ir::Diagnostic> problems;
  std::vector<std::string> files;
};

class DiscoverConsumer : public clang::ASTConsumer {
public:
  explicit DiscoverConsumer(Discovery& out) : out_(out) {}

  void HandleTranslationUnit(clang::ASTContext& context) override {
    const clang::SourceManager& sm = context.getSourceManager();
    Visitor visitor(out_, sm);
    visitor.TraverseDecl(context.getTranslationUnitDecl());
    // Canonical paths: build tools compare dependencies textually.
    for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
      llvm::SmallString<256> path;
      if (llvm::sys::fs::real_path(it->first->getName(), path))
        path = it->first->getName();
      out_.files.push_back(path.str().str());
    }
  }

private:
  struct Visitor : clang::RecursiveASTVisitor<Visitor> {
    Visitor(Discovery& out, const clang::SourceManager& sm) : out(out), sm(sm) {}
    bool VisitFunctionDecl(clang::FunctionDecl* fn) {
      if (!fn->isThisDeclarationADefinition() || !isAnnotated(fn, "cg::graph"))
        return true;
      ir::SourceLoc loc = toLoc(sm, fn->getLocation());
      bool takesBuilder = fn->getNumParams() == 1 &&
                          fn->getParamDecl(0)->getType()->isLValueReferenceType() &&
                          fn->getParamDecl(0)
                                  ->getType()
                                  .getNonReferenceType()
                                  .getUnqualifiedType()
                                  .getAsString() == "cg::GraphBuilder";
      if (fn->isTemplated() || !fn->getReturnType()->isVoidType() || !takesBuilder) {
        out.problems.push_back(
            {loc,
             "a CG_GRAPH function must be a non-template 'void " + fn->getNameAsString() +
                 "(cg::GraphBuilder&)'",
             {}});
        return true;
      }
      out.graphs.push_back({fn->getQualifiedNameAsString(), loc});
      return true;
    }
    Discovery& out;
    const clang::SourceManager& sm;
  };

  Discovery& out_;
};

class DiscoverAction : public clang::ASTFrontendAction {
public:
  explicit DiscoverAction(Discovery& out) : out_(out) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&,
                                                        llvm::StringRef) override {
    return std::make_unique<DiscoverConsumer>(out_);
  }

private:
  Discovery& out_;
};

// ---- pass 2: evaluate graphs --------------------------------------------

struct Evaluation {
  std::vector<std::optional<ir::Graph>> graphs;   // per probe, when evaluated
  std::vector<AggregateCodec> codecs;
  std::vector<ir::Diagnostic> problems;
};

class EvaluateConsumer : public clang::ASTConsumer {
public:
  EvaluateConsumer(const std::vector<GraphFunction>& graphs, Evaluation& out)
      : graphs_(graphs), out_(out) {
    out_.graphs.resize(graphs.size());
  }

  void HandleTranslationUnit(clang::ASTContext& context) override {
    SerializerPlanner serializers(context);
    for (clang::Decl* decl : context.getTranslationUnitDecl()->decls()) {
      auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(decl);
      if (!ns || ns->getName() != kProbeNamespace)
        continue;
      for (clang::Decl* member : ns->decls()) {
        auto* var = llvm::dyn_cast<clang::VarDecl>(member);
        if (!var || var->isInvalidDecl() || !var->getName().starts_with("probe_"))
          continue;
        unsigned index = std::stoul(var->getName().drop_front(strlen("probe_")).str());
        const clang::APValue* value = var->evaluateValue();
        if (!value)
          continue;   // Sema already reported why
        auto decoded = decodeGraph(*value, graphs_[index], serializers);
        if (auto* graph = std::get_if<ir::Graph>(&decoded))
          out_.graphs[index] = std::move(*graph);
        else
          for (auto& problem : std::get<std::vector<ir::Diagnostic>>(decoded))
            out_.problems.push_back(std::move(problem));
      }
    }
    out_.codecs = serializers.codecs();
  }

private:
  const std::vector<GraphFunction>& graphs_;
  Evaluation& out_;
};

class EvaluateAction : public clang::ASTFrontendAction {
public:
  EvaluateAction(const std::vector<GraphFunction>& graphs, Evaluation& out)
      : graphs_(graphs), out_(out) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&,
                                                        llvm::StringRef) override {
    return std::make_unique<EvaluateConsumer>(graphs_, out_);
  }

private:
  const std::vector<GraphFunction>& graphs_;
  Evaluation& out_;
};

bool runAction(std::unique_ptr<clang::FrontendAction> action, std::vector<std::string> args,
               CollectingConsumer& diagnostics, const std::string& probePath = {},
               const std::string& probeCode = {}) {
  // The probe exists only in memory, over the real file system.
  auto overlay =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  if (!probePath.empty()) {
    auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    memory->addFile(probePath, 0, llvm::MemoryBuffer::getMemBufferCopy(probeCode));
    overlay->pushOverlay(memory);
  }
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
  clang::tooling::ToolInvocation invocation(std::move(args), std::move(action), files.get());
  invocation.setDiagnosticConsumer(&diagnostics);
  return invocation.run();
}

bool hasErrors(const CollectingConsumer& diagnostics) {
  for (const auto& entry : diagnostics.entries)
    if (entry.level >= clang::DiagnosticsEngine::Error)
      return true;
  return false;
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

// Prints pass-2 diagnostics. An error on the probe is about a graph: it moves
// to the graph function, keeping Clang's notes that point at the user's code
// and dropping those inside the probe or the builder. A broken builder rule
// (graph_error) becomes an error with its own message at the user's line.
void reportEvaluationErrors(const CollectingConsumer& diagnostics, const std::string& probePath,
                            const std::vector<GraphFunction>& graphs, unsigned constexprSteps) {
  std::set<size_t> reported;   // a failed count_N also fails probe_N: say it once
  const auto& entries = diagnostics.entries;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].level == clang::DiagnosticsEngine::Note)
      continue;
    size_t end = i + 1;
    while (end < entries.size() && entries[end].level == clang::DiagnosticsEngine::Note)
      ++end;
    CollectingConsumer::Entry shown = entries[i];
    // Graph k's probe lines are 3 + 2k and 4 + 2k (see probeSource).
    unsigned line = shown.loc.line;
    bool onProbe = shown.loc.file == probePath && line >= 3 && (line - 3) / 2 < graphs.size();
    if (onProbe) {
      size_t graph = (line - 3) / 2;
      if (!reported.insert(graph).second)
        continue;
      if (auto rule = brokenRule(entries, i + 1, end, probePath)) {
        printEntry(*rule);
        continue;
      }
      shown.loc = graphs[graph].loc;
      shown.message = "graph '" + graphs[graph].name + "' cannot be evaluated at compile time";
    }
    printEntry(shown);
    for (size_t n = i + 1; n < end; ++n) {
      if (!isUserLocation(entries[n].loc, probePath))
        continue;
      printEntry(entries[n]);
    }
    for (size_t n = i + 1; n < end; ++n)
      if (llvm::StringRef(entries[n].message).contains("maximum step limit"))
        printEntry({clang::DiagnosticsEngine::Note, shown.loc,
                    "cgc evaluates graphs with -fconstexpr-steps=" +
                        std::to_string(constexprSteps) +
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

std::string probeSource(const std::string& source, const std::vector<GraphFunction>& graphs) {
  std::string code = "#include \"" + source + "\"\n";
  code += "namespace " + kProbeNamespace.str() + " {\n";
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::string n = std::to_string(i);
    code += "constexpr auto count_" + n + " = ::cg::detail::encoded_sizes<&::" +
            graphs[i].name + ">();\n";
    code += "constexpr auto probe_" + n + " = ::cg::detail::encode<&::" + graphs[i].name +
            ", count_" + n + ".records, count_" + n + ".text>();\n";
  }
  code += "}\n";
  return code;
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

  // Pass 1.
  Discovery discovery;
  CollectingConsumer parseDiagnostics;
  bool parsed = runAction(std::make_unique<DiscoverAction>(discovery),
                          clangArgs(options, source.str().str()), parseDiagnostics);
  if (!parsed || hasErrors(parseDiagnostics) || !discovery.problems.empty()) {
    reportParseErrors(parseDiagnostics);
    for (const auto& problem : discovery.problems)
      std::cerr << ir::formatDiagnostic(problem);
    return std::nullopt;
  }

  std::vector<GraphFunction> graphs;
  for (const std::string& wanted : options.onlyGraphs) {
    auto it = std::find_if(discovery.graphs.begin(), discovery.graphs.end(),
                           [&](const GraphFunction& g) { return g.name == wanted; });
    if (it == discovery.graphs.end()) {
      std::cerr << "cgc: error: no CG_GRAPH function named '" << wanted << "' in "
                << source.str().str() << "\n";
      return std::nullopt;
    }
    graphs.push_back(*it);
  }
  if (options.onlyGraphs.empty())
    graphs = discovery.graphs;
  if (graphs.empty()) {
    std::cerr << source.str().str()
              << ":1:1: error: no CG_GRAPH function found; mark a "
                 "'void graph(cg::GraphBuilder&)' function with CG_GRAPH\n";
    return std::nullopt;
  }

  // Pass 2. The probe lives beside the source so relative includes behave.
  llvm::SmallString<256> probePath(source);
  llvm::sys::path::replace_extension(probePath, "cgc-probe.cpp");
  Evaluation evaluation;
  CollectingConsumer evalDiagnostics;
  bool evaluated = runAction(std::make_unique<EvaluateAction>(graphs, evaluation),
                             clangArgs(options, probePath.str().str()), evalDiagnostics,
                             probePath.str().str(), probeSource(source.str().str(), graphs));
  if (!evaluated || hasErrors(evalDiagnostics) || !evaluation.problems.empty()) {
    reportEvaluationErrors(evalDiagnostics, probePath.str().str(), graphs,
                           options.constexprSteps);
    for (const auto& problem : evaluation.problems)
      std::cerr << ir::formatDiagnostic(problem);
    return std::nullopt;
  }

  FrontendResult result;
  result.codecs = std::move(evaluation.codecs);
  for (auto& graph : evaluation.graphs) {
    if (!graph)
      throw std::logic_error("internal compiler error: a graph probe was not evaluated");
    result.graphs.push_back(std::move(*graph));
  }
  std::set<std::string> unique(discovery.files.begin(), discovery.files.end());
  result.dependencies.assign(unique.begin(), unique.end());
  return result;
}

} // namespace cg::frontend
