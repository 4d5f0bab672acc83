//===- Codegen.h - Driver header and actor programs from a schedule -*- C++ -*-===//
//
// Fills templates/ for one target (one graph source): the typed driver
// header and its compiled part, one program per actor instance (its schedule
// as straight-line code, each task commented with its source line), and the
// actor executable's main(). Same input, byte-identical output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/AggregateCodec.h"
#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace cg::codegen {

struct GraphToGenerate {
  const ir::Graph* graph;
  const schedule::Schedule* schedule;
};

struct CodegenInput {
  std::string target; // the add_compiled_graph() target name
  std::string source; // absolute path of the graph source
  /// How the driver header includes the graph source: its path relative to
  /// the output directory, so that no generated file names the checkout.
  std::string sourceInclude;
  std::string command; // how cgc was invoked, for the header comments
  std::vector<GraphToGenerate> graphs;
  std::vector<ir::AggregateCodec> codecs; // dependencies first
  /// `cgc --transport=tcp`: the specs say every channel between processes is
  /// TCP (GraphSpec::tcp_everywhere).
  bool tcpEverywhere = false;
  /// The `#include` lines the actor programs take in place of the graph
  /// source (frontend/SourceIncludes.h): with them, an edit to a graph
  /// function recompiles only the programs it changes. nullopt: the
  /// programs include the source, because of `sourceNeededFor`.
  std::optional<std::vector<std::string>> actorIncludes = std::nullopt;
  std::string sourceNeededFor = "";
  /// The actor programs are compiled in this many files,
  /// <target>.actors.<i>.cpp, program k in file k mod actorShards, so that
  /// a changed program recompiles only its own file; 1: <target>.actors.cpp.
  unsigned actorShards = 1;
};

struct GeneratedFile {
  std::string name; // file name, relative to the output directory
  std::string contents;
};

std::vector<GeneratedFile> generate(const CodegenInput& input);

/// `ns::graph` -> `ns_graph`: a C++ identifier naming a graph in file names
/// and generated symbols.
std::string identifierFor(const std::string& name);

} // namespace cg::codegen
