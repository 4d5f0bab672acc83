//===- Codegen.cpp - Driver header and actor programs from a schedule ----===//
//
// Everything structural, and every text of more than one line, is a
// template (codegen-templates/, embedded at build time); this file computes
// the pieces that vary (a port, a statement, a table row) and lays them out
// as the formatter would (Layout.h): the spec tables and the actor programs
// skip the formatter, which lays out only the rest, and whatever codegen
// cannot be sure of.
//
// One file: every generated file is filled from one pass over the graphs (a
// graph's driver section, its programs, the shard each goes in, the actor
// header's serializers), and the pieces share the graph's names and layout
// helpers, which nothing outside codegen needs.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "support/CppLiteral.h"
#include "support/InternalError.h"

#include "codegen/FormatCode.h"
#include "codegen/Layout.h"
#include "codegen/Templates.h"
#include "ir/Names.h"
#include "schedule/Groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg::codegen {
namespace {

using schedule::Operation;

// FNV-1a, 64 bits: the same on every machine, for the digests of programs
// in the files that include them.
std::uint64_t digestOf(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// Where the actor programs are compiled: one file, or the first to the
// last of CodegenInput::actorShards.
std::string actorsFiles(const CodegenInput& input) {
  if (input.actorShards <= 1)
    return input.target + ".actors.cpp";
  return fmt::format("{0}.actors.0.cpp to {0}.actors.{1}.cpp", input.target, input.actorShards - 1);
}

std::string baseName(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The spec tables' rows sit in their braces, 4 columns in.
constexpr std::size_t kTableIndent = 4;

// Template `name` (codegen-templates/) filled with `args`.
template <class... Args> std::string fill(std::string_view name, const Args&... args) {
  return fmt::format(fmt::runtime(templateText(name)), args...);
}

// A template that makes part of a line, or of a comment, without the newline
// its file ends with.
template <class... Args> std::string fillInline(std::string_view name, const Args&... args) {
  std::string text = fill(name, args...);
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

// A row of the ActorSpec table: host and gpus only where they are not their
// defaults (0).
std::string actorSpecRow(const ir::Actor& actor, const std::string& run) {
  std::string row = fmt::format("{{.name = \"{}\", .run = &{}", actor.name, run);
  if (actor.host != 0)
    row += fmt::format(", .host = {}", actor.host);
  if (actor.gpus != 0)
    row += fmt::format(", .gpus = {}", actor.gpus);
  return row + "},";
}

class GraphGenerator {
public:
  GraphGenerator(const CodegenInput& input, const ir::Graph& graph,
                 const schedule::Schedule& schedule)
      : input_(input), graph_(graph), schedule_(schedule), id_(identifierFor(graph.name)),
        tasks_(ir::taskLabels(graph)), values_(ir::valueLabels(graph, tasks_)),
        communicators_(schedule::communicatorsOf(graph, schedule)) {}

  // The driver class's input_tensor<I>() when the graph has cg::Tensor
  // inputs: input I made in place (cg::detail::GraphRuntime::input_tensor),
  // I checked against those inputs when the caller compiles.
  std::string inputTensorMethodFor() const {
    std::vector<std::string> tensorInputs;
    for (size_t i = 0; i < graph_.inputs.size(); ++i)
      if (graph_.values.at(graph_.inputs[i]).type.spelling == "cg::Tensor")
        tensorInputs.push_back(std::to_string(i));
    if (tensorInputs.empty())
      return "";
    std::vector<std::string> checks;
    for (const std::string& i : tensorInputs)
      checks.push_back("I == " + i);
    return fill("input_tensor_method.hpp.tpl", fmt::arg("first", tensorInputs.front()),
                fmt::arg("list", fmt::join(tensorInputs, ", #")),
                fmt::arg("checks", fmt::join(checks, " || ")), fmt::arg("graph", graph_.name));
  }

  // This graph's section of the driver header; its tables (one row per
  // actor or channel) go into `tables`, laid out.
  std::string driverSection(LaidOutTables& tables) const {
    std::string runDeclarations, inputParams, inputArgs, inputWrites, resultTypes;
    std::vector<std::pair<std::string, std::string>> actorSpecs, channelSpecs;
    for (unsigned a = 0; a < graph_.actors.size(); ++a) {
      const ir::Actor& actor = graph_.actors[a];
      runDeclarations += fmt::format("int {}(cg::ActorProcess& process);\n", actorFunction(a));
      actorSpecs.emplace_back(
          actorSpecRow(actor, actorFunction(a)),
          fmt::format("{}: {} ({})", a, actor.className, ir::exactLoc(actor.loc)));
    }
    std::string readerActors; // per channel: the actor of each reader slot
    for (const schedule::Channel& channel : schedule_.channels) {
      size_t c = static_cast<size_t>(&channel - schedule_.channels.data());
      readerActors += fmt::format("inline constexpr std::array<int, {}> {}_r{}{{{}}};\n",
                                  channel.readers.size(), id_, c, fmt::join(channel.readers, ", "));
      channelSpecs.emplace_back(fmt::format("{{.writer = {}, .reader_actors = {}_r{}{}}},",
                                            channel.writer, id_, c,
                                            isCudaIpc(channel) ? ", .cuda_ipc = true" : ""),
                                fmt::format("c{}: {}", c, values_[channel.value]));
    }
    for (size_t i = 0; i < graph_.inputs.size(); ++i) {
      const std::string& type = graph_.values.at(graph_.inputs[i]).type.spelling;
      inputParams += fmt::format("{}const {}& input{}", i ? ", " : "", type, i);
      inputArgs += fmt::format("{}input{}", i ? ", " : "", i);
      // A tensor delivered on a device crosses shared memory from the host.
      inputWrites +=
          isDevice(graph_.values.at(graph_.inputs[i]).transport)
              ? fmt::format("    runtime_->write_input({}, input{}.to(cg::device::cpu));\n", i, i)
              : fmt::format("    runtime_->write_input({}, input{});\n", i, i);
    }
    std::string inputTensorMethod = inputTensorMethodFor();
    // Constructor arguments launch() may replace: one member each, encoded
    // by the driver class for the runtime (which takes none when no actor
    // has any).
    std::string constructorMembers, encodes;
    for (unsigned a = 0; a < graph_.actors.size(); ++a) {
      const ir::Actor& actor = graph_.actors[a];
      if (actor.constructorArgs.empty())
        continue;
      std::string member = identifierFor(actor.name);
      constructorMembers += fill(
          "constructor_member.hpp.tpl", fmt::arg("actor", actor.name),
          fmt::arg("actor_class", actor.className), fmt::arg("location", ir::exactLoc(actor.loc)),
          fmt::arg("args", constructorArgList(actor)), fmt::arg("tuple", constructorTuple(actor)),
          fmt::arg("member", member));
      encodes +=
          fill("encode_constructor.hpp.tpl", fmt::arg("actor", a), fmt::arg("member", member));
    }
    std::string encodeFunction, encodedConstructors, constructorsParam = "Constructors";
    if (!encodes.empty()) {
      encodeFunction =
          fill("encode_constructors.hpp.tpl", fmt::arg("actor_count", graph_.actors.size()),
               fmt::arg("encodes", encodes));
      encodedConstructors = ", encode(constructors)";
      constructorsParam = "Constructors constructors";
    }
    // Communicator groups: one array of actor indices each (rank = position);
    // a graph without them leaves GraphSpec::communicators at its default.
    std::string communicatorSpecs, specCommunicators;
    if (!schedule_.groups.empty()) {
      std::string groups, rows;
      for (unsigned g = 0; g < communicators_.groups.size(); ++g) {
        const schedule::Communicator& group = communicators_.groups[g];
        groups +=
            fill("communicator.hpp.tpl", fmt::arg("group", g), fmt::arg("summary", group.summary),
                 fmt::arg("graph_id", id_), fmt::arg("rank_count", group.actors.size()),
                 fmt::arg("ranks", fmt::join(group.actors, ", ")));
        rows += fmt::format("{{.actors = {}_g{}}},\n", id_, g);
      }
      communicatorSpecs =
          fill("communicators.hpp.tpl", fmt::arg("groups", groups), fmt::arg("graph_id", id_),
               fmt::arg("group_count", communicators_.groups.size()), fmt::arg("rows", rows));
      specCommunicators = fmt::format("    .communicators = {}_communicators,\n", id_);
    }
    for (unsigned output : graph_.outputs)
      resultTypes += (resultTypes.empty() ? "" : ", ") + graph_.values.at(output).type.spelling;
    std::string resultType =
        graph_.outputs.size() == 1 ? resultTypes : "std::tuple<" + resultTypes + ">";

    return fmt::format(
        fmt::runtime(templateText("driver_graph.hpp.tpl")), fmt::arg("graph", graph_.name),
        fmt::arg("graph_id", id_), fmt::arg("graph_qualified", "::" + graph_.name),
        fmt::arg("location", ir::exactLoc(graph_.loc)),
        fmt::arg("target_ns", identifierFor(input_.target)),
        fmt::arg("actors_file", actorsFiles(input_)),
        fmt::arg("run_declarations", tables.add(runDeclarations)),
        fmt::arg("actor_count", graph_.actors.size()),
        fmt::arg("actor_specs", tables.add(commentedLines(actorSpecs, kTableIndent))),
        fmt::arg("channel_count", schedule_.channels.size()),
        fmt::arg("channel_specs", tables.add(commentedLines(channelSpecs, kTableIndent))),
        fmt::arg("reader_actors", readerActors), fmt::arg("input_count", graph_.inputs.size()),
        fmt::arg("input_channels", fmt::format("{}", fmt::join(schedule_.inputChannels, ", "))),
        fmt::arg("output_count", graph_.outputs.size()),
        fmt::arg("output_channels", fmt::format("{}", fmt::join(schedule_.outputChannels, ", "))),
        fmt::arg("communicator_specs", communicatorSpecs),
        fmt::arg("spec_communicators", specCommunicators),
        fmt::arg("spec_tcp", input_.tcpEverywhere ? "    .tcp_everywhere = true,\n" : ""),
        fmt::arg("operation_names", operationNames()), fmt::arg("result_type", resultType),
        fmt::arg("input_params", inputParams), fmt::arg("input_args", inputArgs),
        fmt::arg("constructor_members", constructorMembers),
        fmt::arg("encoded_constructors", encodedConstructors),
        fmt::arg("constructors_param", constructorsParam),
        fmt::arg("encode_function_private", encodeFunction), fmt::arg("input_writes", inputWrites),
        fmt::arg("input_tensor_method", inputTensorMethod));
  }

  // The names a profile gives the operations (cg::detail::OperationNames):
  // each channel's value and each actor's COMPUTE operations, in program
  // order, as the schedule names them.
  std::string operationNames() const {
    std::vector<std::string> values, computeTables;
    for (const schedule::Channel& channel : schedule_.channels)
      values.push_back(cppStringLiteral(values_[channel.value]));
    std::string actorTables;
    for (unsigned a = 0; a < graph_.actors.size(); ++a) {
      std::string rows;
      unsigned count = 0;
      for (const Operation& op : schedule_.actors.at(a).operations)
        if (op.kind == Operation::Kind::Compute) {
          rows += fmt::format("{{.task = {}, .loc = {}}},\n", cppStringLiteral(tasks_[op.task]),
                              cppStringLiteral(ir::shortLoc(graph_.tasks.at(op.task).loc)));
          ++count;
        }
      const std::string table =
          fmt::format("{}_{}_computes", id_, identifierFor(graph_.actors[a].name));
      actorTables += fill("compute_names.hpp.tpl", fmt::arg("count", count),
                          fmt::arg("table", table), fmt::arg("rows", rows));
      computeTables.push_back(table);
    }
    return fill("operation_names.hpp.tpl", fmt::arg("channel_count", values.size()),
                fmt::arg("graph_id", id_), fmt::arg("values", fmt::join(values, ", ")),
                fmt::arg("actor_tables", actorTables),
                fmt::arg("actor_count", computeTables.size()),
                fmt::arg("tables", fmt::join(computeTables, ", ")));
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
        fmt::runtime(templateText("actor_program.cpp.tpl")),
        fmt::arg("file", actorFileName(actorIndex)), fmt::arg("actor", actor.name),
        fmt::arg("actor_class", actor.className),
        fmt::arg("actor_construction", construction(actor)), fmt::arg("graph", graph_.name),
        fmt::arg("graph_id", id_), fmt::arg("actor_id", identifierFor(actor.name)),
        fmt::arg("command", input_.command), fmt::arg("source_name", baseName(input_.source)),
        fmt::arg("schedule_file", id_ + ".schedule.txt"),
        fmt::arg("header", input_.target + ".actors.hpp"),
        fmt::arg("target_ns", identifierFor(input_.target)),
        fmt::arg("communicators_note", communicators_.memberships.at(actorIndex).empty()
                                           ? ""
                                           : fillInline("actor_communicators_note.cpp.tpl")),
        fmt::arg("ports", ports(actorIndex, ops)), fmt::arg("body", body(actorIndex, ops)));
  }

  // True when every type and constant that actor `actorIndex`'s program
  // spells is plain (Layout.h), so that codegen laid the program out as the
  // formatter would wherever it fits in the column limit.
  bool spelledPlainly(unsigned actorIndex) const {
    const ir::Actor& actor = graph_.actors.at(actorIndex);
    if (!isPlainSpelling(actor.className))
      return false;
    for (const ir::Constant& arg : actor.constructorArgs)
      if (!isPlainSpelling(arg.type.spelling) || !isPlainSpelling(arg.expression))
        return false;
    for (const Operation& op : schedule_.actors.at(actorIndex).operations) {
      const ir::Task& task = graph_.tasks.at(op.task);
      for (const ir::Arg& arg : task.args)
        if (!isPlainSpelling(arg.kind == ir::Arg::Kind::Constant ? arg.constant.expression
                                                                 : valueType(arg.value)))
          return false;
      for (unsigned value : task.results)
        if (!isPlainSpelling(valueType(value)))
          return false;
    }
    return true;
  }

private:
  bool isNccl(const schedule::Channel& channel) const {
    return graph_.values.at(channel.value).transport == ir::Transport::Nccl;
  }

  bool isCudaIpc(const schedule::Channel& channel) const {
    return graph_.values.at(channel.value).transport == ir::Transport::CudaIpc;
  }

  static bool isDevice(ir::Transport transport) {
    return transport == ir::Transport::Cpu || transport == ir::Transport::Cuda;
  }
  bool isDevice(const schedule::Channel& channel) const {
    return isDevice(graph_.values.at(channel.value).transport);
  }

  // The cg::Device a device channel delivers its tensor on, in C++.
  std::string deviceOf(const schedule::Channel& channel) const {
    const ir::Value& value = graph_.values.at(channel.value);
    if (value.transport == ir::Transport::Cpu)
      return "cg::device::cpu";
    return value.cudaDevice == 0
               ? "cg::device::cuda"
               : fmt::format("cg::Device{{cg::DeviceKind::cuda, {}}}", value.cudaDevice);
  }

  // The synchronous group of NCCL channel `c`.
  int ncclGroup(unsigned c) const {
    int group = communicators_.channelGroup.at(c);
    if (group < 0)
      internalError("nccl channel c" + std::to_string(c) + " has no synchronous group");
    return group;
  }

  static std::string constructorArgList(const ir::Actor& actor) {
    std::string args;
    for (const ir::Constant& arg : actor.constructorArgs)
      args += (args.empty() ? "" : ", ") + arg.expression;
    return args;
  }

  static std::string constructorTuple(const ir::Actor& actor) {
    std::string types;
    for (const ir::Constant& arg : actor.constructorArgs)
      types += (types.empty() ? "" : ", ") + arg.type.spelling;
    return "std::tuple<" + types + ">";
  }

  // With constructor arguments, launch() may replace the graph's.
  static std::string construction(const ir::Actor& actor) {
    if (actor.constructorArgs.empty())
      return actor.className + " actor;";
    return fillInline("actor_construction.cpp.tpl", fmt::arg("actor_class", actor.className),
                      fmt::arg("tuple", constructorTuple(actor)),
                      fmt::arg("args", constructorArgList(actor)));
  }

  std::string valueType(unsigned value) const { return graph_.values.at(value).type.spelling; }

  int readerSlot(const schedule::Channel& channel, int actor) const {
    auto it = std::find(channel.readers.begin(), channel.readers.end(), actor);
    if (it == channel.readers.end())
      internalError("actor reads a channel it is not a reader of");
    return static_cast<int>(it - channel.readers.begin());
  }

  // One line per communicator and port, their comments aligned.
  std::string ports(unsigned actor, const schedule::ActorSchedule& ops) const {
    // This actor's communicators, one per group it is a rank of.
    std::vector<std::pair<std::string, std::string>> rows;
    for (const schedule::Membership& membership : communicators_.memberships.at(actor))
      rows.emplace_back(
          fmt::format("  cg::Communicator& g{0} = process.communicator({0});", membership.group),
          communicators_.groups.at(membership.group).summary);
    for (const Operation& op : ops.operations) {
      for (unsigned c : op.channels) {
        const schedule::Channel& channel = schedule_.channels.at(c);
        const bool reads = op.kind == Operation::Kind::Read;
        // The other end: who writes what this actor reads, or who reads what it writes.
        std::string peers = ir::endpointName(graph_, channel.writer);
        if (!reads) {
          peers.clear();
          for (int reader : channel.readers)
            peers += (peers.empty() ? "" : ", ") + ir::endpointName(graph_, reader);
        }
        const std::string comment =
            fmt::format("{}, {} {}", values_[channel.value], reads ? "from" : "to", peers);
        const std::string& method = graph_.tasks.at(op.task).method;
        // With overlap an NCCL edge's ends return once the transfer is queued.
        const char* overlap = schedule_.options.overlapGpuCommunication ? ", cg::Overlap::on" : "";
        if (isNccl(channel) && reads)
          rows.emplace_back(fmt::format("  auto c{} = process.nccl_input({}, {}, g{}{});", c, c,
                                        readerSlot(channel, actor), ncclGroup(c), overlap),
                            comment + " over nccl");
        else if (isNccl(channel))
          rows.emplace_back(fmt::format("  auto c{} = process.nccl_output({}, \"{}\", g{}{});", c,
                                        c, method, ncclGroup(c), overlap),
                            comment + " over nccl");
        else if (isCudaIpc(channel) && reads)
          rows.emplace_back(fmt::format("  auto c{} = process.cuda_ipc_input({}, {}, \"{}\"{});", c,
                                        c, readerSlot(channel, actor), method, overlap),
                            comment + " over cuda_ipc");
        else if (isCudaIpc(channel))
          rows.emplace_back(
              fmt::format("  auto c{} = process.cuda_ipc_output({}, \"{}\");", c, c, method),
              comment + " over cuda_ipc");
        else if (isDevice(channel) && reads)
          rows.emplace_back(fmt::format("  auto c{} = process.device_input({}, {}, {}, \"{}\");", c,
                                        c, readerSlot(channel, actor), deviceOf(channel), method),
                            fmt::format("{}, delivered on {}", comment,
                                        ir::toString(graph_.values.at(channel.value).transport)));
        else if (isDevice(channel))
          rows.emplace_back(
              fmt::format("  auto c{} = process.device_output({}, \"{}\");", c, c, method),
              comment + " through host memory");
        else if (reads)
          rows.emplace_back(fmt::format("  auto c{} = process.input<{}>({}, {});", c,
                                        valueType(channel.value), c, readerSlot(channel, actor)),
                            comment);
        else
          rows.emplace_back(fmt::format("  auto c{} = process.output<{}>({}, \"{}\");", c,
                                        valueType(channel.value), c, method),
                            comment);
      }
    }
    return rows.empty() ? "" : commentedLines(rows, 0) + "\n";
  }

  // Arguments are moved into the method on their last use on this actor.
  std::map<unsigned, unsigned> lastUses(unsigned actor) const {
    std::map<unsigned, unsigned> last;
    for (unsigned t = 0; t < graph_.tasks.size(); ++t)
      if (graph_.tasks[t].actor == actor)
        for (const ir::Arg& arg : graph_.tasks[t].args)
          if (arg.kind == ir::Arg::Kind::Value)
            last[arg.value] = t;
    return last;
  }

  // A task's COMPUTE: the method call guarded by its inputs' errors, then,
  // for an unpacked std::tuple result, one value per element.
  std::string compute(unsigned t, const ir::Task& task,
                      const std::map<unsigned, unsigned>& last) const {
    if (task.collective >= 0) {
      // One rank of a collective: the input is this actor's own value.
      const ir::Collective& collective = graph_.collectives.at(task.collective);
      if (task.args.size() != 1 || task.args.front().kind != ir::Arg::Kind::Value ||
          task.results.size() != 1)
        internalError("a collective's rank takes one value and gives one");
      std::string op =
          collective.reduceOp.empty() ? "" : fmt::format(", cg::ReduceOp::{}", collective.reduceOp);
      return fmt::format("    cg::Result<{}> v{} = process.{}(g{}, v{}{});\n",
                         valueType(task.results.front()), task.results.front(),
                         ir::toString(collective.kind),
                         communicators_.collectiveGroup.at(static_cast<size_t>(task.collective)),
                         task.args.front().value, op);
    }
    std::string args, inputs;
    for (const ir::Arg& arg : task.args) {
      args += args.empty() ? "" : ", ";
      if (arg.kind == ir::Arg::Kind::Constant) {
        args += arg.constant.expression;
        continue;
      }
      bool once = std::count_if(task.args.begin(), task.args.end(), [&](const ir::Arg& other) {
                    return other.kind == ir::Arg::Kind::Value && other.value == arg.value;
                  }) == 1;
      bool moveIt = once && last.at(arg.value) == t;
      args +=
          moveIt ? fmt::format("cg::pass(v{})", arg.value) : fmt::format("v{}.value()", arg.value);
      inputs += fmt::format(", v{}", arg.value);
    }
    // Laid out as the formatter would: a lambda that is not the last argument
    // puts all the arguments on a line of their own.
    std::string call =
        fmt::format("process.call({}\"{}\", [&] {{ return actor.{}({}); }}{})",
                    inputs.empty() ? "" : "\n        ", task.method, task.method, args, inputs);
    const ir::Producer& first = graph_.values.at(task.results.front()).producer;
    if (first.element < 0)
      return fmt::format("    cg::Result<{}> v{} = {};\n", valueType(task.results.front()),
                         task.results.front(), call);
    std::string elementTypes;
    for (unsigned value : task.results)
      elementTypes += (elementTypes.empty() ? "" : ", ") + valueType(value);
    std::string out =
        fmt::format("    cg::Result<std::tuple<{}>> r{} = {};\n", elementTypes, t, call);
    for (unsigned value : task.results)
      out += fmt::format("    cg::Result<{}> v{} = cg::element<{}>(r{});\n", valueType(value),
                         value, graph_.values.at(value).producer.element, t);
    return out;
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
        out += fmt::format("{}    // {}  [{}]\n", current ? "\n" : "",
                           ir::taskCall(graph_, op.task, tasks_, values_), ir::exactLoc(task.loc));
        current = &task;
      }
      switch (op.kind) {
      case Operation::Kind::Read:
        for (unsigned c : op.channels) {
          unsigned value = schedule_.channels.at(c).value;
          // Only host memory can be read in place: the other transports' ports
          // give a Result.
          out += fill("actor_read.cpp.tpl",
                      fmt::arg("holder", graph_.values.at(value).transport == ir::Transport::Shm
                                             ? "Received"
                                             : "Result"),
                      fmt::arg("type", valueType(value)), fmt::arg("value", value),
                      fmt::arg("channel", c));
        }
        break;
      case Operation::Kind::Compute:
        out += compute(op.task, task, last);
        break;
      case Operation::Kind::Write:
        for (unsigned c : op.channels)
          out += fill("actor_write.cpp.tpl", fmt::arg("channel", c),
                      fmt::arg("value", schedule_.channels.at(c).value));
        break;
      }
    }
    return out;
  }

  const CodegenInput& input_;
  const ir::Graph& graph_;
  const schedule::Schedule& schedule_;
  std::string id_;
  // The names of tasks and values, as schedule.txt spells them (ir/Names.h).
  std::vector<std::string> tasks_;
  std::vector<std::string> values_;
  schedule::Communicators communicators_;
};

std::string aggregateCodec(const ir::AggregateCodec& codec) {
  std::string sizeTerms, encodeFields, decodeFields;
  for (const ir::AggregateCodec::Field& field : codec.fields) {
    sizeTerms +=
        fmt::format("{}cg::encoded_size(value.{})", sizeTerms.empty() ? "" : " + ", field.name);
    encodeFields += fmt::format("    cg::encode(out, value.{});\n", field.name);
    decodeFields +=
        fmt::format("{}cg::decode<{}>(in)", decodeFields.empty() ? "" : ", ", field.type);
  }
  return fmt::format(fmt::runtime(templateText("codec.hpp.tpl")), fmt::arg("type", codec.type),
                     fmt::arg("size_terms", sizeTerms.empty() ? "0" : sizeTerms),
                     fmt::arg("encode_fields", encodeFields),
                     fmt::arg("decode_fields", decodeFields));
}

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
  const std::string actorsHeader = input.target + ".actors.hpp";
  const std::string targetNs = identifierFor(input.target);
  const unsigned shards = std::max(1u, input.actorShards);
  std::vector<GeneratedFile> files;
  std::string sections, graphSpecs, codecs;
  std::vector<std::string> shardIncludes(shards);
  // Programs that include the whole source all recompile on any edit to it:
  // then one file, which parses the source once, compiles them fastest.
  const unsigned spread = input.actorIncludes ? shards : 1;
  unsigned programs = 0;
  LaidOutTables tables;
  for (const ir::AggregateCodec& codec : input.codecs)
    codecs += aggregateCodec(codec);
  if (!codecs.empty())
    codecs = fillInline("codecs.hpp.tpl", fmt::arg("codecs", codecs));
  for (const GraphToGenerate& g : input.graphs) {
    GraphGenerator generator(input, *g.graph, *g.schedule);
    sections += generator.driverSection(tables);
    graphSpecs +=
        fmt::format("    &cg_generated::{}::{}_spec,\n", targetNs, identifierFor(g.graph->name));
    for (unsigned a = 0; a < g.graph->actors.size(); ++a) {
      std::string name = generator.actorFileName(a);
      std::string program = generator.actorProgram(a);
      if (!generator.spelledPlainly(a) || !fitsColumnLimit(program))
        program = formatCode(program, name);
      // The build learns of the program files from the compiler, after the
      // fact: their digests make the file that includes them change with them.
      shardIncludes[programs++ % spread] +=
          fmt::format("#include \"{}\" // {:016x}\n", name, digestOf(program));
      files.push_back({name, std::move(program)});
    }
  }
  // The actor programs' header: the source's own #includes where they are
  // enough, else the source.
  std::string sourceLine = fmt::format("#include \"{}\"\n", input.sourceInclude);
  std::string actorIncludes, why;
  if (input.actorIncludes) {
    for (const std::string& line : *input.actorIncludes)
      actorIncludes += line + "\n";
    why =
        fillInline("actor_types_includes.hpp.tpl", fmt::arg("source_name", baseName(input.source)));
  } else {
    actorIncludes = sourceLine;
    why = fillInline("actor_types_source.hpp.tpl", fmt::arg("source_name", baseName(input.source)),
                     fmt::arg("needed_for", input.sourceNeededFor));
  }
  files.push_back(
      {actorsHeader,
       formatCode(fmt::format(fmt::runtime(templateText("actor_types.hpp.tpl")),
                              fmt::arg("file", actorsHeader), fmt::arg("target", input.target),
                              fmt::arg("command", input.command),
                              fmt::arg("source_name", baseName(input.source)), fmt::arg("why", why),
                              fmt::arg("includes", actorIncludes), fmt::arg("codecs", codecs)),
                  actorsHeader)});
  // The header is formatted with its tables left out (markers in their
  // place), then they go in; all of it through the formatter if one of
  // them does not fit where it lands.
  std::string driver = fmt::format(
      fmt::runtime(templateText("driver.hpp.tpl")), fmt::arg("file", header),
      fmt::arg("source_name", baseName(input.source)),
      fmt::arg("source_includes", fmt::format("#include \"{}\"\n{}", actorsHeader,
                                              input.actorIncludes ? sourceLine : "")),
      fmt::arg("command", input.command),
      fmt::arg("example_graph", input.graphs.front().graph->name), fmt::arg("target", input.target),
      fmt::arg("target_ns", targetNs), fmt::arg("graphs", sections));
  std::optional<std::string> laidOut = tables.splice(formatCode(driver, header));
  if (!laidOut)
    laidOut = formatCode(tables.expand(driver), header);
  files.push_back({header, std::move(*laidOut)});
  // The small files, through the formatter.
  auto addFormatted = [&](std::string name, std::string code) {
    std::string formatted = formatCode(code, name);
    files.push_back({std::move(name), std::move(formatted)});
  };
  addFormatted(input.target + ".driver.cpp",
               fmt::format(fmt::runtime(templateText("driver.cpp.tpl")),
                           fmt::arg("file", input.target + ".driver.cpp"),
                           fmt::arg("source_name", baseName(input.source)),
                           fmt::arg("command", input.command), fmt::arg("header", header),
                           fmt::arg("target", input.target), fmt::arg("target_ns", targetNs)));
  for (unsigned shard = 0; shard < shards; ++shard) {
    std::string name = shards == 1 ? input.target + ".actors.cpp"
                                   : fmt::format("{}.actors.{}.cpp", input.target, shard);
    std::string which =
        shards == 1
            ? fmt::format("the programs of every actor of '{}'", input.target)
            : fmt::format("actor programs {} of every {} of '{}'", shard, shards, input.target);
    std::string note;
    if (shards > 1 && spread == 1)
      note = fillInline("actor_programs_first.cpp.tpl", fmt::arg("target", input.target),
                        fmt::arg("source_name", baseName(input.source)));
    else if (shards > 1)
      note =
          fillInline("actor_programs_spread.cpp.tpl", fmt::arg("shards", shards),
                     fmt::arg("none", shardIncludes[shard].empty() ? " This one has none." : ""));
    addFormatted(name, fmt::format(fmt::runtime(templateText("actor_programs.cpp.tpl")),
                                   fmt::arg("file", name), fmt::arg("which", which),
                                   fmt::arg("source_name", baseName(input.source)),
                                   fmt::arg("command", input.command),
                                   fmt::arg("target", input.target), fmt::arg("shards_note", note),
                                   fmt::arg("includes", shardIncludes[shard])));
  }
  addFormatted(input.target + ".actor_host.cpp",
               fmt::format(fmt::runtime(templateText("actor_host.cpp.tpl")),
                           fmt::arg("file", input.target + ".actor_host.cpp"),
                           fmt::arg("source_name", baseName(input.source)),
                           fmt::arg("command", input.command), fmt::arg("target", input.target),
                           fmt::arg("header", header), fmt::arg("graph_specs", graphSpecs)));
  return files;
}

} // namespace cg::codegen
