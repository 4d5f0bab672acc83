//===- Names.h - How every artefact of cgc names tasks, values and places -*- C++ -*-===//
//
// One set of names for `<graph>.schedule.txt`, `.schedule.json`, `.dot` and
// the comments of the generated code, so that a task, value, channel end or
// source location reads the same in all of them. Computed from the graph
// alone; the renderers ask once per graph and index the vectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace cg::ir {

/// "echo.cg.cpp:13", or empty when the location is unknown. The basename
/// keeps the file identical across build directories and machines.
std::string shortLoc(const SourceLoc& loc);

/// "echo.cg.cpp:13:5": shortLoc() with the column, for generated code, whose
/// comments point at one bind on a line.
std::string exactLoc(const SourceLoc& loc);

/// "a.echo": a task as its bind names it (diagnostics use this).
std::string taskName(const Graph& graph, const Task& task);

/// Names each task as the reader of the schedule thinks of it, "a.echo".
/// When one actor binds one method several times, the tasks are told apart
/// as "a.step#1", "a.step#2".
std::vector<std::string> taskLabels(const Graph& graph);

/// Names each value: "input #0", the task producing it, "a.echo", or, for
/// element k of an unpacked std::tuple result, "a.split[k]".
std::vector<std::string> valueLabels(const Graph& graph, const std::vector<std::string>& tasks);

/// "b.echo(a.echo, 3)": task `t` as a call of its label on its arguments'
/// labels (a constant shows as its C++ expression).
std::string taskCall(const Graph& graph, unsigned t, const std::vector<std::string>& tasks,
                     const std::vector<std::string>& values);

/// "[allreduce sum #0, rank 1 of 2]" for a task that is one rank of a
/// collective; empty for a plain task.
std::string collectiveNote(const Graph& graph, unsigned t);

/// An actor's name, or "driver" for -1 (a channel end that is the driver,
/// schedule::kDriver).
std::string endpointName(const Graph& graph, int endpoint);

} // namespace cg::ir
