//===- cgc.cpp - The Compiled Graph compiler's command line --------------===//
//
// cgc <source> -o <dir> [--target NAME] [--graph NAME]... [--emit=...]
//     [--depfile FILE] [--schedule=bind|cost] [--costs FILE]
//     [--overlap-gpu-communication] [--max-in-flight N] [--transport=tcp]
//     [--actor-executable PATH] [--time-phases]
//     [--prelude-cache DIR | --no-prelude-cache] -- <compile flags>
// cgc --help | --version
//
// Parses the graph source with the given flags, evaluates its CG_GRAPH
// functions, validates and schedules each graph, and writes the artefacts.
// Exit codes: 0 success; 1 the user's source is wrong (diagnostics printed);
// 2 bad command line or I/O failure; 70 internal compiler error.
//
// --help and the cgc table of docs/configuration.md describe the same flags,
// each in a line; a test fails when the two name different flags or values.
//
// One file, a little over 700 lines: the flags and the one run through the
// phases that reads them, which nothing else needs.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/PythonModule.h"
#include "codegen/Recipes.h"
#include "codegen/Supported.h"
#include "frontend/DiagnosticPrinter.h"
#include "frontend/Frontend.h"
#include "frontend/Prelude.h"
#include "ir/ActorSet.h"
#include "ir/GraphJson.h"
#include "ir/Validate.h"
#include "schedule/ActorSetSchedule.h"
#include "schedule/Costs.h"
#include "schedule/Schedule.h"
#include "schedule/ScheduleDot.h"
#include "schedule/ScheduleJson.h"
#include "support/InputFile.h"
#include "support/InternalError.h"
#include "support/Jobs.h"
#include "support/PhaseTimes.h"
#include <cg/detail/launch_geometry.hpp>

#include "clang/Basic/Version.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace {

namespace cl = llvm::cl;

cl::OptionCategory category("cgc options");

cl::opt<std::string> sourcePath(cl::Positional, cl::Required, cl::desc("<graph source>"),
                                cl::cat(category));
cl::opt<std::string> outputDir("o", cl::Required, cl::desc("Directory for the generated files"),
                               cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> targetName("target",
                                cl::desc("Name of the build target; prefixes the generated sources "
                                         "(default: the source's name up to its first '.')"),
                                cl::value_desc("name"), cl::cat(category));
cl::list<std::string> onlyGraphs("graph",
                                 cl::desc("Compile only this CG_GRAPH function (repeatable)"),
                                 cl::value_desc("name"), cl::cat(category));
enum class Emit { IR, Schedule, ScheduleJson, Dot, Cpp, Mpirun, Srun, Python };
cl::list<Emit> emits(
    "emit", cl::CommaSeparated,
    cl::desc("What to write (default: ir,schedule,schedule-json,dot,cpp)"),
    cl::values(clEnumValN(Emit::IR, "ir", "<graph>.ir.json, the graph IR"),
               clEnumValN(Emit::Schedule, "schedule",
                          "<graph>.schedule.txt, each actor's operations"),
               clEnumValN(Emit::ScheduleJson, "schedule-json",
                          "<graph>.schedule.json, the schedule for tools"),
               clEnumValN(Emit::Dot, "dot", "<graph>.dot, the tasks and the schedule for Graphviz"),
               clEnumValN(Emit::Cpp, "cpp",
                          "<target>.cg.hpp/.driver.cpp driver, per-actor programs, actor main"),
               clEnumValN(Emit::Mpirun, "mpirun",
                          "<graph>.mpirun.sh, the graph under OpenMPI's mpirun (only when "
                          "asked for)"),
               clEnumValN(Emit::Srun, "srun",
                          "<graph>.srun.sh, the graph under SLURM's srun --multi-prog (only "
                          "when asked for)"),
               clEnumValN(Emit::Python, "python",
                          "<target>.python.cpp, a pybind11 module of the graphs (only when "
                          "asked for)")),
    cl::cat(category));
enum class TransportChoice { Placement, Tcp };
cl::opt<TransportChoice>
    transport("transport", cl::desc("How channels between processes travel"),
              cl::values(clEnumValN(TransportChoice::Placement, "placement",
                                    "shared memory on one host, TCP between hosts (the default)"),
                         clEnumValN(TransportChoice::Tcp, "tcp",
                                    "TCP for every channel between processes, on one host too")),
              cl::init(TransportChoice::Placement), cl::cat(category));
cl::opt<std::string> actorExecutable(
    "actor-executable",
    cl::desc("The actor executable the mpirun/srun recipes start (default: <target>_actors)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<cg::schedule::ScheduleOptions::Order> scheduleOrder(
    "schedule", cl::desc("How each actor's tasks are ordered (default: bind)"),
    cl::values(clEnumValN(cg::schedule::ScheduleOptions::Order::Bind, "bind",
                          "in bind order, as the graph function binds them"),
               clEnumValN(cg::schedule::ScheduleOptions::Order::Cost, "cost",
                          "by simulated cost: independent tasks of one actor may be "
                          "reordered (methods must commute); costs from g.cost<&C::m>(c) "
                          "and --costs")),
    cl::init(cg::schedule::ScheduleOptions::Order::Bind), cl::cat(category));
cl::opt<std::string> costsPath(
    "costs",
    cl::desc("JSON profile of method costs for --schedule=cost: {\"format\": \"cg-costs\", "
             "\"version\": 1, \"costs\": {\"Class::method\" or \"actor.method\": cost}}; "
             "overrides g.cost annotations"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<bool> overlapGpuCommunication(
    "overlap-gpu-communication",
    cl::desc("Move NCCL and CUDA IPC reads ahead of computes they do not depend on"),
    cl::cat(category));
cl::opt<bool> dotOperations(
    "dot-operations",
    cl::desc("Draw the schedule's operations in <graph>.dot beside the tasks (default: true; "
             "--dot-operations=false: the tasks alone)"),
    cl::init(true), cl::cat(category));
cl::opt<unsigned>
    maxInFlight("max-in-flight",
                cl::desc("Executions in flight (and channel slots) the schedule is simulated with "
                         "(default: the runtime's default cg::LaunchOptions::max_in_flight)"),
                cl::init(cg::detail::kDefaultLaunchGeometry.max_in_flight), cl::value_desc("K"),
                cl::cat(category));
cl::opt<std::string> includeSourceAs(
    "include-source-as",
    cl::desc("How the generated driver header includes the graph source (default: its path "
             "relative to the output directory). add_compiled_graph() passes the file name and "
             "puts the source's directory on the include path, so that no generated file "
             "names a path of the build machine"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<unsigned> actorShards(
    "actor-shards",
    cl::desc("Compile the actor programs in N files, <target>.actors.<i>.cpp, rather than one, "
             "<target>.actors.cpp: an edit to a graph function then recompiles only the files of "
             "the programs it changes (default: 1; add_compiled_graph() passes 8)"),
    cl::init(1), cl::value_desc("N"), cl::cat(category));
cl::opt<std::string> depfilePath("depfile",
                                 cl::desc("Write a Makefile-style depfile of the source's "
                                          "includes (for the build system)"),
                                 cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    compileDatabase("p",
                    cl::desc("Build directory whose compile_commands.json has the source's flags "
                             "(added before those after '--')"),
                    cl::value_desc("build dir"), cl::cat(category));
cl::opt<unsigned> constexprSteps(
    "constexpr-steps",
    cl::desc("Step limit of Clang's constant evaluator when running graph functions"),
    cl::init(cg::frontend::kDefaultConstexprSteps), cl::value_desc("N"), cl::cat(category));
cl::opt<std::string>
    resourceDir("resource-dir",
                cl::desc("Clang resource directory (default: the one cgc was built with"
                         ")"),
                cl::value_desc("dir"), cl::cat(category));

cl::opt<bool> colorDiagnostics("fcolor-diagnostics",
                               cl::desc("Colour diagnostics (default: when stderr is a terminal "
                                        "and NO_COLOR is not set)"),
                               cl::cat(category));
cl::opt<bool> noColorDiagnostics("fno-color-diagnostics", cl::desc("Do not colour diagnostics"),
                                 cl::cat(category));
cl::opt<cg::frontend::DiagnosticFormat> diagnosticsFormat(
    "diagnostics-format", cl::desc("How diagnostics are written to stderr"),
    cl::values(clEnumValN(cg::frontend::DiagnosticFormat::text, "text",
                          "as Clang's: the location, the source line and a caret (default)"),
               clEnumValN(cg::frontend::DiagnosticFormat::json, "json",
                          "one JSON array of every diagnostic, for tools and CI annotations")),
    cl::init(cg::frontend::DiagnosticFormat::text), cl::cat(category));

// For tests of the frontend's second evaluation (see kProbeRecords).
cl::opt<uint64_t> probeRecords("probe-records", cl::Hidden,
                               cl::desc("Records a graph is first evaluated into"),
                               cl::init(cg::frontend::kProbeRecords), cl::cat(category));
cl::opt<uint64_t> probeText("probe-text", cl::Hidden,
                            cl::desc("Characters of text a graph is first evaluated into"),
                            cl::init(cg::frontend::kProbeText), cl::cat(category));

cl::opt<std::string>
    preludeCache("prelude-cache",
                 cl::desc("Directory where <cg/cg.hpp> is kept precompiled between runs, used "
                          "only if this user alone can write it (default: .cgc-prelude beside "
                          "the output directory, else ~/.cache/cgc)"),
                 cl::value_desc("dir"), cl::cat(category));
cl::opt<bool> noPrelude("no-prelude-cache",
                        cl::desc("Parse <cg/cg.hpp> afresh, without a precompiled copy"),
                        cl::cat(category));

cl::opt<bool> timePhases("time-phases", cl::desc("Print the wall time of each phase to stderr"),
                         cl::cat(category));

const char* kOverview =
    "Compiled Graph compiler\n\n"
    "  cgc <source> -o <dir> [options] -- <compile flags>\n"
    "  cgc <source> -o <dir> -p <build dir> [options]\n\n"
    "Everything after '--' is passed to Clang as the source's compile flags\n"
    "(include directories, defines, -std=...); with -p, the flags of the\n"
    "source's entry in <build dir>/compile_commands.json come first.\n\n"
    "Outputs, in <dir>:\n"
    "  <graph>.ir.json          the graph: actors, tasks, values, source lines\n"
    "  <graph>.schedule.txt     per actor, its numbered READ/COMPUTE/WRITE operations\n"
    "  <graph>.schedule.json    the same, with the global order and simulated times\n"
    "  <graph>.dot              the tasks and the operations, for Graphviz\n"
    "  <target>.cg.hpp          the typed driver header: cg::launch<&graph>()\n"
    "  <target>.driver.cpp      the driver library's compiled part\n"
    "  <target>.<graph>.<actor>.cpp  one actor's schedule as code\n"
    "  <target>.actors.hpp      what the actor programs include: the actor classes\n"
    "  <target>.actors.cpp      every actor program, compiled once (both modes);\n"
    "                           with --actor-shards=N, <target>.actors.<i>.cpp\n"
    "  <target>.actor_host.cpp  main() of the actor executable (processes mode)\n"
    "  <graph>.mpirun.sh        with --emit=mpirun: the graph under mpirun (MPMD)\n"
    "  <graph>.srun.sh          with --emit=srun: the graph under srun --multi-prog\n"
    "  <target>.python.cpp      with --emit=python: a pybind11 module of the graphs\n\n"
    "A source whose first line of code is '#include <cg/cg.hpp>' is parsed with that\n"
    "header precompiled, kept for the next run in <dir>/../.cgc-prelude (see\n"
    "--prelude-cache, --no-prelude-cache).\n\n"
    "The source and --costs must be regular files of at most 64 MiB.\n";

// `--version`: the project's version (CMake's project(VERSION), passed in as
// CG_VERSION) and the Clang that parses graph sources, which decides what C++
// they may use.
void printVersion(llvm::raw_ostream& out) {
  out << "cgc (Compiled Graph) " CG_VERSION "\n"
      << "built on Clang " CLANG_VERSION_STRING ", LLVM " LLVM_VERSION_STRING "\n";
}

bool wants(Emit kind) {
  bool listed = std::find(emits.begin(), emits.end(), kind) != emits.end();
  if (kind == Emit::Mpirun || kind == Emit::Srun || kind == Emit::Python)
    return listed; // launch recipes and the Python module only when asked for
  return emits.empty() || listed;
}

// cgc writes a source file per actor, so a graph of tens of thousands of
// actors (a generator gone wrong, a raised step limit) is as many files: say
// so above these sizes, far beyond any graph we know of (a pipeline over a
// thousand GPUs has about a thousand actors), rather than fill a disk quietly.
constexpr size_t kManyFiles = 2000;
constexpr size_t kManyBytes = size_t{64} << 20;

void warnIfFarBeyondSense(const std::vector<cg::ir::Graph>& graphs,
                          const std::vector<std::pair<std::string, std::string>>& files,
                          cg::frontend::DiagnosticPrinter& diagnostics) {
  size_t bytes = 0;
  for (const auto& file : files)
    bytes += file.second.size();
  if (files.size() <= kManyFiles && bytes <= kManyBytes)
    return;
  const cg::ir::Graph* largest = nullptr;
  for (const cg::ir::Graph& graph : graphs)
    if (largest == nullptr || graph.actors.size() > largest->actors.size())
      largest = &graph;
  cg::ir::Diagnostic warning{{}, "", {}, cg::ir::Severity::warning};
  if (largest != nullptr) {
    warning.loc = largest->loc;
    warning.message =
        "graph '" + largest->name + "' has " + std::to_string(largest->actors.size()) + " actors: ";
  }
  warning.message += "cgc writes " + std::to_string(files.size()) + " files (" +
                     std::to_string((bytes + (size_t{1} << 20) - 1) / (size_t{1} << 20)) +
                     " MiB), one source file per actor; more than " + std::to_string(kManyFiles) +
                     " files or " + std::to_string(kManyBytes >> 20) +
                     " MiB is far beyond a graph we know of";
  diagnostics.print(warning);
}

// Rewrites a file only when its contents change, so builds stay incremental.
bool writeIfChanged(const std::string& path, const std::string& contents) {
  {
    std::ifstream existing(path, std::ios::binary);
    if (existing) {
      std::stringstream buffer;
      buffer << existing.rdbuf();
      if (buffer.str() == contents)
        return true;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) {
    std::cerr << "cgc: error: cannot write " << path << "\n";
    return false;
  }
  return true;
}

std::string escapeForMake(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

// `path` relative to the directory `from` (both absolute and normalised):
// generated files name sources this way, never by the checkout's path, so
// that two checkouts generate the same bytes.
std::string relativePath(const std::string& path, const std::string& from) {
  return std::filesystem::path(path).lexically_relative(from).generic_string();
}

// The prelude cache to use: `wanted`, unless it exists and another user
// could have put a PCH there (then, for the default, this user's own cache);
// empty for none. A one-line note says when the wanted one is passed over.
std::string trustedPreludeCache(const std::string& wanted, bool isDefault) {
  std::optional<std::string> problem = cg::frontend::cacheDirectoryProblem(wanted);
  if (!problem || !llvm::sys::fs::exists(wanted))
    return wanted; // ours, or not there yet: the frontend makes it, mode 0700
  std::string instead = isDefault ? cg::frontend::userCacheDirectory() : "";
  if (!instead.empty() && llvm::sys::fs::exists(instead) &&
      cg::frontend::cacheDirectoryProblem(instead))
    instead.clear();
  std::cerr << "cgc: note: not using the prelude cache " << wanted << ": it " << *problem << "; "
            << (instead.empty() ? "parsing <cg/cg.hpp> afresh" : "using " + instead) << "\n";
  return instead;
}

// Every file a graph writes has its name in it (<graph>.schedule.json,
// <target>.<graph>.<actor>.cpp); a name longer than a file name may be is an
// error at the graph or the actor, rather than the file system's later.
constexpr size_t kMaxFileName = 255; // NAME_MAX of Linux and macOS file systems

std::vector<cg::ir::Diagnostic> fileNameProblems(const std::vector<cg::ir::Graph>& graphs,
                                                 const std::string& target) {
  std::vector<cg::ir::Diagnostic> problems;
  auto tooLong = [](const std::string& what, const std::string& name, size_t length) {
    std::string shown = name.size() > 60 ? name.substr(0, 60) + "..." : name;
    return what + " '" + shown + "' is " + std::to_string(name.size()) +
           " characters: the file names cgc writes for it would be " + std::to_string(length) +
           ", more than the " + std::to_string(kMaxFileName) + " a file name may have";
  };
  for (const cg::ir::Graph& graph : graphs) {
    std::string id = cg::codegen::identifierFor(graph.name);
    // The longest of <graph>.schedule.json and <target>.<graph>.<actor>.cpp.
    size_t longest = id.size() + std::string(".schedule.json").size();
    if (wants(Emit::Cpp))
      longest = std::max(longest, target.size() + 1 + id.size() + 1 + std::string(".cpp").size());
    if (longest > kMaxFileName) {
      problems.push_back({graph.loc, tooLong("graph name", graph.name, longest)});
      continue;
    }
    if (!wants(Emit::Cpp))
      continue;
    for (const cg::ir::Actor& actor : graph.actors) {
      size_t length = target.size() + 1 + id.size() + 1 +
                      cg::codegen::identifierFor(actor.name).size() + std::string(".cpp").size();
      if (length > kMaxFileName)
        problems.push_back({actor.loc, tooLong("actor name", actor.name, length)});
    }
  }
  return problems;
}

std::string absoluteOutputDir() {
  llvm::SmallString<256> dir(outputDir.getValue());
  llvm::sys::fs::make_absolute(dir);
  llvm::sys::path::remove_dots(dir, true);
  return dir.str().str();
}

// The graph as its .ir.json shows it: source files relative to the graph
// source's directory.
cg::ir::Graph withFilesRelativeTo(cg::ir::Graph graph, const std::string& dir) {
  auto relative = [&](cg::ir::SourceLoc& loc) {
    if (std::filesystem::path(loc.file).is_absolute())
      loc.file = relativePath(loc.file, dir);
  };
  relative(graph.loc);
  for (cg::ir::Actor& actor : graph.actors)
    relative(actor.loc);
  for (cg::ir::Task& task : graph.tasks)
    relative(task.loc);
  for (cg::ir::Collective& collective : graph.collectives)
    relative(collective.loc);
  return graph;
}

int run(int argc, const char** argv) {
  // Compile flags follow "--"; llvm::cl sees only what precedes it.
  std::vector<const char*> ours;
  std::vector<std::string> compileFlags;
  bool afterDashes = false;
  for (int i = 0; i < argc; ++i) {
    if (!afterDashes && std::string_view(argv[i]) == "--")
      afterDashes = true;
    else if (afterDashes)
      compileFlags.emplace_back(argv[i]);
    else
      ours.push_back(argv[i]);
  }
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(printVersion);
  if (!cl::ParseCommandLineOptions(static_cast<int>(ours.size()), ours.data(), kOverview,
                                   &llvm::errs()))
    return 2;

  std::string target = targetName;
  if (target.empty()) {
    target = llvm::sys::path::filename(sourcePath).str();
    target = target.substr(0, target.find('.'));
  }

  if (!compileDatabase.empty()) {
    auto flags = cg::frontend::flagsFromCompileDatabase(compileDatabase, sourcePath);
    if (auto* error = std::get_if<std::string>(&flags)) {
      std::cerr << "cgc: error: " << *error << "\n";
      return 2;
    }
    auto& fromDatabase = std::get<std::vector<std::string>>(flags);
    compileFlags.insert(compileFlags.begin(), fromDatabase.begin(), fromDatabase.end());
  }
  // Before Clang opens it: Clang would read a FIFO until a writer comes,
  // /dev/zero until memory runs out, and call a directory "file not found".
  if (std::optional<std::string> problem = cg::support::inputFileProblem(sourcePath)) {
    std::cerr << "cgc: error: " << *problem << "\n";
    return 2;
  }
  cg::frontend::FrontendOptions options{sourcePath,     compileFlags, onlyGraphs, resourceDir,
                                        constexprSteps, probeRecords, probeText,  ""};
  if (!noPrelude) {
    llvm::SmallString<256> cache(preludeCache.getValue());
    if (cache.empty()) {
      cache = outputDir.getValue();
      if (!llvm::sys::fs::make_absolute(cache)) {
        llvm::sys::path::remove_dots(cache, /*remove_dot_dot=*/true);
        while (cache.size() > 1 && llvm::sys::path::is_separator(cache.back()))
          cache.pop_back();
        llvm::sys::path::remove_filename(cache);
        llvm::sys::path::append(cache, ".cgc-prelude");
      } else {
        cache.clear();
      }
    }
    if (!cache.empty())
      options.preludeCache = trustedPreludeCache(cache.str().str(), preludeCache.empty());
  }
  std::optional<cg::schedule::CostProfile> profile;
  if (!costsPath.empty()) {
    auto text = cg::support::readInputFile(costsPath);
    if (text.index() == 1) {
      std::cerr << "cgc: error: --costs: " << std::get<1>(text) << "\n";
      return 2;
    }
    try {
      profile = cg::schedule::parseCostProfile(std::get<0>(text));
    } catch (const std::runtime_error& e) {
      std::cerr << "cgc: error: " << costsPath << ": " << e.what() << "\n";
      return 2;
    }
  }

  std::optional<bool> colors;
  if (colorDiagnostics || noColorDiagnostics)
    colors = colorDiagnostics && !noColorDiagnostics;
  cg::frontend::DiagnosticPrinter diagnostics(diagnosticsFormat, cg::frontend::colorsWanted(colors),
                                              llvm::errs());
  // Every exit from here on writes what was printed (JSON: the array).
  struct Finish {
    cg::frontend::DiagnosticPrinter& printer;
    ~Finish() { printer.finish(); }
  } finish{diagnostics};

  std::vector<cg::ir::Diagnostic> sourceProblems;
  std::optional<cg::frontend::FrontendResult> parsed =
      cg::frontend::runFrontend(options, sourceProblems);
  diagnostics.print(sourceProblems);
  if (!parsed)
    return 1;
  if (profile)
    for (cg::ir::Graph& graph : parsed->graphs)
      cg::schedule::applyCostProfile(*profile, graph);
  // Each graph over an actor set takes the set's actors.
  auto sets = cg::ir::applyActorSets(parsed->actorSets, parsed->graphs);
  if (auto* problems = std::get_if<std::vector<cg::ir::Diagnostic>>(&sets)) {
    diagnostics.print(*problems);
    return 1;
  }
  const auto& actorSets = std::get<std::vector<cg::ir::ActorSet>>(sets);

  cg::schedule::ScheduleOptions scheduling;
  scheduling.order = scheduleOrder;
  scheduling.overlapGpuCommunication = overlapGpuCommunication;
  scheduling.maxInFlight = std::max(1u, maxInFlight.getValue());
  const bool tcpEverywhere = transport == TransportChoice::Tcp;

  std::vector<cg::schedule::Schedule> schedules;
  bool failed = false;
  std::optional<cg::support::PhaseTimer> scheduleTimer("schedule");
  for (const cg::ir::Graph& graph : parsed->graphs) {
    std::vector<cg::ir::Diagnostic> problems = cg::ir::validate(graph);
    if (problems.empty()) {
      auto scheduled = cg::schedule::buildSchedule(graph, scheduling);
      if (auto* schedule = std::get_if<cg::schedule::Schedule>(&scheduled))
        schedules.push_back(std::move(*schedule));
      else
        problems = std::get<std::vector<cg::ir::Diagnostic>>(scheduled);
    }
    // NCCL edges and collectives of other types than cg::Tensor: the
    // schedule and the IR can still be emitted, the program cannot.
    if (problems.empty() && wants(Emit::Cpp))
      problems = cg::codegen::unsupportedTransports(graph);
    diagnostics.print(problems);
    failed |= !problems.empty();
  }
  // The graphs of a set, executed in turn, do not block each other; and
  // until the runtime launches a set, nothing that would run one is written.
  if (!failed) {
    std::vector<cg::ir::Diagnostic> problems =
        cg::schedule::checkActorSets(actorSets, parsed->graphs, schedules, scheduling.maxInFlight);
    if (problems.empty() &&
        (wants(Emit::Cpp) || wants(Emit::Python) || wants(Emit::Mpirun) || wants(Emit::Srun)))
      problems = cg::codegen::unsupportedActorSets(parsed->graphs);
    diagnostics.print(problems);
    failed = !problems.empty();
  }
  scheduleTimer.reset();
  if (failed)
    return 1;
  if (std::vector<cg::ir::Diagnostic> problems = fileNameProblems(parsed->graphs, target);
      !problems.empty()) {
    diagnostics.print(problems);
    return 1;
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
    std::cerr << "cgc: error: cannot create " << outputDir << ": " << ec.message() << "\n";
    return 2;
  }
  auto output = [&](const std::string& name) {
    llvm::SmallString<256> path(outputDir.getValue());
    llvm::sys::path::append(path, name);
    return path.str().str();
  };

  // Everything to write, rendered first: (path, contents).
  std::vector<std::pair<std::string, std::string>> files;
  cg::codegen::CodegenInput codegen{target, "", "", "", {}, parsed->codecs};
  llvm::SmallString<256> absoluteSource(sourcePath.getValue());
  llvm::sys::fs::make_absolute(absoluteSource);
  llvm::sys::path::remove_dots(absoluteSource, true);
  codegen.source = absoluteSource.str().str();
  codegen.sourceInclude = includeSourceAs.empty()
                              ? relativePath(codegen.source, absoluteOutputDir())
                              : includeSourceAs.getValue();
  if (codegen.sourceInclude.find_first_of("\"\n") != std::string::npos) {
    std::cerr << "cgc: error: --include-source-as '" << codegen.sourceInclude
              << "' cannot be written in an #include \"...\"\n";
    return 2;
  }
  codegen.tcpEverywhere = tcpEverywhere;
  if (parsed->actorIncludes.neededFor.empty()) {
    codegen.actorIncludes.emplace();
    for (const cg::frontend::SourceInclude& include : parsed->actorIncludes.includes)
      codegen.actorIncludes->push_back(
          cg::frontend::includeLineFor(include, codegen.sourceInclude));
  }
  codegen.sourceNeededFor = parsed->actorIncludes.neededFor;
  if (actorShards < 1 || actorShards > 64) {
    std::cerr << "cgc: error: --actor-shards must be 1 to 64, not " << actorShards << "\n";
    return 2;
  }
  codegen.actorShards = actorShards;
  codegen.command = "cgc " + llvm::sys::path::filename(sourcePath).str() + " --target " + target;
  if (constexprSteps != cg::frontend::kDefaultConstexprSteps)
    codegen.command += " --constexpr-steps=" + std::to_string(constexprSteps);
  if (wants(Emit::Python))
    if (std::optional<std::string> problem = cg::codegen::pythonModuleNameProblem(target)) {
      std::cerr << "cgc: error: --emit=python: " << *problem << "\n";
      return 2;
    }
  // The artefacts are rendered on other threads while codegen runs on this
  // one: both only read the graphs and schedules. Each has its place in
  // `files` before it is rendered, so their order is the same every run.
  std::vector<std::function<void()>> renderings;
  auto render = [&](std::string path, std::function<std::string()> contents) {
    size_t at = files.size();
    files.emplace_back(std::move(path), "");
    renderings.push_back(
        [&files, at, contents = std::move(contents)] { files[at].second = contents(); });
  };
  const std::string sourceDir = llvm::sys::path::parent_path(codegen.source).str();
  for (size_t i = 0; i < parsed->graphs.size(); ++i) {
    const cg::ir::Graph& graph = parsed->graphs[i];
    const cg::schedule::Schedule& schedule = schedules[i];
    std::string id = cg::codegen::identifierFor(graph.name);
    if (wants(Emit::IR))
      render(output(id + ".ir.json"), [&graph, &sourceDir] {
        return cg::ir::toJson(withFilesRelativeTo(graph, sourceDir));
      });
    if (wants(Emit::Schedule))
      render(output(id + ".schedule.txt"), [&graph, &schedule, tcpEverywhere] {
        return cg::schedule::renderScheduleText(graph, schedule, tcpEverywhere);
      });
    if (wants(Emit::ScheduleJson))
      render(output(id + ".schedule.json"), [&graph, &schedule, tcpEverywhere] {
        return cg::schedule::renderScheduleJson(graph, schedule, tcpEverywhere);
      });
    if (wants(Emit::Dot))
      render(output(id + ".dot"), [&graph, &schedule] {
        return cg::schedule::renderScheduleDot(graph, schedule, {.operations = dotOperations});
      });
    cg::codegen::RecipeInput recipe{
        codegen.command, actorExecutable.empty() ? target + "_actors" : actorExecutable.getValue(),
        id};
    if (wants(Emit::Mpirun))
      render(output(id + ".mpirun.sh"),
             [&graph, recipe] { return cg::codegen::mpirunRecipe(graph, recipe); });
    if (wants(Emit::Srun))
      render(output(id + ".srun.sh"),
             [&graph, recipe] { return cg::codegen::srunRecipe(graph, recipe); });
    codegen.graphs.push_back({&graph, &schedule});
  }
  if (wants(Emit::Schedule))
    for (const cg::ir::ActorSet& set : actorSets)
      render(output(cg::codegen::identifierFor(set.name) + ".schedule.txt"), [&, &set = set] {
        return cg::schedule::renderActorSetScheduleText(set, parsed->graphs, schedules,
                                                        scheduling.maxInFlight, tcpEverywhere);
      });
  std::vector<std::pair<std::string, std::string>> generated;
  {
    // What the artefacts add to codegen's time is the wait for them after it.
    // Codegen keeps a core busy (it formats the driver header on a thread of
    // its own while this one mostly waits for it): the artefacts get the rest.
    std::optional<cg::support::PhaseTimer> artefactsTimer("artefacts");
    cg::support::Jobs artefacts(std::move(renderings), std::max(1u, cg::support::coresToUse() - 1));
    artefactsTimer.reset();
    if (wants(Emit::Python))
      generated.emplace_back(output(target + ".python.cpp"), cg::codegen::pythonModule(codegen));
    if (wants(Emit::Cpp)) {
      cg::support::PhaseTimer timer("codegen (with format)");
      for (cg::codegen::GeneratedFile& file : cg::codegen::generate(codegen))
        generated.emplace_back(output(file.name), std::move(file.contents));
    }
    cg::support::PhaseTimer timer("artefacts");
    artefacts.wait();
  }
  std::move(generated.begin(), generated.end(), std::back_inserter(files));

  if (!depfilePath.empty()) {
    std::string deps = escapeForMake(output(target + ".cg.hpp")) + ":";
    for (const std::string& dependency : parsed->dependencies)
      deps += " \\\n  " + escapeForMake(dependency);
    if (!costsPath.empty()) {
      llvm::SmallString<256> costs(costsPath.getValue());
      llvm::sys::fs::make_absolute(costs);
      llvm::sys::path::remove_dots(costs, true);
      deps += " \\\n  " + escapeForMake(costs.str().str());
    }
    files.emplace_back(depfilePath, deps + "\n");
  }

  warnIfFarBeyondSense(parsed->graphs, files, diagnostics);
  cg::support::PhaseTimer timer("write");
  bool ok = true;
  for (const auto& [path, contents] : files)
    ok &= writeIfChanged(path, contents);
  return ok ? 0 : 2;
}

// `--time-phases`: one line per phase, codegen without the formatting inside it.
void printPhaseTimes() {
  std::vector<std::pair<std::string, double>> phases = cg::support::phaseTimes();
  double format = 0;
  for (const auto& [name, seconds] : phases)
    if (name == "format")
      format += seconds;
  double total = 0;
  for (auto& [name, seconds] : phases)
    if (name == "codegen (with format)") {
      name = "codegen";
      seconds -= format;
    }
  for (const auto& [name, seconds] : phases) {
    std::fprintf(stderr, "cgc: time: %-10s %8.3f s\n", name.c_str(), seconds);
    total += seconds;
  }
  std::fprintf(stderr, "cgc: time: %-10s %8.3f s\n", "total", total);
}

} // namespace

// cgc is wrong, not the user's graph: exit status 70.
static void reportInternalError(const std::string& what) {
  std::cerr << "cgc: " << what << "\nPlease report this with the graph source and the "
            << "command line.\n";
}

// A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) is a bug of ours too:
// after LLVM's handlers have printed the stack and what Clang was doing (the
// file and line it was parsing), say so and exit 70 rather than die by the
// signal. Runs in the signal handler: write() and _exit() only.
static void reportCrash(void*) {
  static const char message[] =
      "cgc: internal compiler error: cgc crashed (the stack and what it was doing are above)\n"
      "Please report this with the graph source and the command line.\n";
  [[maybe_unused]] ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
  _exit(70);
}

int main(int argc, const char** argv) {
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  llvm::EnablePrettyStackTrace();
  llvm::setBugReportMsg(nullptr);                    // LLVM's own asks for reports to LLVM
  llvm::sys::AddSignalHandler(reportCrash, nullptr); // last: after the stack
  try {
    int status = run(argc, argv);
    if (timePhases)
      printPhaseTimes();
    return status;
  } catch (const cg::InternalError& e) {
    reportInternalError(e.what());
  } catch (const std::exception& e) {
    // Nothing else should escape a pass: that is a bug of ours too.
    reportInternalError(std::string("internal compiler error: unexpected exception: ") + e.what());
  }
  return 70;
}
