//===- PythonModule.cpp - The Python module of a target's graphs ----------===//

#include "codegen/PythonModule.h"

#include "codegen/FormatCode.h"
#include "codegen/Templates.h"

#include "support/CppLiteral.h"

#include <fmt/format.h>

#include <cctype>
#include <iterator>
#include <string>
#include <vector>

namespace cg::codegen {

std::optional<std::string> pythonModuleNameProblem(const std::string& target) {
  const auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  bool ok = !target.empty() && letter(target.front());
  for (char c : target)
    ok = ok && (letter(c) || (c >= '0' && c <= '9'));
  if (ok)
    return std::nullopt;
  return "target '" + target +
         "' cannot name a Python module: use letters, digits and '_', not starting with a digit";
}

std::string pythonModule(const CodegenInput& input) {
  std::string bindings;
  auto it = std::back_inserter(bindings);
  const std::string source = input.sourceInclude.substr(input.sourceInclude.rfind('/') + 1);
  std::string names;
  for (const GraphToGenerate& g : input.graphs)
    names += (names.empty() ? "" : ", ") + identifierFor(g.graph->name);
  // The plain structs the graphs carry, as classes (dependencies first).
  for (const ir::AggregateCodec& codec : input.codecs) {
    std::string name = codec.type.substr(
        codec.type.rfind("::") == std::string::npos ? 0 : codec.type.rfind("::") + 2);
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        c = '_';
    std::string names, members;
    for (const ir::AggregateCodec::Field& field : codec.fields) {
      names += (names.empty() ? "" : ", ") + cppStringLiteral(field.name);
      members += ", &" + codec.type + "::" + field.name;
    }
    fmt::format_to(it, "  cg::python::bind_struct<{}>(module, \"{}\", {{{}}}{});\n", codec.type,
                   name, names, members);
  }
  for (const GraphToGenerate& g : input.graphs) {
    const ir::Graph& graph = *g.graph;
    // The C++ types of its inputs (for TypeErrors and the docstrings) and of
    // its outputs, and where it is defined (for the docstrings).
    const auto spelled = [&](const std::vector<unsigned>& values) {
      std::string types;
      for (unsigned value : values)
        types += (types.empty() ? "" : ", ") + cppStringLiteral(graph.values[value].type.spelling);
      return types;
    };
    const std::string where =
        graph.loc.file.substr(graph.loc.file.rfind('/') + 1) + ":" + std::to_string(graph.loc.line);
    fmt::format_to(it, "  cg::python::bind_graph<&::{}>(module, \"{}\", {{{}}}, {{{}}}, {});\n",
                   graph.name, identifierFor(graph.name), spelled(graph.inputs),
                   spelled(graph.outputs), cppStringLiteral(where));
  }
  std::string out = fmt::format(
      fmt::runtime(templateText("python_module.cpp.tpl")), fmt::arg("target", input.target),
      fmt::arg("source_name", source), fmt::arg("command", input.command),
      fmt::arg("example_graph", input.graphs.empty()
                                    ? std::string("graph")
                                    : identifierFor(input.graphs.front().graph->name)),
      fmt::arg("doc", cppStringLiteral("The graphs of " + source + ": " + names)),
      fmt::arg("bindings", bindings));
  return formatCode(out, input.target + ".python.cpp");
}

} // namespace cg::codegen
