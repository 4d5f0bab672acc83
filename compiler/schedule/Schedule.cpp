//===- Schedule.cpp - Channels and per-actor operation lists --------------===//
//
// Each actor is one process that runs a fixed, straight-line list of
// operations once per execution, so everything about communication is decided
// here at compile time: which values need a channel, who writes and who reads
// each one (and so each reader's slot), and in what order every actor reads,
// computes and writes. Codegen only prints what this file decides.
//
//===----------------------------------------------------------------------===//

#include "schedule/Schedule.h"

#include "ir/Validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cg::schedule {
namespace {

using ir::Graph;
using ir::Producer;

int writerOf(const Graph& graph, unsigned value) {
  const Producer& producer = graph.values[value].producer;
  if (producer.kind == Producer::Kind::Input)
    return kDriver;
  return static_cast<int>(graph.tasks[producer.index].actor);
}

[[noreturn]] void internalError(std::string_view message) {
  throw std::logic_error(fmt::format("internal compiler error: {}", message));
}

/// One channel per value that crosses a process boundary, in value order.
/// Returns the channel index of each value, if it has one.
std::vector<std::optional<unsigned>> assignChannels(const Graph& graph,
                                                    Schedule& schedule) {
  // Constant arguments are compiled into the reading actor's code: no
  // channel. Every value gets its own channel whatever its transport: an
  // Nccl value is carried like an Shm one for now (see buildSchedule()).
  std::vector<std::vector<int>> consumers(graph.values.size());
  for (const ir::Task& task : graph.tasks)
    for (const ir::Arg& arg : task.args)
      if (arg.kind == ir::Arg::Kind::Value)
        consumers[arg.value].push_back(static_cast<int>(task.actor));
  for (unsigned value : graph.outputs)
    consumers[value].push_back(kDriver);

  std::vector<std::optional<unsigned>> channelOf(graph.values.size());
  for (unsigned v = 0; v < graph.values.size(); ++v) {
    int writer = writerOf(graph, v);
    // Readers in ascending order (the driver, -1, first): a reader's position
    // is its slot in the channel, so the order must not depend on the order
    // in which tasks happen to consume the value. The writer never reads its
    // own value through a channel; it still has it in memory.
    std::vector<int> readers = std::move(consumers[v]);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    readers.erase(std::remove(readers.begin(), readers.end(), writer),
                  readers.end());
    if (readers.empty())
      continue;
    channelOf[v] = static_cast<unsigned>(schedule.channels.size());
    schedule.channels.push_back({v, writer, std::move(readers)});
  }
  return channelOf;
}

/// The operations of one actor for one execution.
///
/// Priority rule: an actor runs its tasks in bind (task id) order, and for
/// each task reads the arguments it does not hold yet, computes, then writes
/// the result values other processes need (one WRITE listing their channels,
/// in element order when the task's std::tuple result is unpacked). This order cannot deadlock on
/// shared-memory channels with K >= 1 slots. The driver writes every input
/// before it reads any output. Every argument of task t comes from an input
/// or from a task bound before t (findInconsistency() checks this), so by
/// induction on t the value each READ waits for is written by an operation
/// that itself only waits on smaller task ids; and a WRITE never waits within
/// an execution, since each channel receives one value per execution and has
/// at least one free slot once the readers have finished the execution K
/// slots back (which they do, by the same argument).
ActorSchedule scheduleActor(
    const Graph& graph, unsigned actor,
    const std::vector<std::optional<unsigned>>& channelOf,
    std::size_t numChannels) {
  ActorSchedule actorSchedule{actor, {}};
  std::vector<bool> alreadyRead(numChannels, false);
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    const ir::Task& task = graph.tasks[t];
    if (task.actor != actor)
      continue;

    Operation read{Operation::Kind::Read, t, {}};
    for (const ir::Arg& a : task.args) {
      if (a.kind != ir::Arg::Kind::Value)
        continue;  // a constant: part of the generated call, never read
      unsigned arg = a.value;
      // Produced by an earlier task of this same actor: already in memory.
      if (writerOf(graph, arg) == static_cast<int>(actor))
        continue;
      if (!channelOf[arg])
        internalError(fmt::format("value {} is read by actor '{}' but has no "
                                  "channel",
                                  arg, graph.actors[actor].name));
      unsigned channel = *channelOf[arg];
      if (alreadyRead[channel])
        continue;
      alreadyRead[channel] = true;
      read.channels.push_back(channel);
    }
    if (!read.channels.empty())
      actorSchedule.operations.push_back(std::move(read));

    actorSchedule.operations.push_back({Operation::Kind::Compute, t, {}});

    Operation write{Operation::Kind::Write, t, {}};
    for (unsigned result : task.results)
      if (channelOf[result])
        write.channels.push_back(*channelOf[result]);
    if (!write.channels.empty())
      actorSchedule.operations.push_back(std::move(write));
  }
  return actorSchedule;
}

} // namespace

std::variant<Schedule, std::vector<ir::Diagnostic>>
buildSchedule(const Graph& graph) {
  if (std::optional<std::string> problem = ir::findInconsistency(graph))
    internalError(*problem);

  // An actor without a task would be a process that starts, waits for
  // nothing and does nothing; the user most likely forgot a bind.
  std::vector<bool> hasTask(graph.actors.size(), false);
  for (const ir::Task& task : graph.tasks)
    hasTask[task.actor] = true;
  std::vector<ir::Diagnostic> diagnostics;
  for (unsigned a = 0; a < graph.actors.size(); ++a)
    if (!hasTask[a])
      diagnostics.push_back(
          {graph.actors[a].loc,
           fmt::format("actor '{}' has no task; remove it or bind a method",
                       graph.actors[a].name),
           {}});
  if (!diagnostics.empty())
    return diagnostics;

  Schedule schedule;
  std::vector<std::optional<unsigned>> channelOf =
      assignChannels(graph, schedule);

  for (unsigned i = 0; i < graph.inputs.size(); ++i) {
    if (!channelOf[graph.inputs[i]])
      internalError(fmt::format("graph input #{} has no channel; the graph was "
                                "not validated",
                                i));
    schedule.inputChannels.push_back(*channelOf[graph.inputs[i]]);
  }
  for (unsigned k = 0; k < graph.outputs.size(); ++k) {
    if (!channelOf[graph.outputs[k]])
      internalError(fmt::format("graph output #{} has no channel; the graph was "
                                "not validated",
                                k));
    schedule.outputChannels.push_back(*channelOf[graph.outputs[k]]);
  }

  for (unsigned a = 0; a < graph.actors.size(); ++a)
    schedule.actors.push_back(
        scheduleActor(graph, a, channelOf, schedule.channels.size()));

  // Seam for collective transports: NCCL-style synchronous groups need every
  // participant to enter matching send/recv groups in the same order, which
  // the rule above does not guarantee by itself. That deadlock-freedom check
  // belongs in its own pass over the finished Schedule, run after this
  // function, so the shared-memory ordering here stays as simple as it is.
  // Until that pass exists, Nccl values get ordinary buffered channels and
  // the tasks of a collective are scheduled like plain tasks, each on its own
  // actor; renderScheduleText() shows both for what they are (the transport
  // of each channel, the collective and rank of each such COMPUTE).
  return schedule;
}

//===----------------------------------------------------------------------===//
// Text rendering
//===----------------------------------------------------------------------===//

namespace {

std::string_view basename(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// "echo.cg.cpp:13", or empty when the location is unknown. The basename
/// keeps the file identical across build directories and machines.
std::string shortLoc(const ir::SourceLoc& loc) {
  if (loc.file.empty())
    return {};
  return fmt::format("{}:{}", basename(loc.file), loc.line);
}

/// Names each task as the reader of the schedule thinks of it, "a.echo".
/// When one actor binds one method several times, the tasks are told apart
/// as "a.step#1", "a.step#2".
std::vector<std::string> taskLabels(const Graph& graph) {
  std::vector<std::string> taskLabels;
  std::map<std::string, unsigned> uses;
  for (const ir::Task& task : graph.tasks) {
    taskLabels.push_back(
        fmt::format("{}.{}", graph.actors[task.actor].name, task.method));
    ++uses[taskLabels.back()];
  }
  std::map<std::string, unsigned> seen;
  for (std::string& label : taskLabels)
    if (uses[label] > 1)
      label = fmt::format("{}#{}", label, ++seen[label]);
  return taskLabels;
}

/// Names each value: "input #0", the task producing it, "a.echo", or, for
/// element k of an unpacked std::tuple result, "a.split[k]".
std::vector<std::string> valueLabels(const Graph& graph,
                                     const std::vector<std::string>& tasks) {
  std::vector<std::string> labels;
  for (const ir::Value& value : graph.values) {
    if (value.producer.kind == Producer::Kind::Input)
      labels.push_back(fmt::format("input #{}", value.producer.index));
    else if (value.producer.element == -1)
      labels.push_back(tasks[value.producer.index]);
    else
      labels.push_back(fmt::format("{}[{}]", tasks[value.producer.index],
                                   value.producer.element));
  }
  return labels;
}

std::string_view transportName(ir::Transport transport) {
  switch (transport) {
  case ir::Transport::Shm:
    return "shm";
  case ir::Transport::Nccl:
    return "nccl";
  }
  return "?";
}

std::string_view collectiveKindName(ir::Collective::Kind kind) {
  switch (kind) {
  case ir::Collective::Kind::AllReduce:
    return "allreduce";
  case ir::Collective::Kind::AllGather:
    return "allgather";
  case ir::Collective::Kind::ReduceScatter:
    return "reducescatter";
  }
  return "?";
}

/// "[allreduce sum #0, rank 1 of 2]" for a task that is one rank of a
/// collective; empty for a plain task.
std::string collectiveNote(const Graph& graph, unsigned t) {
  const ir::Task& task = graph.tasks[t];
  if (task.collective < 0)
    return {};
  const ir::Collective& collective =
      graph.collectives[static_cast<std::size_t>(task.collective)];
  auto rank = std::find(collective.tasks.begin(), collective.tasks.end(), t);
  std::string kind(collectiveKindName(collective.kind));
  if (!collective.reduceOp.empty())
    kind += " " + collective.reduceOp;
  return fmt::format("[{} #{}, rank {} of {}]", kind, task.collective,
                     rank - collective.tasks.begin(), collective.tasks.size());
}

std::string endpointName(const Graph& graph, int endpoint) {
  return endpoint == kDriver ? std::string("driver")
                             : graph.actors[endpoint].name;
}

std::string_view kindName(Operation::Kind kind) {
  switch (kind) {
  case Operation::Kind::Read:
    return "READ";
  case Operation::Kind::Compute:
    return "COMPUTE";
  case Operation::Kind::Write:
    return "WRITE";
  }
  return "?";
}

std::size_t digits(std::size_t n) {
  std::size_t count = 1;
  while (n >= 10) {
    n /= 10;
    ++count;
  }
  return count;
}

} // namespace

std::string renderScheduleText(const Graph& graph, const Schedule& schedule) {
  const std::vector<std::string> tasks = taskLabels(graph);
  const std::vector<std::string> labels = valueLabels(graph, tasks);
  std::string out;
  auto it = std::back_inserter(out);

  fmt::format_to(it, "# schedule of graph '{}'", graph.name);
  if (std::string loc = shortLoc(graph.loc); !loc.empty())
    fmt::format_to(it, " ({})", loc);
  out += '\n';

  // Channels: id, value, type, transport, writer -> readers (in reader-slot
  // order).
  out += "# channels\n";
  std::size_t idWidth = 0, labelWidth = 0, typeWidth = 0, transportWidth = 0;
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    idWidth = std::max(idWidth, 1 + digits(c));
    labelWidth = std::max(labelWidth, labels[channel.value].size());
    typeWidth = std::max(typeWidth,
                         graph.values[channel.value].type.spelling.size());
    transportWidth =
        std::max(transportWidth,
                 transportName(graph.values[channel.value].transport).size());
  }
  if (schedule.channels.empty())
    out += "  (none)\n";
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    std::vector<std::string> readers;
    for (int reader : channel.readers)
      readers.push_back(endpointName(graph, reader));
    fmt::format_to(it, "  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {} -> {}\n",
                   fmt::format("c{}", c), idWidth, labels[channel.value],
                   labelWidth, graph.values[channel.value].type.spelling,
                   typeWidth,
                   transportName(graph.values[channel.value].transport),
                   transportWidth, endpointName(graph, channel.writer),
                   fmt::join(readers, ", "));
  }

  // Operations: the bodies of all COMPUTE lines share one column for their
  // source location, so the file can be scanned down that column.
  // A constant argument shows as its C++ expression.
  auto computeBody = [&](const Operation& op) {
    const ir::Task& task = graph.tasks[op.task];
    std::vector<std::string_view> args;
    for (const ir::Arg& arg : task.args)
      args.push_back(arg.kind == ir::Arg::Kind::Value
                         ? std::string_view(labels[arg.value])
                         : std::string_view(arg.constant.expression));
    return fmt::format("{}({})", tasks[op.task], fmt::join(args, ", "));
  };
  auto channelList = [&](const Operation& op, bool withValues) {
    std::vector<std::string> items;
    for (unsigned c : op.channels)
      items.push_back(withValues ? fmt::format("c{} ({})", c,
                                               labels[schedule.channels[c].value])
                                 : fmt::format("c{}", c));
    return fmt::format("{}", fmt::join(items, ", "));
  };
  std::size_t numberWidth = 1, bodyWidth = 0;
  for (const ActorSchedule& actor : schedule.actors) {
    numberWidth = std::max(numberWidth, digits(actor.operations.size()));
    for (const Operation& op : actor.operations)
      if (op.kind == Operation::Kind::Compute)
        bodyWidth = std::max(bodyWidth, computeBody(op).size());
  }

  for (const ActorSchedule& actor : schedule.actors) {
    fmt::format_to(it, "# actor {} ({})\n", graph.actors[actor.actor].name,
                   graph.actors[actor.actor].className);
    if (actor.operations.empty())
      out += "  (no operations)\n";
    for (std::size_t n = 0; n < actor.operations.size(); ++n) {
      const Operation& op = actor.operations[n];
      fmt::format_to(it, "  {:>{}}  {:<7}  ", n + 1, numberWidth,
                     kindName(op.kind));
      switch (op.kind) {
      case Operation::Kind::Read:
        out += channelList(op, /*withValues=*/true);
        break;
      case Operation::Kind::Write:
        out += channelList(op, /*withValues=*/false);
        break;
      case Operation::Kind::Compute: {
        std::string loc = shortLoc(graph.tasks[op.task].loc);
        std::string note = collectiveNote(graph, op.task);
        std::string line = computeBody(op);
        if (!loc.empty() || !note.empty())
          line = fmt::format("{:<{}}", line, bodyWidth);
        if (!loc.empty())
          line += "  " + loc;
        if (!note.empty())
          line += "  " + note;
        out += line;
        break;
      }
      }
      out += '\n';
    }
  }

  // The driver's side: which channel it fills for each input and drains for
  // each output.
  out += "# driver\n";
  std::size_t endWidth = 0;
  for (std::size_t i = 0; i < schedule.inputChannels.size(); ++i)
    endWidth = std::max(endWidth, fmt::format("input #{}", i).size());
  for (std::size_t k = 0; k < schedule.outputChannels.size(); ++k)
    endWidth = std::max(endWidth, fmt::format("output #{}", k).size());
  for (std::size_t i = 0; i < schedule.inputChannels.size(); ++i)
    fmt::format_to(it, "  {:<{}}  -> c{}\n", fmt::format("input #{}", i),
                   endWidth, schedule.inputChannels[i]);
  for (std::size_t k = 0; k < schedule.outputChannels.size(); ++k) {
    unsigned c = schedule.outputChannels[k];
    fmt::format_to(it, "  {:<{}}  <- c{} ({})\n", fmt::format("output #{}", k),
                   endWidth, c, labels[schedule.channels[c].value]);
  }
  return out;
}

} // namespace cg::schedule
