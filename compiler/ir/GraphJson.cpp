//===- GraphJson.cpp - The graph IR as `<graph>.ir.json` ------------------===//
//
// Writing uses nlohmann::ordered_json so keys come out in the order we insert
// them, not alphabetically: the file reads top-down like the graph function.
// (The tests read it back: tests/unit/compiler/GraphJsonReader.h.)
//
//===----------------------------------------------------------------------===//

#include "ir/GraphJson.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cg::ir {
namespace {

using OrderedJson = nlohmann::ordered_json;

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

OrderedJson locToJson(const SourceLoc& loc) {
  OrderedJson j = OrderedJson::object();
  j["file"] = loc.file;
  j["line"] = loc.line;
  j["column"] = loc.column;
  return j;
}

OrderedJson idsToJson(const std::vector<unsigned>& ids) {
  OrderedJson j = OrderedJson::array();
  for (unsigned id : ids)
    j.push_back(id);
  return j;
}

OrderedJson constantToJson(const Constant& constant) {
  OrderedJson j = OrderedJson::object();
  j["type"] = constant.type.spelling;
  j["expression"] = constant.expression;
  return j;
}

OrderedJson argToJson(const Arg& arg) {
  OrderedJson j = OrderedJson::object();
  if (arg.kind == Arg::Kind::Value)
    j["value"] = arg.value;
  else
    j["constant"] = constantToJson(arg.constant);
  return j;
}

OrderedJson producerToJson(const Producer& producer) {
  OrderedJson j = OrderedJson::object();
  j[producer.kind == Producer::Kind::Input ? "input" : "task"] = producer.index;
  // Only a task result can be a tuple element; an input with an element is
  // inconsistent IR, but it is still written as it is (and rejected when the
  // file is read back), never silently dropped.
  if (producer.element >= 0)
    j["element"] = producer.element;
  return j;
}

} // namespace

std::string toJson(const Graph& graph) {
  OrderedJson j = OrderedJson::object();
  j["format"] = kJsonFormat;
  j["version"] = kJsonVersion;
  j["name"] = graph.name;
  j["loc"] = locToJson(graph.loc);
  if (!graph.actorSet.empty())
    j["actorSet"] = graph.actorSet;
  j["inputs"] = idsToJson(graph.inputs);

  OrderedJson actors = OrderedJson::array();
  for (const Actor& actor : graph.actors) {
    OrderedJson a = OrderedJson::object();
    a["name"] = actor.name;
    a["className"] = actor.className;
    if (!actor.constructorArgs.empty()) {
      OrderedJson args = OrderedJson::array();
      for (const Constant& constant : actor.constructorArgs)
        args.push_back(constantToJson(constant));
      a["constructorArgs"] = std::move(args);
    }
    a["loc"] = locToJson(actor.loc);
    if (actor.host != 0)
      a["host"] = actor.host;
    if (actor.gpus != 0)
      a["gpus"] = actor.gpus;
    actors.push_back(std::move(a));
  }
  j["actors"] = std::move(actors);

  OrderedJson tasks = OrderedJson::array();
  for (const Task& task : graph.tasks) {
    OrderedJson t = OrderedJson::object();
    t["actor"] = task.actor;
    t["method"] = task.method;
    OrderedJson args = OrderedJson::array();
    for (const Arg& arg : task.args)
      args.push_back(argToJson(arg));
    t["args"] = std::move(args);
    t["results"] = idsToJson(task.results);
    if (task.collective >= 0)
      t["collective"] = task.collective;
    if (task.cost != 0)
      t["cost"] = task.cost;
    t["loc"] = locToJson(task.loc);
    tasks.push_back(std::move(t));
  }
  j["tasks"] = std::move(tasks);

  OrderedJson values = OrderedJson::array();
  for (const Value& value : graph.values) {
    OrderedJson v = OrderedJson::object();
    v["type"] = value.type.spelling;
    v["producer"] = producerToJson(value.producer);
    v["transport"] = toString(value.transport);
    if (value.cudaDevice != 0)
      v["cudaDevice"] = value.cudaDevice;
    values.push_back(std::move(v));
  }
  j["values"] = std::move(values);

  OrderedJson collectives = OrderedJson::array();
  for (const Collective& collective : graph.collectives) {
    OrderedJson c = OrderedJson::object();
    c["kind"] = toString(collective.kind);
    c["reduceOp"] = collective.reduceOp;
    c["tasks"] = idsToJson(collective.tasks);
    c["loc"] = locToJson(collective.loc);
    collectives.push_back(std::move(c));
  }
  j["collectives"] = std::move(collectives);

  j["outputs"] = idsToJson(graph.outputs);

  // Strings come from C++ source and paths, normally UTF-8; should one not
  // be, replace the bad bytes instead of failing to write the file at all.
  return j.dump(2, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

} // namespace cg::ir
