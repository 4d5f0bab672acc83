//===- Labels.h - How the schedule artefacts name things ---------*- C++ -*-===//
//
// Names shared by `<graph>.schedule.txt`, `.schedule.json` and `.dot`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "schedule/Schedule.h"

#include <string>
#include <string_view>
#include <vector>

namespace cg::schedule {

/// "echo.cg.cpp:13", or empty when the location is unknown. The basename
/// keeps the file identical across build directories and machines.
std::string shortLoc(const ir::SourceLoc& loc);

/// Names each task as the reader of the schedule thinks of it, "a.echo".
/// When one actor binds one method several times, the tasks are told apart
/// as "a.step#1", "a.step#2".
std::vector<std::string> taskLabels(const ir::Graph& graph);

/// Names each value: "input #0", the task producing it, "a.echo", or, for
/// element k of an unpacked std::tuple result, "a.split[k]".
std::vector<std::string> valueLabels(const ir::Graph& graph,
                                     const std::vector<std::string>& tasks);


/// "[allreduce sum #0, rank 1 of 2]" for a task that is one rank of a
/// collective; empty for a plain task.
std::string collectiveNote(const ir::Graph& graph, unsigned t);

/// An actor's name, or "driver".
std::string endpointName(const ir::Graph& graph, int endpoint);

/// "READ", "COMPUTE", "WRITE".
std::string_view kindName(Operation::Kind kind);

} // namespace cg::schedule
