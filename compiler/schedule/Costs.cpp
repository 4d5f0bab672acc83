//===- Costs.cpp - Per-method cost estimates from a JSON profile ----------===//
//
// Small and strict, like the IR reader: a profile that does not parse is an
// error naming the key, never a silently ignored file.
//
//===----------------------------------------------------------------------===//

#include "schedule/Costs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <stdexcept>
#include <string>

namespace cg::schedule {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error("invalid cost profile: " + message);
}

std::string withoutLeadingColons(std::string name) {
  if (name.rfind("::", 0) == 0)
    name.erase(0, 2);
  return name;
}

} // namespace

CostProfile parseCostProfile(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    std::string_view what = e.what();
    if (std::size_t tagEnd = what.find("] "); tagEnd != std::string_view::npos)
      what.remove_prefix(tagEnd + 2);
    fail(std::string(what));
  }
  if (!j.is_object())
    fail("expected an object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "costs")
      fail(fmt::format("unknown key '{}'", it.key()));
  if (!j.contains("format") || j["format"] != "cg-costs")
    fail("'format' must be \"cg-costs\"");
  if (!j.contains("version") || j["version"] != 1)
    fail("'version' must be 1");
  if (!j.contains("costs") || !j["costs"].is_object())
    fail("'costs' must be an object of \"Class::method\" or \"actor.method\" keys");
  CostProfile profile;
  for (auto it = j["costs"].begin(); it != j["costs"].end(); ++it) {
    const std::string& key = it.key();
    bool named = key.find("::") != std::string::npos || key.find('.') != std::string::npos;
    if (!named)
      fail(fmt::format("costs.{}: expected \"Class::method\" or \"actor.method\"", key));
    if (!it.value().is_number())
      fail(fmt::format("costs.{}: expected a number", key));
    double cost = it.value().get<double>();
    if (!(cost >= 0 && cost <= std::numeric_limits<double>::max()))
      fail(fmt::format("costs.{}: a cost must be finite and not negative", key));
    profile.costs[key] = cost;
  }
  return profile;
}

void applyCostProfile(const CostProfile& profile, ir::Graph& graph) {
  for (ir::Task& task : graph.tasks) {
    const ir::Actor& actor = graph.actors[task.actor];
    auto byActor = profile.costs.find(actor.name + "." + task.method);
    if (byActor != profile.costs.end()) {
      task.cost = byActor->second;
      continue;
    }
    auto byClass = profile.costs.find(withoutLeadingColons(actor.className) + "::" + task.method);
    if (byClass != profile.costs.end())
      task.cost = byClass->second;
  }
}

} // namespace cg::schedule
