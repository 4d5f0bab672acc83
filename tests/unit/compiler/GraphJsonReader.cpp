//===- GraphJsonReader.cpp - Reading <graph>.ir.json back, for tests ------===//
//
// Reading is strict. The file is machine-written, so anything unexpected (an
// unknown key, a float where an id belongs, an id out of range) means it was
// edited by hand or written by another version of cgc; failing with the exact
// field path is far more useful than scheduling a subtly different graph.
// A file as cgc writes it is first read in one pass without a JSON document
// (class Plain: a tenth of the time at 100,000 tasks, which the scheduler
// benchmark needs); anything out of the ordinary goes to the document reader,
// which has the messages.
//
// One file, about 800 lines: the fast pass and the document reader read the
// same format, field by field, and must stay side by side to stay in step.
//
//===----------------------------------------------------------------------===//

#include "GraphJsonReader.h"

#include "ir/GraphJson.h"
#include "ir/Validate.h"

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

using Json = nlohmann::json;

constexpr std::string_view kFormat = kJsonFormat;
constexpr unsigned kVersion = kJsonVersion;

/// Field paths are spelled like the C++ a reader would write to reach the
/// field ("tasks[2].loc.line"), matching findInconsistency()'s messages. A
/// path is a chain of links on the reader's stack, spelled out only when a
/// message needs it: a large graph has millions of fields and no error.
struct Path {
  static constexpr std::size_t kNoIndex = ~std::size_t{0};
  /// A top-level key; "" is the top level itself.
  Path(const char* key) : key(key) {}
  Path(const Path* parent, std::string_view key, std::size_t index = kNoIndex)
      : parent(parent), key(key), index(index) {}

  std::string str() const {
    std::string up = parent ? parent->str() : std::string();
    if (index != kNoIndex)
      return fmt::format("{}[{}]", up, index);
    return up.empty() ? std::string(key) : fmt::format("{}.{}", up, key);
  }

  const Path* parent = nullptr;
  std::string_view key;
  std::size_t index = kNoIndex;
};

Path fieldPath(const Path& parent, std::string_view key) { return {&parent, key}; }

Path elementPath(const Path& parent, std::size_t index) { return {&parent, {}, index}; }

[[noreturn]] void fail(const Path& at, std::string_view problem) {
  std::string path = at.str();
  throw std::runtime_error(
      fmt::format("invalid cg-ir JSON: {}: {}", path.empty() ? "top level" : path, problem));
}

/// What was found instead of the expected type: scalars are quoted as
/// written so that "got -1" or "got 1.5" says exactly what is wrong.
std::string found(const Json& j) {
  if (j.is_number() || j.is_boolean() || j.is_null())
    return j.dump();
  return j.type_name();
}

void expectObject(const Json& j, const Path& path) {
  if (!j.is_object())
    fail(path, fmt::format("expected an object, got {}", found(j)));
}

void expectArray(const Json& j, const Path& path) {
  if (!j.is_array())
    fail(path, fmt::format("expected an array, got {}", found(j)));
}

/// Checks that `object` has all the keys `keys`, and otherwise only keys of
/// `optionalKeys`: missing ones first (in schema order), then unknown ones, so
/// a misspelt key reports what is needed.
void expectKeys(const Json& object, const Path& path, std::initializer_list<std::string_view> keys,
                std::initializer_list<std::string_view> optionalKeys = {}) {
  expectObject(object, path);
  for (std::string_view key : keys)
    if (!object.contains(key))
      fail(path, fmt::format("missing key '{}'", key));
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (std::string_view k : keys)
      known = known || k == it.key();
    for (std::string_view k : optionalKeys)
      known = known || k == it.key();
    if (!known)
      fail(path, fmt::format("unknown key '{}'", it.key()));
  }
}

unsigned readUnsigned(const Json& j, const Path& path) {
  if (!j.is_number_unsigned())
    fail(path, fmt::format("expected a non-negative integer, got {}", found(j)));
  std::uint64_t n = j.get<std::uint64_t>();
  if (n > std::numeric_limits<unsigned>::max())
    fail(path, fmt::format("integer {} is too large", n));
  return static_cast<unsigned>(n);
}

/// A non-negative index stored in an `int` field (where -1 means "none" in
/// the IR and is spelled as an absent key in JSON).
int readIndex(const Json& j, const Path& path) {
  if (!j.is_number_unsigned())
    fail(path, fmt::format("expected a non-negative integer, got {}", found(j)));
  std::uint64_t n = j.get<std::uint64_t>();
  if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    fail(path, fmt::format("integer {} is too large", n));
  return static_cast<int>(n);
}

double readNumber(const Json& j, const Path& path) {
  if (!j.is_number())
    fail(path, fmt::format("expected a number, got {}", found(j)));
  return j.get<double>();
}

std::string readString(const Json& j, const Path& path) {
  if (!j.is_string())
    fail(path, fmt::format("expected a string, got {}", found(j)));
  return j.get<std::string>();
}

std::vector<unsigned> readIds(const Json& j, const Path& path) {
  expectArray(j, path);
  std::vector<unsigned> ids;
  ids.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    ids.push_back(readUnsigned(j[i], elementPath(path, i)));
  return ids;
}

SourceLoc readLoc(const Json& j, const Path& path) {
  expectKeys(j, path, {"file", "line", "column"});
  SourceLoc loc;
  loc.file = readString(j["file"], fieldPath(path, "file"));
  loc.line = readUnsigned(j["line"], fieldPath(path, "line"));
  loc.column = readUnsigned(j["column"], fieldPath(path, "column"));
  return loc;
}

/// {"input": i}, {"task": t} or {"task": t, "element": k}.
Producer readProducer(const Json& j, const Path& path) {
  expectObject(j, path);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "input" && it.key() != "task" && it.key() != "element")
      fail(path, fmt::format("unknown key '{}'; expected 'input' or 'task' "
                             "(with 'element' for a task's tuple element)",
                             it.key()));
  bool isInput = j.contains("input");
  bool isTask = j.contains("task");
  if (isInput == isTask)
    fail(path, isInput ? "expected exactly one of 'input' and 'task', got both"
                       : "missing key 'input' or 'task'");
  if (isInput && j.contains("element"))
    fail(path, "key 'element' is only allowed with 'task'");
  Producer producer;
  producer.kind = isInput ? Producer::Kind::Input : Producer::Kind::Task;
  const char* key = isInput ? "input" : "task";
  producer.index = readUnsigned(j[key], fieldPath(path, key));
  if (j.contains("element"))
    producer.element = readIndex(j["element"], fieldPath(path, "element"));
  return producer;
}

Constant readConstant(const Json& j, const Path& path) {
  expectKeys(j, path, {"type", "expression"});
  Constant constant;
  constant.type.spelling = readString(j["type"], fieldPath(path, "type"));
  constant.expression = readString(j["expression"], fieldPath(path, "expression"));
  return constant;
}

/// {"value": id} or {"constant": CONSTANT}.
Arg readArg(const Json& j, const Path& path) {
  expectObject(j, path);
  if (j.size() != 1)
    fail(path, "expected exactly one key, 'value' or 'constant'");
  auto only = j.begin();
  const std::string& key = only.key();
  Arg arg;
  if (key == "value") {
    arg.kind = Arg::Kind::Value;
    arg.value = readUnsigned(only.value(), fieldPath(path, key));
  } else if (key == "constant") {
    arg.kind = Arg::Kind::Constant;
    arg.constant = readConstant(only.value(), fieldPath(path, key));
  } else {
    fail(path, fmt::format("unknown key '{}'; expected 'value' or 'constant'", key));
  }
  return arg;
}

Transport readTransport(const Json& j, const Path& path) {
  std::string name = readString(j, path);
  for (Transport transport :
       {Transport::Shm, Transport::Nccl, Transport::Cpu, Transport::Cuda, Transport::CudaIpc})
    if (name == toString(transport))
      return transport;
  fail(path, fmt::format("unknown transport \"{}\"; expected \"shm\", "
                         "\"nccl\", \"cpu\", \"cuda\" or \"cuda_ipc\"",
                         name));
}

Collective::Kind readCollectiveKind(const Json& j, const Path& path) {
  std::string name = readString(j, path);
  for (Collective::Kind kind :
       {Collective::Kind::AllReduce, Collective::Kind::AllGather, Collective::Kind::ReduceScatter})
    if (name == toString(kind))
      return kind;
  fail(path, fmt::format("unknown collective kind \"{}\"; expected "
                         "\"allreduce\", \"allgather\" or \"reducescatter\"",
                         name));
}

template <typename T, typename ReadFn>
std::vector<T> readArray(const Json& j, const Path& path, ReadFn read) {
  expectArray(j, path);
  std::vector<T> items;
  items.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    items.push_back(read(j[i], elementPath(path, i)));
  return items;
}

Actor readActor(const Json& j, const Path& path) {
  expectKeys(j, path, {"name", "className", "loc"}, {"constructorArgs", "host", "gpus"});
  Actor actor;
  actor.name = readString(j["name"], fieldPath(path, "name"));
  actor.className = readString(j["className"], fieldPath(path, "className"));
  if (j.contains("constructorArgs"))
    actor.constructorArgs =
        readArray<Constant>(j["constructorArgs"], fieldPath(path, "constructorArgs"), readConstant);
  actor.loc = readLoc(j["loc"], fieldPath(path, "loc"));
  if (j.contains("host"))
    actor.host = readUnsigned(j["host"], fieldPath(path, "host"));
  if (j.contains("gpus"))
    actor.gpus = readUnsigned(j["gpus"], fieldPath(path, "gpus"));
  return actor;
}

Task readTask(const Json& j, const Path& path) {
  expectKeys(j, path, {"actor", "method", "args", "results", "loc"}, {"collective", "cost"});
  Task task;
  task.actor = readUnsigned(j["actor"], fieldPath(path, "actor"));
  task.method = readString(j["method"], fieldPath(path, "method"));
  task.args = readArray<Arg>(j["args"], fieldPath(path, "args"), readArg);
  task.results = readIds(j["results"], fieldPath(path, "results"));
  if (j.contains("collective"))
    task.collective = readIndex(j["collective"], fieldPath(path, "collective"));
  if (j.contains("cost"))
    task.cost = readNumber(j["cost"], fieldPath(path, "cost"));
  task.loc = readLoc(j["loc"], fieldPath(path, "loc"));
  return task;
}

Value readValue(const Json& j, const Path& path) {
  expectKeys(j, path, {"type", "producer", "transport"}, {"cudaDevice"});
  Value value;
  value.type.spelling = readString(j["type"], fieldPath(path, "type"));
  value.producer = readProducer(j["producer"], fieldPath(path, "producer"));
  value.transport = readTransport(j["transport"], fieldPath(path, "transport"));
  if (j.contains("cudaDevice"))
    value.cudaDevice = readUnsigned(j["cudaDevice"], fieldPath(path, "cudaDevice"));
  return value;
}

Collective readCollective(const Json& j, const Path& path) {
  expectKeys(j, path, {"kind", "reduceOp", "tasks", "loc"});
  Collective collective;
  collective.kind = readCollectiveKind(j["kind"], fieldPath(path, "kind"));
  collective.reduceOp = readString(j["reduceOp"], fieldPath(path, "reduceOp"));
  collective.tasks = readIds(j["tasks"], fieldPath(path, "tasks"));
  collective.loc = readLoc(j["loc"], fieldPath(path, "loc"));
  return collective;
}

//===----------------------------------------------------------------------===//
// Reading plain text fast
//===----------------------------------------------------------------------===//

/// One pass over the text, straight into the Graph, for what toJson()
/// writes. It takes only plain JSON: strings of ASCII with no escape but
/// those of one character (keys with none), each key once, ids as plain digits, a cost as a
/// non-negative number. On anything else it gives up (Plain::GiveUp), and the reader above, which
/// knows every message, reads the text instead; so what this one accepts it must read exactly as
/// that one would.
class Plain {
public:
  struct GiveUp {};

  explicit Plain(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  Graph graph() {
    Graph graph;
    object({"format", "version", "name", "loc", "inputs", "actors", "tasks", "values",
            "collectives", "outputs"},
           {}, [&](std::size_t key) {
             switch (key) {
             case 0:
               if (string() != kFormat)
                 throw GiveUp{};
               break;
             case 1:
               if (integer(std::numeric_limits<unsigned>::max()) != kVersion)
                 throw GiveUp{};
               break;
             case 2:
               graph.name = string();
               break;
             case 3:
               graph.loc = loc();
               break;
             case 4:
               graph.inputs = ids();
               break;
             case 5:
               array([&] { graph.actors.push_back(actor()); });
               break;
             case 6:
               array([&] { graph.tasks.push_back(task()); });
               break;
             case 7:
               array([&] { graph.values.push_back(value()); });
               break;
             case 8:
               array([&] { graph.collectives.push_back(collective()); });
               break;
             case 9:
               graph.outputs = ids();
               break;
             }
           });
    space();
    if (p_ != end_)
      throw GiveUp{};
    return graph;
  }

private:
  void space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r'))
      ++p_;
  }
  bool consume(char c) {
    space();
    if (p_ == end_ || *p_ != c)
      return false;
    ++p_;
    return true;
  }
  void expect(char c) {
    if (!consume(c))
      throw GiveUp{};
  }

  std::string_view rawString() {
    expect('"');
    const char* begin = p_;
    while (p_ != end_ && *p_ != '"') {
      auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c >= 0x80 || c == '\\')
        throw GiveUp{};
      ++p_;
    }
    if (p_ == end_)
      throw GiveUp{};
    return {begin, static_cast<std::size_t>(p_++ - begin)};
  }
  /// A string that may have the escapes of one character (not \u).
  std::string string() {
    expect('"');
    std::string out;
    const char* begin = p_;
    while (p_ != end_ && *p_ != '"') {
      auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c >= 0x80)
        throw GiveUp{};
      if (c != '\\') {
        ++p_;
        continue;
      }
      out.append(begin, p_);
      if (++p_ == end_)
        throw GiveUp{};
      switch (*p_) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      default:
        throw GiveUp{};
      }
      begin = ++p_;
    }
    if (p_ == end_)
      throw GiveUp{};
    out.append(begin, p_++);
    return out;
  }

  /// Plain digits, no leading zero, at most `max`.
  std::uint64_t integer(std::uint64_t max) {
    space();
    const char* begin = p_;
    std::uint64_t n = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      auto digit = static_cast<std::uint64_t>(*p_ - '0');
      if (n > (max - digit) / 10)
        throw GiveUp{};
      n = n * 10 + digit;
      ++p_;
    }
    if (p_ == begin || (*begin == '0' && p_ - begin > 1) ||
        (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')))
      throw GiveUp{};
    return n;
  }
  unsigned id() { return static_cast<unsigned>(integer(std::numeric_limits<unsigned>::max())); }
  int index() { return static_cast<int>(integer(std::numeric_limits<int>::max())); }

  /// A JSON number without a sign, finite as a double.
  double number() {
    space();
    const char* begin = p_;
    auto digits = [&] {
      const char* from = p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9')
        ++p_;
      return p_ - from;
    };
    auto whole = digits();
    if (whole == 0 || (*begin == '0' && whole > 1))
      throw GiveUp{};
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (digits() == 0)
        throw GiveUp{};
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-'))
        ++p_;
      if (digits() == 0)
        throw GiveUp{};
    }
    double value = 0;
    auto [at, ec] = std::from_chars(begin, p_, value);
    if (ec != std::errc() || at != p_ || !std::isfinite(value))
      throw GiveUp{};
    return value;
  }

  /// An object whose keys are all of `keys` and any of `optionalKeys`, each
  /// once; `read(k)` reads the value of key k (numbered across both lists).
  template <typename Read>
  void object(std::initializer_list<std::string_view> keys,
              std::initializer_list<std::string_view> optionalKeys, Read read) {
    expect('{');
    std::uint32_t seen = 0;
    if (!consume('}')) {
      do {
        std::string_view name = rawString();
        std::size_t k = 0;
        for (std::string_view key : keys) {
          if (key == name)
            break;
          ++k;
        }
        if (k == keys.size())
          for (std::string_view key : optionalKeys) {
            if (key == name)
              break;
            ++k;
          }
        if (k == keys.size() + optionalKeys.size() || (seen & (1u << k)))
          throw GiveUp{};
        seen |= 1u << k;
        expect(':');
        read(k);
      } while (consume(','));
      expect('}');
    }
    std::uint32_t required = (1u << keys.size()) - 1;
    if ((seen & required) != required)
      throw GiveUp{};
  }

  template <typename Read> void array(Read read) {
    expect('[');
    if (consume(']'))
      return;
    do
      read();
    while (consume(','));
    expect(']');
  }

  std::vector<unsigned> ids() {
    std::vector<unsigned> ids;
    array([&] { ids.push_back(id()); });
    return ids;
  }

  SourceLoc loc() {
    SourceLoc loc;
    object({"file", "line", "column"}, {}, [&](std::size_t key) {
      switch (key) {
      case 0:
        loc.file = string();
        break;
      case 1:
        loc.line = id();
        break;
      case 2:
        loc.column = id();
        break;
      }
    });
    return loc;
  }

  Constant constant() {
    Constant constant;
    object({"type", "expression"}, {}, [&](std::size_t key) {
      if (key == 0)
        constant.type.spelling = string();
      else
        constant.expression = string();
    });
    return constant;
  }

  Actor actor() {
    Actor actor;
    object({"name", "className", "loc"}, {"constructorArgs", "host", "gpus"}, [&](std::size_t key) {
      switch (key) {
      case 0:
        actor.name = string();
        break;
      case 1:
        actor.className = string();
        break;
      case 2:
        actor.loc = loc();
        break;
      case 3:
        array([&] { actor.constructorArgs.push_back(constant()); });
        break;
      case 4:
        actor.host = id();
        break;
      case 5:
        actor.gpus = id();
        break;
      }
    });
    return actor;
  }

  Arg arg() {
    Arg arg;
    int keys = 0;
    object({}, {"value", "constant"}, [&](std::size_t key) {
      ++keys;
      if (key == 0) {
        arg.kind = Arg::Kind::Value;
        arg.value = id();
      } else {
        arg.kind = Arg::Kind::Constant;
        arg.constant = constant();
      }
    });
    if (keys != 1)
      throw GiveUp{};
    return arg;
  }

  Task task() {
    Task task;
    object({"actor", "method", "args", "results", "loc"}, {"collective", "cost"},
           [&](std::size_t key) {
             switch (key) {
             case 0:
               task.actor = id();
               break;
             case 1:
               task.method = string();
               break;
             case 2:
               array([&] { task.args.push_back(arg()); });
               break;
             case 3:
               task.results = ids();
               break;
             case 4:
               task.loc = loc();
               break;
             case 5:
               task.collective = index();
               break;
             case 6:
               task.cost = number();
               break;
             }
           });
    return task;
  }

  Producer producer() {
    Producer producer;
    bool input = false, task = false, element = false;
    object({}, {"input", "task", "element"}, [&](std::size_t key) {
      switch (key) {
      case 0:
        input = true;
        producer.index = id();
        break;
      case 1:
        task = true;
        producer.index = id();
        break;
      case 2:
        element = true;
        producer.element = index();
        break;
      }
    });
    if (input == task || (input && element))
      throw GiveUp{};
    producer.kind = input ? Producer::Kind::Input : Producer::Kind::Task;
    return producer;
  }

  Value value() {
    Value value;
    object({"type", "producer", "transport"}, {"cudaDevice"}, [&](std::size_t key) {
      switch (key) {
      case 0:
        value.type.spelling = string();
        break;
      case 1:
        value.producer = producer();
        break;
      case 2: {
        std::string_view name = rawString();
        bool known = false;
        for (Transport transport :
             {Transport::Shm, Transport::Nccl, Transport::Cpu, Transport::Cuda, Transport::CudaIpc})
          if (name == toString(transport)) {
            value.transport = transport;
            known = true;
          }
        if (!known)
          throw GiveUp{};
        break;
      }
      case 3:
        value.cudaDevice = id();
        break;
      }
    });
    return value;
  }

  Collective collective() {
    Collective collective;
    object({"kind", "reduceOp", "tasks", "loc"}, {}, [&](std::size_t key) {
      switch (key) {
      case 0: {
        std::string_view name = rawString();
        bool known = false;
        for (Collective::Kind kind : {Collective::Kind::AllReduce, Collective::Kind::AllGather,
                                      Collective::Kind::ReduceScatter})
          if (name == toString(kind)) {
            collective.kind = kind;
            known = true;
          }
        if (!known)
          throw GiveUp{};
        break;
      }
      case 1:
        collective.reduceOp = string();
        break;
      case 2:
        collective.tasks = ids();
        break;
      case 3:
        collective.loc = loc();
        break;
      }
    });
    return collective;
  }

  const char* p_;
  const char* end_;
};

} // namespace

std::optional<Graph> graphFromPlainJson(std::string_view text) {
  try {
    return Plain(text).graph();
  } catch (const Plain::GiveUp&) {
    return std::nullopt;
  }
}

Graph graphFromJson(std::string_view text) {
  if (std::optional<Graph> graph = graphFromPlainJson(text)) {
    if (std::optional<std::string> problem = findInconsistency(*graph))
      throw std::runtime_error(fmt::format("invalid cg-ir JSON: {}", *problem));
    return std::move(*graph);
  }
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    // A syntax error (parse_error) or a number too large for a double
    // (out_of_range, e.g. 1e400). Drop nlohmann's
    // "[json.exception.parse_error.101] " tag; keep the line/column and the
    // reason.
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
  if (unsigned version = readUnsigned(j["version"], "version"); version != kVersion)
    fail("version", fmt::format("unsupported version {}; this cgc reads "
                                "version {}",
                                version, kVersion));

  expectKeys(j, "",
             {"format", "version", "name", "loc", "inputs", "actors", "tasks", "values",
              "collectives", "outputs"},
             {"actorSet"});
  Graph graph;
  graph.name = readString(j["name"], "name");
  graph.loc = readLoc(j["loc"], "loc");
  if (j.contains("actorSet"))
    graph.actorSet = readString(j["actorSet"], "actorSet");
  graph.inputs = readIds(j["inputs"], "inputs");
  graph.actors = readArray<Actor>(j["actors"], "actors", readActor);
  graph.tasks = readArray<Task>(j["tasks"], "tasks", readTask);
  graph.values = readArray<Value>(j["values"], "values", readValue);
  graph.collectives = readArray<Collective>(j["collectives"], "collectives", readCollective);
  graph.outputs = readIds(j["outputs"], "outputs");

  if (std::optional<std::string> problem = findInconsistency(graph))
    throw std::runtime_error(fmt::format("invalid cg-ir JSON: {}", *problem));
  return graph;
}

} // namespace cg::ir
