//===- PythonModule.h - The Python module of a target's graphs ---*- C++ -*-===//
//
// `cgc --emit=python` writes `<target>.python.cpp`: a pybind11 module named
// after the target with one class per graph, each bound by
// cg::python::bind_graph (runtime/include/cg/python.hpp) from the typed
// driver's own execute(), so nothing in it is written per type by hand.
// add_compiled_graph(... PYTHON) asks for it and builds the module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"

#include <optional>
#include <string>

namespace cg::codegen {

/// Why `target` cannot name a Python module (it is no Python identifier), or
/// nullopt when it can.
std::optional<std::string> pythonModuleNameProblem(const std::string& target);

/// The contents of `<target>.python.cpp` for `input`'s graphs.
std::string pythonModule(const CodegenInput& input);

} // namespace cg::codegen
