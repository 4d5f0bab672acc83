//===- Recipes.cpp - Launch recipes for mpirun and srun -------------------===//
//
// Plain POSIX sh, so the recipe runs wherever the launcher does. Actor names
// are quoted for the shell; hosts come from CG_HOST_<i> at run time (the
// graph only knows logical host indices).
//
//===----------------------------------------------------------------------===//
#include "codegen/Recipes.h"

#include "codegen/Templates.h"

#include <fmt/format.h>

namespace cg::codegen {
namespace {

// 'text' for sh, with embedded single quotes closed and escaped.
std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The recipe: recipe.sh.tpl's header, then `launch`, the launcher's command.
std::string recipe(const ir::Graph& graph, const RecipeInput& input, const char* what,
                   const std::string& usage, const std::string& launch) {
  return fmt::format(fmt::runtime(templateText("recipe.sh.tpl")), fmt::arg("graph", graph.name),
                     fmt::arg("file", graph.loc.file), fmt::arg("line", graph.loc.line),
                     fmt::arg("what", what), fmt::arg("command", input.command),
                     fmt::arg("usage", usage), fmt::arg("n", graph.actors.size()),
                     fmt::arg("actors", input.actorExecutable), fmt::arg("launch", launch));
}

} // namespace

std::string mpirunRecipe(const ir::Graph& graph, const RecipeInput& input) {
  std::string out =
      "exec mpirun ${CG_MPIRUN_FLAGS:-} -x CG_RENDEZVOUS ${CG_SECRET:+-x CG_SECRET} \\\n"
      "  ${CG_SECRET_FILE:+-x CG_SECRET_FILE} \\\n"
      "  -np 1 ${CG_HOST_0:+--host \"$CG_HOST_0\"} \"$@\"";
  for (const ir::Actor& actor : graph.actors)
    out += fmt::format(
        " \\\n  : -np 1 ${{CG_HOST_{0}:+--host \"$CG_HOST_{0}\"}} \"$CG_ACTORS\" {1} {2}",
        actor.host, shellQuote(graph.name), shellQuote(actor.name));
  return recipe(graph, input, "OpenMPI's mpirun (one app context per process)",
                "CG_RENDEZVOUS=node0:29517 sh " + input.graphId + ".mpirun.sh ./driver [args...]",
                out);
}

std::string srunRecipe(const ir::Graph& graph, const RecipeInput& input) {
  std::string out = "conf=$(mktemp)\n"
                    "trap 'rm -f \"$conf\"' EXIT\n"
                    "{\n"
                    "  printf '0 %s\\n' \"$*\"\n";
  for (size_t i = 0; i < graph.actors.size(); ++i)
    out += fmt::format("  printf '{} %s %s %s\\n' \"$CG_ACTORS\" {} {}\n", i + 1,
                       shellQuote(graph.name), shellQuote(graph.actors[i].name));
  out += fmt::format("}} >\"$conf\"\n"
                     "srun ${{CG_SRUN_FLAGS:-}} --export=ALL --ntasks={} --multi-prog \"$conf\"",
                     graph.actors.size() + 1);
  return recipe(
      graph, input, "SLURM's srun --multi-prog",
      "CG_RENDEZVOUS=$(hostname):29517 sh " + input.graphId + ".srun.sh ./driver [args...]", out);
}

} // namespace cg::codegen
