//===- Codegen.cpp - Driver header and actor programs from a schedule ----===//
//
// Everything structural lives in the templates; this file computes the
// pieces that vary (ports, operation bodies, spec tables) and formats them.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"

#include "codegen/FormatCode.h"
#include "codegen/Templates.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cg::codegen {
namespace {

using schedule::kDriver;
using schedule::Operation;

std::string baseName(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string locationText(const ir::SourceLoc& loc) {
  return fmt::format("{}:{}:{}", baseName(loc.file), loc.line, loc.column);
}

// A human name for a value: "input #0" or "a.echo".
std::string describeValue(const ir::Graph& graph, unsigned value) {
  const ir::Producer& producer = graph.values.at(value).producer;
  if (producer.kind == ir::Producer::Kind::Input)
    return fmt::format("input #{}", producer.index);
  const ir::Task& task = graph.tasks.at(producer.index);
  return graph.actors.at(task.actor).name + "." + task.method;
}

std::string describeTask(const ir::Graph& graph, const ir::Task& task) {
  std::string args;
  for (unsigned arg : task.args)
    args += (args.empty() ? "" : ", ") + describeValue(graph, arg);
  return fmt::format("{}.{}({})", graph.actors.at(task.actor).name, task.method, args);
}

std::string endpointName(const ir::Graph& graph, int endpoint) {
  return endpoint == kDriver ? "driver" : graph.actors.at(endpoint).name;
}

class GraphGenerator {
public:
  GraphGenerator(const CodegenInput& input, const ir::Graph& graph,
                 const schedule::Schedule& schedule)
      : input_(input), graph_(graph), schedule_(schedule), id_(identifierFor(graph.name)) {}

  std::string driverSection() const {
    std::string actorSpecs, channelSpecs, inputParams, inputWrites, resultTypes;
    for (const ir::Actor& actor : graph_.actors)
      actorSpecs += fmt::format("    {{\"{}\"}},\n", actor.name);
    for (const schedule::Channel& channel : schedule_.channels) {
      auto driver = std::find(channel.readers.begin(), channel.readers.end(), kDriver);
      channelSpecs += fmt::format(
          "    {{{}, {}, {}}},  // c{}: {}\n", channel.writer, channel.readers.size(),
          driver == channel.readers.end() ? -1 : driver - channel.readers.begin(),
          &channel - schedule_.channels.data(), describeValue(graph_, channel.value));
    }
    for (size_t i = 0; i < graph_.inputs.size(); ++i) {
      const std::string& type = graph_.values.at(graph_.inputs[i]).type.spelling;
      inputParams += fmt::format("{}const {}& input{}", i ? ", " : "", type, i);
      inputWrites += fmt::format("    runtime_->write_input({}, input{});\n", i, i);
    }
    for (unsigned output : graph_.outputs)
      resultTypes += (resultTypes.empty() ? "" : ", ") + graph_.values.at(output).type.spelling;
    std::string resultType =
        graph_.outputs.size() == 1 ? resultTypes : "std::tuple<" + resultTypes + ">";

    return fmt::format(
        fmt::runtime(templateText("driver_graph.hpp.tpl")), fmt::arg("graph", graph_.name),
        fmt::arg("graph_id", id_), fmt::arg("graph_qualified", "::" + graph_.name),
        fmt::arg("location", locationText(graph_.loc)),
        fmt::arg("target_ns", identifierFor(input_.target)),
        fmt::arg("actor_count", graph_.actors.size()), fmt::arg("actor_specs", actorSpecs),
        fmt::arg("channel_count", schedule_.channels.size()),
        fmt::arg("channel_specs", channelSpecs), fmt::arg("input_count", graph_.inputs.size()),
        fmt::arg("input_channels", fmt::format("{}", fmt::join(schedule_.inputChannels, ", "))),
        fmt::arg("output_count", graph_.outputs.size()),
        fmt::arg("output_channels", fmt::format("{}", fmt::join(schedule_.outputChannels, ", "))),
        fmt::arg("result_type", resultType), fmt::arg("input_params", inputParams),
        fmt::arg("input_writes", inputWrites));
  }

  std::string actorFunction(unsigned actor) const {
    return fmt::format("run_{}_{}", id_, identifierFor(graph_.actors.at(actor).name));
  }

  std::string actorFileName(unsigned actor) const {
    return fmt::format("{}.{}.{}.cpp", input_.target, id_,
                       identifierFor(graph_.actors.at(actor).name));
  }

  std::string actorProgram(unsigned actorIndex) const {
    const ir::Actor& actor = graph_.actors.at(actorIndex);
    const schedule::ActorSchedule& ops = schedule_.actors.at(actorIndex);
    return fmt::format(
        fmt::runtime(templateText("actor_main.cpp.tpl")),
        fmt::arg("file", actorFileName(actorIndex)), fmt::arg("actor", actor.name),
        fmt::arg("actor_class", actor.className), fmt::arg("graph", graph_.name),
        fmt::arg("graph_id", id_), fmt::arg("actor_id", identifierFor(actor.name)),
        fmt::arg("command", input_.command), fmt::arg("source_name", baseName(input_.source)),
        fmt::arg("schedule_file", id_ + ".schedule.txt"),
        fmt::arg("header", input_.target + ".cg.hpp"),
        fmt::arg("target_ns", identifierFor(input_.target)),
        fmt::arg("ports", ports(actorIndex, ops)), fmt::arg("body", body(actorIndex, ops)));
  }

private:
  std::string valueType(unsigned value) const { return graph_.values.at(value).type.spelling; }

  int readerSlot(const schedule::Channel& channel, int actor) const {
    auto it = std::find(channel.readers.begin(), channel.readers.end(), actor);
    if (it == channel.readers.end())
      throw std::logic_error("internal compiler error: actor reads a channel it is not a "
                             "reader of");
    return static_cast<int>(it - channel.readers.begin());
  }

  std::string ports(unsigned actor, const schedule::ActorSchedule& ops) const {
    std::string out;
    for (const Operation& op : ops.operations) {
      for (unsigned c : op.channels) {
        const schedule::Channel& channel = schedule_.channels.at(c);
        std::string peers;
        if (op.kind == Operation::Kind::Read) {
          out += fmt::format("  auto c{} = process.input<{}>({}, {});  // {}, from {}\n", c,
                             valueType(channel.value), c, readerSlot(channel, actor),
                             describeValue(graph_, channel.value),
                             endpointName(graph_, channel.writer));
        } else {
          for (int reader : channel.readers)
            peers += (peers.empty() ? "" : ", ") + endpointName(graph_, reader);
          out += fmt::format("  auto c{} = process.output<{}>({}, \"{}\");  // {}, to {}\n", c,
                             valueType(channel.value), c, graph_.tasks.at(op.task).method,
                             describeValue(graph_, channel.value), peers);
        }
      }
    }
    return out + (out.empty() ? "" : "\n");
  }

  // Arguments are moved into the method on their last use on this actor.
  std::map<unsigned, unsigned> lastUses(unsigned actor) const {
    std::map<unsigned, unsigned> last;
    for (unsigned t = 0; t < graph_.tasks.size(); ++t)
      if (graph_.tasks[t].actor == actor)
        for (unsigned arg : graph_.tasks[t].args)
          last[arg] = t;
    return last;
  }

  // One block per task: a comment naming the call and its source line, then
  // its READ, COMPUTE and WRITE operations in schedule order.
  std::string body(unsigned actor, const schedule::ActorSchedule& ops) const {
    std::map<unsigned, unsigned> last = lastUses(actor);
    std::string out;
    const ir::Task* current = nullptr;
    for (const Operation& op : ops.operations) {
      const ir::Task& task = graph_.tasks.at(op.task);
      if (&task != current) {
        out += fmt::format("{}    // {}  [{}]\n", current ? "\n" : "", describeTask(graph_, task),
                           locationText(task.loc));
        current = &task;
      }
      switch (op.kind) {
      case Operation::Kind::Read:
        for (unsigned c : op.channels) {
          unsigned value = schedule_.channels.at(c).value;
          out += fmt::format("    cg::Result<{}> v{};\n    if (!c{}.read(v{}))\n      return 0;\n",
                             valueType(value), value, c, value);
        }
        break;
      case Operation::Kind::Compute: {
        std::string args, inputs;
        for (unsigned arg : task.args) {
          bool once = std::count(task.args.begin(), task.args.end(), arg) == 1;
          bool moveIt = once && last.at(arg) == op.task;
          args += fmt::format("{}v{}.{}()", args.empty() ? "" : ", ", arg,
                              moveIt ? "take" : "value");
          inputs += fmt::format(", v{}", arg);
        }
        out += fmt::format("    cg::Result<{}> v{} = process.call(\"{}\", [&] {{ return "
                           "actor.{}({}); }}{});\n",
                           valueType(task.result), task.result, task.method, task.method, args,
                           inputs);
        break;
      }
      case Operation::Kind::Write:
        for (unsigned c : op.channels)
          out += fmt::format("    if (!c{}.write(v{}))\n      return 0;\n", c,
                             schedule_.channels.at(c).value);
        break;
      }
    }
    return out;
  }

  const CodegenInput& input_;
  const ir::Graph& graph_;
  const schedule::Schedule& schedule_;
  std::string id_;
};

} // namespace

std::string identifierFor(const std::string& name) {
  std::string id;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 2, "::") == 0) {
      id += '_';
      ++i;
    } else {
      char c = name[i];
      id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
  }
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id.front())))
    id.insert(id.begin(), '_');
  return id;
}

std::vector<GeneratedFile> generate(const CodegenInput& input) {
  const std::string header = input.target + ".cg.hpp";
  const std::string targetNs = identifierFor(input.target);
  std::vector<GeneratedFile> files;
  std::string sections, includes, entries;
  for (const GraphToGenerate& g : input.graphs) {
    GraphGenerator generator(input, *g.graph, *g.schedule);
    sections += generator.driverSection();
    for (unsigned a = 0; a < g.graph->actors.size(); ++a) {
      files.push_back({generator.actorFileName(a), generator.actorProgram(a)});
      includes += fmt::format("#include \"{}\"\n", generator.actorFileName(a));
      entries += fmt::format("    {{\"{}\", &cg_generated::{}::{}_spec, {}, "
                             "&cg_generated::{}::{}}},\n",
                             g.graph->name, targetNs, identifierFor(g.graph->name), a, targetNs,
                             generator.actorFunction(a));
    }
  }
  files.push_back(
      {header, fmt::format(fmt::runtime(templateText("driver.hpp.tpl")), fmt::arg("file", header),
                           fmt::arg("source_name", baseName(input.source)),
                           fmt::arg("source", input.source), fmt::arg("command", input.command),
                           fmt::arg("example_graph", input.graphs.front().graph->name),
                           fmt::arg("target", input.target), fmt::arg("target_ns", targetNs),
                           fmt::arg("graphs", sections))});
  files.push_back({input.target + ".cg.cpp",
                   fmt::format(fmt::runtime(templateText("driver.cpp.tpl")),
                               fmt::arg("file", input.target + ".cg.cpp"),
                               fmt::arg("source_name", baseName(input.source)),
                               fmt::arg("command", input.command), fmt::arg("header", header),
                               fmt::arg("target", input.target), fmt::arg("target_ns", targetNs))});
  files.push_back({input.target + ".actors.cpp",
                   fmt::format(fmt::runtime(templateText("actor_host.cpp.tpl")),
                               fmt::arg("file", input.target + ".actors.cpp"),
                               fmt::arg("source_name", baseName(input.source)),
                               fmt::arg("command", input.command), fmt::arg("target", input.target),
                               fmt::arg("includes", includes), fmt::arg("entries", entries))});
  for (GeneratedFile& file : files)
    file.contents = formatCode(file.contents, file.name);
  return files;
}

} // namespace cg::codegen
