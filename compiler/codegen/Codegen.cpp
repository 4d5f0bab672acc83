//===- Codegen.cpp - Driver header and actor programs from a schedule ----===//
//
// Every line of C++ codegen writes is a template (codegen-templates/,
// embedded at build time), down to a port, a statement or a table row: this
// file picks the template, fills it with the names, types and numbers that
// vary, and lays the pieces out as the formatter would (Layout.h). What
// stays here is no code: names, file names and the comments' wording. The
// spec tables, the declarations per channel and per actor, and the actor
// programs skip the formatter, which lays out only the rest, and whatever
// codegen cannot be sure of.
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
#include <future>
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
  std::string fields;
  if (actor.host != 0)
    fields +=
        fillInline("spec_field.hpp.tpl", fmt::arg("field", "host"), fmt::arg("value", actor.host));
  if (actor.gpus != 0)
    fields +=
        fillInline("spec_field.hpp.tpl", fmt::arg("field", "gpus"), fmt::arg("value", actor.gpus));
  return fillInline("actor_spec.hpp.tpl", fmt::arg("name", actor.name), fmt::arg("run", run),
                    fmt::arg("fields", fields));
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
      checks.push_back(fillInline("input_tensor_check.hpp.tpl", fmt::arg("index", i)));
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
      runDeclarations += fill("run_declaration.hpp.tpl", fmt::arg("function", actorFunction(a)));
      actorSpecs.emplace_back(
          actorSpecRow(actor, actorFunction(a)),
          fmt::format("{}: {} ({})", a, actor.className, ir::exactLoc(actor.loc)));
    }
    // Per channel: the actor of each reader slot, a declaration each, which
    // codegen lays out (numbers only).
    std::vector<LaidOutBlock> readerActors;
    readerActors.reserve(schedule_.channels.size());
    for (const schedule::Channel& channel : schedule_.channels) {
      size_t c = static_cast<size_t>(&channel - schedule_.channels.data());
      readerActors.push_back(
          {fill("reader_actors.hpp.tpl", fmt::arg("count", channel.readers.size()),
                fmt::arg("graph_id", id_), fmt::arg("channel", c),
                fmt::arg("readers", fmt::join(channel.readers, ", ")))});
      channelSpecs.emplace_back(
          fillInline("channel_spec.hpp.tpl", fmt::arg("writer", channel.writer),
                     fmt::arg("graph_id", id_), fmt::arg("channel", c),
                     fmt::arg("fields",
                              isCudaIpc(channel)
                                  ? fillInline("spec_field.hpp.tpl", fmt::arg("field", "cuda_ipc"),
                                               fmt::arg("value", "true"))
                                  : "")),
          fmt::format("c{}: {}", c, values_[channel.value]));
    }
    for (size_t i = 0; i < graph_.inputs.size(); ++i) {
      const std::string& type = graph_.values.at(graph_.inputs[i]).type.spelling;
      inputParams += (i ? ", " : "") + fillInline("input_param.hpp.tpl", fmt::arg("type", type),
                                                  fmt::arg("index", i));
      inputArgs += (i ? ", " : "") + fillInline("input_arg.hpp.tpl", fmt::arg("index", i));
      // A tensor delivered on a device crosses shared memory from the host.
      inputWrites +=
          fill(isDevice(graph_.values.at(graph_.inputs[i]).transport) ? "input_write_device.hpp.tpl"
                                                                      : "input_write.hpp.tpl",
               fmt::arg("index", i));
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
        rows += fill("communicator_spec.hpp.tpl", fmt::arg("graph_id", id_), fmt::arg("group", g));
      }
      communicatorSpecs =
          fill("communicators.hpp.tpl", fmt::arg("groups", groups), fmt::arg("graph_id", id_),
               fmt::arg("group_count", communicators_.groups.size()), fmt::arg("rows", rows));
      specCommunicators = fill("spec_communicators.hpp.tpl", fmt::arg("graph_id", id_));
    }
    for (unsigned output : graph_.outputs)
      resultTypes += (resultTypes.empty() ? "" : ", ") + graph_.values.at(output).type.spelling;
    std::string resultType = graph_.outputs.size() == 1
                                 ? resultTypes
                                 : fillInline("tuple_type.hpp.tpl", fmt::arg("types", resultTypes));

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
        fmt::arg("reader_actors", tables.addRuns(readerActors)),
        fmt::arg("input_count", graph_.inputs.size()),
        fmt::arg("input_channels", fmt::format("{}", fmt::join(schedule_.inputChannels, ", "))),
        fmt::arg("output_count", graph_.outputs.size()),
        fmt::arg("output_channels", fmt::format("{}", fmt::join(schedule_.outputChannels, ", "))),
        fmt::arg("communicator_specs", communicatorSpecs),
        fmt::arg("spec_communicators", specCommunicators),
        fmt::arg("spec_tcp", input_.tcpEverywhere ? fill("spec_tcp_everywhere.hpp.tpl") : ""),
        fmt::arg("spec_max_in_flight", specMaxInFlight()),
        fmt::arg("operation_names", operationNames(tables)), fmt::arg("result_type", resultType),
        fmt::arg("input_params", inputParams), fmt::arg("input_args", inputArgs),
        fmt::arg("constructor_members", constructorMembers),
        fmt::arg("encoded_constructors", encodedConstructors),
        fmt::arg("constructors_param", constructorsParam),
        fmt::arg("encode_function_private", encodeFunction), fmt::arg("input_writes", inputWrites),
        fmt::arg("input_tensor_method", inputTensorMethod));
  }

  // The capacity the schedule was checked with, where it is not the
  // runtime's default: launch() refuses more executions in flight.
  std::string specMaxInFlight() const {
    const unsigned capacity = schedule_.options.maxInFlight;
    if (capacity == cg::detail::kDefaultLaunchGeometry.max_in_flight)
      return "";
    return fill("spec_max_in_flight.hpp.tpl", fmt::arg("max_in_flight", capacity));
  }

  // The names a profile gives the operations (cg::detail::OperationNames):
  // each channel's value and each actor's COMPUTE operations, in program
  // order, as the schedule names them. The actors' tables (a row per
  // COMPUTE, thousands in a large graph) are laid out by codegen, in
  // `tables`, except one with no rows or too wide for the column limit.
  std::string operationNames(LaidOutTables& tables) const {
    std::vector<std::string> values, computeTables;
    for (const schedule::Channel& channel : schedule_.channels)
      values.push_back(cppStringLiteral(values_[channel.value]));
    std::vector<LaidOutBlock> actorTables;
    actorTables.reserve(graph_.actors.size());
    for (unsigned a = 0; a < graph_.actors.size(); ++a) {
      std::string rows;
      unsigned count = 0;
      for (const Operation& op : schedule_.actors.at(a).operations)
        if (op.kind == Operation::Kind::Compute) {
          rows += fill(
              "compute_name.hpp.tpl", fmt::arg("task", cppStringLiteral(tasks_[op.task])),
              fmt::arg("location", cppStringLiteral(ir::shortLoc(graph_.tasks.at(op.task).loc))));
          ++count;
        }
      const std::string table =
          fmt::format("{}_{}_computes", id_, identifierFor(graph_.actors[a].name));
      actorTables.push_back({fill("compute_names.hpp.tpl", fmt::arg("count", count),
                                  fmt::arg("table", table), fmt::arg("rows", rows)),
                             count > 0});
      computeTables.push_back(table);
    }
    return fill("operation_names.hpp.tpl", fmt::arg("channel_count", values.size()),
                fmt::arg("graph_id", id_), fmt::arg("values", fmt::join(values, ", ")),
                fmt::arg("actor_tables", tables.addRuns(actorTables)),
                fmt::arg("actor_count", computeTables.size()),
                fmt::arg("tables", fmt::join(computeTables, ", ")));
  }

  unsigned actorCount() const { return static_cast<unsigned>(graph_.actors.size()); }

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
               : fillInline("cuda_device.cpp.tpl", fmt::arg("index", value.cudaDevice));
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
    return fillInline("tuple_type.hpp.tpl", fmt::arg("types", types));
  }

  // With constructor arguments, launch() may replace the graph's.
  static std::string construction(const ir::Actor& actor) {
    if (actor.constructorArgs.empty())
      return fillInline("actor_default_construction.cpp.tpl",
                        fmt::arg("actor_class", actor.className));
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
          fillInline("port_communicator.cpp.tpl", fmt::arg("group", membership.group)),
          communicators_.groups.at(membership.group).summary);
    // With overlap an NCCL edge's ends return once the transfer is queued.
    const std::string overlap = schedule_.options.overlapGpuCommunication
                                    ? fillInline("port_overlap.cpp.tpl")
                                    : std::string();
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
        // Every port template takes these; each uses those it needs.
        auto port = [&](std::string_view name, auto&&... more) {
          return fillInline(name, fmt::arg("channel", c), fmt::arg("method", method),
                            fmt::arg("overlap", overlap), more...);
        };
        if (isNccl(channel) && reads)
          rows.emplace_back(port("port_nccl_input.cpp.tpl",
                                 fmt::arg("slot", readerSlot(channel, actor)),
                                 fmt::arg("group", ncclGroup(c))),
                            comment + " over nccl");
        else if (isNccl(channel))
          rows.emplace_back(port("port_nccl_output.cpp.tpl", fmt::arg("group", ncclGroup(c))),
                            comment + " over nccl");
        else if (isCudaIpc(channel) && reads)
          rows.emplace_back(
              port("port_cuda_ipc_input.cpp.tpl", fmt::arg("slot", readerSlot(channel, actor))),
              comment + " over cuda_ipc");
        else if (isCudaIpc(channel))
          rows.emplace_back(port("port_cuda_ipc_output.cpp.tpl"), comment + " over cuda_ipc");
        else if (isDevice(channel) && reads)
          rows.emplace_back(port("port_device_input.cpp.tpl",
                                 fmt::arg("slot", readerSlot(channel, actor)),
                                 fmt::arg("device", deviceOf(channel))),
                            fmt::format("{}, delivered on {}", comment,
                                        ir::toString(graph_.values.at(channel.value).transport)));
        else if (isDevice(channel))
          rows.emplace_back(port("port_device_output.cpp.tpl"), comment + " through host memory");
        else if (reads)
          rows.emplace_back(port("port_input.cpp.tpl", fmt::arg("type", valueType(channel.value)),
                                 fmt::arg("slot", readerSlot(channel, actor))),
                            comment);
        else
          rows.emplace_back(port("port_output.cpp.tpl", fmt::arg("type", valueType(channel.value))),
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
          collective.reduceOp.empty()
              ? ""
              : fillInline("collective_reduce_op.cpp.tpl", fmt::arg("op", collective.reduceOp));
      return fill("actor_collective.cpp.tpl", fmt::arg("type", valueType(task.results.front())),
                  fmt::arg("result", task.results.front()),
                  fmt::arg("collective", ir::toString(collective.kind)),
                  fmt::arg("group",
                           communicators_.collectiveGroup.at(static_cast<size_t>(task.collective))),
                  fmt::arg("input", task.args.front().value), fmt::arg("reduce_op", op));
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
      args += fillInline(moveIt ? "call_argument_moved.cpp.tpl" : "call_argument.cpp.tpl",
                         fmt::arg("value", arg.value));
      inputs += fillInline("call_guard.cpp.tpl", fmt::arg("value", arg.value));
    }
    // Laid out as the formatter would: a lambda that is not the last argument
    // puts all the arguments on a line of their own.
    std::string call = fillInline(
        "actor_call.cpp.tpl", fmt::arg("break", inputs.empty() ? "" : "\n        "),
        fmt::arg("method", task.method), fmt::arg("args", args), fmt::arg("guards", inputs));
    const ir::Producer& first = graph_.values.at(task.results.front()).producer;
    if (first.element < 0)
      return fill("actor_compute.cpp.tpl", fmt::arg("type", valueType(task.results.front())),
                  fmt::arg("result", task.results.front()), fmt::arg("call", call));
    std::string elementTypes;
    for (unsigned value : task.results)
      elementTypes += (elementTypes.empty() ? "" : ", ") + valueType(value);
    std::string out = fill("actor_compute_tuple.cpp.tpl", fmt::arg("types", elementTypes),
                           fmt::arg("task", t), fmt::arg("call", call));
    for (unsigned value : task.results)
      out += fill(
          "actor_element.cpp.tpl", fmt::arg("type", valueType(value)), fmt::arg("value", value),
          fmt::arg("element", graph_.values.at(value).producer.element), fmt::arg("task", t));
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
        if (current)
          out += '\n';
        out += fill("actor_task_comment.cpp.tpl",
                    fmt::arg("call", ir::taskCall(graph_, op.task, tasks_, values_)),
                    fmt::arg("location", ir::exactLoc(task.loc)));
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
    sizeTerms += (sizeTerms.empty() ? "" : " + ") +
                 fillInline("codec_size_term.hpp.tpl", fmt::arg("field", field.name));
    encodeFields += fill("codec_encode_field.hpp.tpl", fmt::arg("field", field.name));
    decodeFields += (decodeFields.empty() ? "" : ", ") +
                    fillInline("codec_decode_field.hpp.tpl", fmt::arg("type", field.type));
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
  std::vector<GraphGenerator> generators;
  generators.reserve(input.graphs.size());
  for (const GraphToGenerate& g : input.graphs) {
    GraphGenerator& generator = generators.emplace_back(input, *g.graph, *g.schedule);
    sections += generator.driverSection(tables);
    graphSpecs += fill("actor_host_graph.cpp.tpl", fmt::arg("target_ns", targetNs),
                       fmt::arg("graph_id", identifierFor(g.graph->name)));
  }
  // The source, where a header of the target includes it.
  std::string sourceLine = fill("include.hpp.tpl", fmt::arg("file", input.sourceInclude));
  // The header is formatted with its tables left out (markers in their
  // place), then they go in; all of it through the formatter if one of
  // them does not fit where it lands. That takes the longest of what codegen
  // does for a large graph, and the actor programs need nothing of it: it
  // runs on a thread of its own meanwhile.
  std::string driver = fmt::format(
      fmt::runtime(templateText("driver.hpp.tpl")), fmt::arg("file", header),
      fmt::arg("source_name", baseName(input.source)),
      fmt::arg("source_includes", fill("include.hpp.tpl", fmt::arg("file", actorsHeader)) +
                                      (input.actorIncludes ? sourceLine : "")),
      fmt::arg("command", input.command),
      fmt::arg("example_graph", input.graphs.front().graph->name), fmt::arg("target", input.target),
      fmt::arg("target_ns", targetNs), fmt::arg("graphs", sections));
  std::future<std::string> driverHeader =
      std::async(std::launch::async, [&tables, &header, driver = std::move(driver)] {
        std::optional<std::string> laidOut = tables.splice(formatCode(driver, header));
        return laidOut ? std::move(*laidOut) : formatCode(tables.expand(driver), header);
      });
  for (const GraphGenerator& generator : generators) {
    for (unsigned a = 0; a < generator.actorCount(); ++a) {
      std::string name = generator.actorFileName(a);
      std::string program = generator.actorProgram(a);
      if (!generator.spelledPlainly(a) || !fitsColumnLimit(program))
        program = formatCode(program, name);
      // The build learns of the program files from the compiler, after the
      // fact: their digests make the file that includes them change with them.
      shardIncludes[programs++ % spread] += fill("shard_include.cpp.tpl", fmt::arg("file", name),
                                                 fmt::arg("digest", digestOf(program)));
      files.push_back({name, std::move(program)});
    }
  }
  // The actor programs' header: the source's own #includes where they are
  // enough, else the source.
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
  files.push_back({header, driverHeader.get()});
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
