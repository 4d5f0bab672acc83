//===- Frontend.h - From an annotated C++ source to graph IR -----*- C++ -*-===//
//
// Runs Clang (libTooling) over the user's graph source with the target's real
// compile flags, finds the CG_ACTOR classes and CG_GRAPH functions, evaluates
// each graph function with Clang's constant evaluator and decodes the result
// into ir::Graph. Problems in the user's source come back as diagnostics for
// the caller to print (DiagnosticPrinter.h) before it exits 1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/SourceIncludes.h"
#include "ir/AggregateCodec.h"
#include "ir/Diagnostic.h"
#include "ir/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace cg::frontend {

/// Twice Clang's default. Measured here: a bind costs the builder about 48
/// steps, so a generated graph of 10,000 tasks on 1,000 actors needs about
/// 480k; Clang evaluates ~170k steps/s of plain loops, so an infinite loop in a
/// graph fails in about 12 s.
inline constexpr unsigned kDefaultConstexprSteps = 2'000'000;

/// Capacities of the arrays each graph is evaluated into: records and
/// characters of text. The evaluator materializes an array only as far as it
/// is written, so these cost nothing unused; a graph larger than either is
/// evaluated a second time with its exact sizes.
inline constexpr uint64_t kProbeRecords = uint64_t{1} << 20;
inline constexpr uint64_t kProbeText = uint64_t{1} << 24;

struct FrontendOptions {
  std::string source;                    // the graph source (.cg.cpp)
  std::vector<std::string> compileFlags; // the target's flags (-I, -D, -std...)
  std::vector<std::string> onlyGraphs;   // empty: every CG_GRAPH function
  std::string resourceDir;               // empty: the one baked in at build
  unsigned constexprSteps = kDefaultConstexprSteps;
  uint64_t probeRecords = kProbeRecords; // see kProbeRecords
  uint64_t probeText = kProbeText;
  std::string preludeCache; // where the precompiled prelude is
                            // kept (Prelude.h); empty: none
};

struct FrontendResult {
  std::vector<ir::Graph> graphs;          // in source order
  std::vector<ir::Graph> actorSets;       // CG_ACTOR_SET functions, evaluated as graphs
                                          // (ir::actorSetOf() reads them), in source order
  std::vector<ir::AggregateCodec> codecs; // to generate, dependencies first
  std::vector<std::string> dependencies;  // every file the source read
  SourceIncludes actorIncludes;           // what actor programs include for the source
};

/// Returns the graphs; or nullopt, with every problem in `diagnostics` (the
/// user's C++ errors as Clang reported them, re-located where they are about
/// a graph, then cgc's own).
std::optional<FrontendResult> runFrontend(const FrontendOptions& options,
                                          std::vector<ir::Diagnostic>& diagnostics);

/// The compile flags of `source` in the compile database in `buildDir`
/// (without the compiler, the source, -c and -o), or an error message.
std::variant<std::vector<std::string>, std::string>
flagsFromCompileDatabase(const std::string& buildDir, const std::string& source);

} // namespace cg::frontend
