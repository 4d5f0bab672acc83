//===- ScheduleHelpers.h - Building and reading schedules in tests -*- C++ -*-===//
//
// Scheduler tests state exact operation orders. Written as structs they are
// hard to read, so the helpers here spell an actor's list the way the
// schedule text does, one string per operation: "READ w2.forward#2 c3",
// "COMPUTE w2.forward#2", "WRITE w2.backward#1 c4". With the graph fixtures
// (GraphFixtures.h) a test reads as the schedule it expects.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostic.h"
#include "ir/Graph.h"
#include "ir/Names.h"
#include "schedule/Schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace cg::test {

/// The schedule of a graph expected to have one; fails the test otherwise.
inline schedule::Schedule scheduleOf(const ir::Graph& graph,
                                     const schedule::ScheduleOptions& options = {}) {
  auto result = schedule::buildSchedule(graph, options);
  if (auto* diagnostics = std::get_if<std::vector<ir::Diagnostic>>(&result)) {
    std::string text;
    for (const ir::Diagnostic& diagnostic : *diagnostics)
      text += ir::formatDiagnostic(diagnostic);
    ADD_FAILURE() << "unexpected diagnostics:\n" << text;
    return {};
  }
  return std::get<schedule::Schedule>(std::move(result));
}

/// The diagnostics of a graph expected to have no schedule, formatted.
inline std::string rejectionOf(const ir::Graph& graph,
                               const schedule::ScheduleOptions& options = {}) {
  auto result = schedule::buildSchedule(graph, options);
  auto* diagnostics = std::get_if<std::vector<ir::Diagnostic>>(&result);
  if (!diagnostics) {
    ADD_FAILURE() << "expected no schedule, got:\n"
                  << schedule::renderScheduleText(graph, std::get<schedule::Schedule>(result));
    return {};
  }
  std::string text;
  for (const ir::Diagnostic& diagnostic : *diagnostics)
    text += ir::formatDiagnostic(diagnostic);
  return text;
}

/// An actor's operations as "KIND task c<channel>...", plus " [moved]".
inline std::vector<std::string> opsOf(const ir::Graph& graph, const schedule::Schedule& s,
                                      unsigned actor) {
  std::vector<std::string> tasks = ir::taskLabels(graph);
  std::vector<std::string> out;
  for (const schedule::Operation& op : s.actors.at(actor).operations) {
    std::string line = std::string(schedule::kindName(op.kind)) + " " + tasks[op.task];
    for (unsigned c : op.channels)
      line += " c" + std::to_string(c);
    if (op.moved)
      line += " [moved]";
    out.push_back(line);
  }
  return out;
}

/// The actor index of the actor named `name`.
inline unsigned actorNamed(const ir::Graph& graph, const std::string& name) {
  for (unsigned a = 0; a < graph.actors.size(); ++a)
    if (graph.actors[a].name == name)
      return a;
  ADD_FAILURE() << "no actor named " << name;
  return 0;
}

} // namespace cg::test
