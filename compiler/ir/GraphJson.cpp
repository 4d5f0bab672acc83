//===- GraphJson.cpp - The graph IR as `<graph>.ir.json` ------------------===//
//
// Writing uses nlohmann::ordered_json so keys come out in the order we insert
// them, not alphabetically: the file reads top-down like the graph function.
//
// Reading is strict. The file is machine-written, so anything unexpected (an
// unknown key, a float where an id belongs, an id out of range) means it was
// edited by hand or written by another version of cgc; failing with the exact
// field path is far more useful than scheduling a subtly different graph.
//
//===----------------------------------------------------------------------===//

#include "ir/GraphJson.h"

#include "ir/Validate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cg::ir {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr std::string_view kFormat = "cg-ir";
constexpr unsigned kVersion = 1;

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

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Field paths are spelled like the C++ a reader would write to reach the
/// field ("tasks[2].loc.line"), matching findInconsistency()'s messages.
std::string fieldPath(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string elementPath(std::string_view parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

[[noreturn]] void fail(std::string_view path, std::string_view problem) {
  throw std::runtime_error(fmt::format("invalid cg-ir JSON: {}: {}",
                                       path.empty() ? "top level" : path,
                                       problem));
}

/// What was found instead of the expected type: scalars are quoted as
/// written so that "got -1" or "got 1.5" says exactly what is wrong.
std::string found(const Json& j) {
  if (j.is_number() || j.is_boolean() || j.is_null())
    return j.dump();
  return j.type_name();
}

void expectObject(const Json& j, std::string_view path) {
  if (!j.is_object())
    fail(path, fmt::format("expected an object, got {}", found(j)));
}

void expectArray(const Json& j, std::string_view path) {
  if (!j.is_array())
    fail(path, fmt::format("expected an array, got {}", found(j)));
}

/// Checks that `object` has exactly the keys `keys`: missing ones first (in
/// schema order), then unknown ones, so a misspelt key reports what is needed.
void expectKeys(const Json& object, std::string_view path,
                std::initializer_list<std::string_view> keys) {
  expectObject(object, path);
  for (std::string_view key : keys)
    if (!object.contains(key))
      fail(path, fmt::format("missing key '{}'", key));
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (std::string_view k : keys)
      known = known || k == it.key();
    if (!known)
      fail(path, fmt::format("unknown key '{}'", it.key()));
  }
}

unsigned readUnsigned(const Json& j, std::string_view path) {
  if (!j.is_number_unsigned())
    fail(path, fmt::format("expected a non-negative integer, got {}", found(j)));
  std::uint64_t n = j.get<std::uint64_t>();
  if (n > std::numeric_limits<unsigned>::max())
    fail(path, fmt::format("integer {} is too large", n));
  return static_cast<unsigned>(n);
}

std::string readString(const Json& j, std::string_view path) {
  if (!j.is_string())
    fail(path, fmt::format("expected a string, got {}", found(j)));
  return j.get<std::string>();
}

std::vector<unsigned> readIds(const Json& j, std::string_view path) {
  expectArray(j, path);
  std::vector<unsigned> ids;
  ids.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    ids.push_back(readUnsigned(j[i], elementPath(path, i)));
  return ids;
}

SourceLoc readLoc(const Json& j, std::string_view path) {
  expectKeys(j, path, {"file", "line", "column"});
  SourceLoc loc;
  loc.file = readString(j["file"], fieldPath(path, "file"));
  loc.line = readUnsigned(j["line"], fieldPath(path, "line"));
  loc.column = readUnsigned(j["column"], fieldPath(path, "column"));
  return loc;
}

Producer readProducer(const Json& j, std::string_view path) {
  expectObject(j, path);
  if (j.size() != 1)
    fail(path, "expected exactly one key, 'input' or 'task'");
  auto only = j.begin();
  const std::string& key = only.key();
  Producer producer;
  if (key == "input")
    producer.kind = Producer::Kind::Input;
  else if (key == "task")
    producer.kind = Producer::Kind::Task;
  else
    fail(path, fmt::format("unknown key '{}'; expected 'input' or 'task'", key));
  producer.index = readUnsigned(only.value(), fieldPath(path, key));
  return producer;
}

Actor readActor(const Json& j, std::string_view path) {
  expectKeys(j, path, {"name", "className", "loc"});
  Actor actor;
  actor.name = readString(j["name"], fieldPath(path, "name"));
  actor.className = readString(j["className"], fieldPath(path, "className"));
  actor.loc = readLoc(j["loc"], fieldPath(path, "loc"));
  return actor;
}

Task readTask(const Json& j, std::string_view path) {
  expectKeys(j, path, {"actor", "method", "args", "result", "loc"});
  Task task;
  task.actor = readUnsigned(j["actor"], fieldPath(path, "actor"));
  task.method = readString(j["method"], fieldPath(path, "method"));
  task.args = readIds(j["args"], fieldPath(path, "args"));
  task.result = readUnsigned(j["result"], fieldPath(path, "result"));
  task.loc = readLoc(j["loc"], fieldPath(path, "loc"));
  return task;
}

Value readValue(const Json& j, std::string_view path) {
  expectKeys(j, path, {"type", "producer"});
  Value value;
  value.type.spelling = readString(j["type"], fieldPath(path, "type"));
  value.producer = readProducer(j["producer"], fieldPath(path, "producer"));
  return value;
}

template <typename T, typename ReadFn>
std::vector<T> readArray(const Json& j, std::string_view path, ReadFn read) {
  expectArray(j, path);
  std::vector<T> items;
  items.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    items.push_back(read(j[i], elementPath(path, i)));
  return items;
}

} // namespace

std::string toJson(const Graph& graph) {
  OrderedJson j = OrderedJson::object();
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["name"] = graph.name;
  j["loc"] = locToJson(graph.loc);
  j["inputs"] = idsToJson(graph.inputs);

  OrderedJson actors = OrderedJson::array();
  for (const Actor& actor : graph.actors) {
    OrderedJson a = OrderedJson::object();
    a["name"] = actor.name;
    a["className"] = actor.className;
    a["loc"] = locToJson(actor.loc);
    actors.push_back(std::move(a));
  }
  j["actors"] = std::move(actors);

  OrderedJson tasks = OrderedJson::array();
  for (const Task& task : graph.tasks) {
    OrderedJson t = OrderedJson::object();
    t["actor"] = task.actor;
    t["method"] = task.method;
    t["args"] = idsToJson(task.args);
    t["result"] = task.result;
    t["loc"] = locToJson(task.loc);
    tasks.push_back(std::move(t));
  }
  j["tasks"] = std::move(tasks);

  OrderedJson values = OrderedJson::array();
  for (const Value& value : graph.values) {
    OrderedJson producer = OrderedJson::object();
    producer[value.producer.kind == Producer::Kind::Input ? "input" : "task"] =
        value.producer.index;
    OrderedJson v = OrderedJson::object();
    v["type"] = value.type.spelling;
    v["producer"] = std::move(producer);
    values.push_back(std::move(v));
  }
  j["values"] = std::move(values);

  j["outputs"] = idsToJson(graph.outputs);

  // Strings come from C++ source and paths, normally UTF-8; should one not
  // be, replace the bad bytes instead of failing to write the file at all.
  return j.dump(2, ' ', /*ensure_ascii=*/false,
                nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

Graph graphFromJson(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep the
    // line/column and the reason.
    std::string_view what = e.what();
    if (std::size_t tagEnd = what.find("] "); tagEnd != std::string_view::npos)
      what.remove_prefix(tagEnd + 2);
    throw std::runtime_error(fmt::format("invalid cg-ir JSON: {}", what));
  }

  // Check the format and version before anything else: a file from another
  // tool or version would otherwise fail with a confusing field error.
  expectObject(j, "");
  if (!j.contains("format"))
    fail("", "missing key 'format'");
  if (std::string format = readString(j["format"], "format"); format != kFormat)
    fail("format", fmt::format("expected \"{}\", got \"{}\"", kFormat, format));
  if (!j.contains("version"))
    fail("", "missing key 'version'");
  if (unsigned version = readUnsigned(j["version"], "version");
      version != kVersion)
    fail("version", fmt::format("unsupported version {}; this cgc reads "
                                "version {}",
                                version, kVersion));

  expectKeys(j, "",
             {"format", "version", "name", "loc", "inputs", "actors", "tasks",
              "values", "outputs"});
  Graph graph;
  graph.name = readString(j["name"], "name");
  graph.loc = readLoc(j["loc"], "loc");
  graph.inputs = readIds(j["inputs"], "inputs");
  graph.actors = readArray<Actor>(j["actors"], "actors", readActor);
  graph.tasks = readArray<Task>(j["tasks"], "tasks", readTask);
  graph.values = readArray<Value>(j["values"], "values", readValue);
  graph.outputs = readIds(j["outputs"], "outputs");

  if (std::optional<std::string> problem = findInconsistency(graph))
    throw std::runtime_error(fmt::format("invalid cg-ir JSON: {}", *problem));
  return graph;
}

} // namespace cg::ir
