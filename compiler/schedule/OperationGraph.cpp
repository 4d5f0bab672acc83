//===- OperationGraph.cpp - READ/COMPUTE/WRITE operations and their edges -===//
//
// Builds the graph described in OperationGraph.h in one pass over the tasks
// in priority order, so that operation ids double as the scheduler's
// preference: GlobalOrder places the lowest ready id first.
//
//===----------------------------------------------------------------------===//

#include "schedule/OperationGraph.h"
#include "support/InternalError.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

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

std::string taskName(const Graph& graph, unsigned t) {
  return fmt::format("{}.{}", graph.actors[graph.tasks[t].actor].name, graph.tasks[t].method);
}

} // namespace

void OperationGraph::index() {
  const auto n = static_cast<unsigned>(ops.size());
  outBegin.assign(n + 1, 0);
  inBegin.assign(n + 1, 0);
  for (const OpEdge& e : edges) {
    ++outBegin[e.from + 1];
    ++inBegin[e.to + 1];
  }
  for (unsigned i = 0; i < n; ++i) {
    outBegin[i + 1] += outBegin[i];
    inBegin[i + 1] += inBegin[i];
  }
  outEdges.assign(edges.size(), 0);
  inEdges.assign(edges.size(), 0);
  std::vector<unsigned> outNext(outBegin.begin(), outBegin.end() - 1);
  std::vector<unsigned> inNext(inBegin.begin(), inBegin.end() - 1);
  for (unsigned e = 0; e < edges.size(); ++e) {
    outEdges[outNext[edges[e].from]++] = e;
    inEdges[inNext[edges[e].to]++] = e;
  }
}

std::vector<std::optional<unsigned>> assignChannels(const Graph& graph,
                                                    std::vector<Channel>& channels) {
  // Constant arguments are compiled into the reading actor's code: no
  // channel.
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
    readers.erase(std::remove(readers.begin(), readers.end(), writer), readers.end());
    if (readers.empty())
      continue;
    channelOf[v] = static_cast<unsigned>(channels.size());
    channels.push_back({v, writer, std::move(readers)});
  }
  return channelOf;
}

TaskPriority bindOrder(const Graph& graph) {
  TaskPriority order(graph.tasks.size());
  for (unsigned t = 0; t < order.size(); ++t)
    order[t] = t;
  return order;
}

std::vector<ir::Diagnostic> findSelfSends(const Graph& graph) {
  // A collective's rank reads its value where it is, so an NCCL value
  // reduced by its own actor is no send at all; any other task of the
  // producing actor would be the receiving end of a send to itself.
  std::vector<ir::Diagnostic> diagnostics;
  for (unsigned t = 0; t < graph.tasks.size(); ++t) {
    const ir::Task& task = graph.tasks[t];
    if (task.collective >= 0)
      continue;
    std::vector<unsigned> seen;
    for (const ir::Arg& arg : task.args) {
      if (arg.kind != ir::Arg::Kind::Value)
        continue;
      const ir::Value& value = graph.values[arg.value];
      if (value.transport != ir::Transport::Nccl || value.producer.kind != Producer::Kind::Task ||
          graph.tasks[value.producer.index].actor != task.actor ||
          std::find(seen.begin(), seen.end(), arg.value) != seen.end())
        continue;
      seen.push_back(arg.value);
      unsigned producer = value.producer.index;
      const std::string& actor = graph.actors[task.actor].name;
      diagnostics.push_back(
          {task.loc,
           fmt::format("nccl edge within actor '{}': '{}' receives the result of "
                       "'{}' from its own actor, so the send would wait for a "
                       "receive that '{}' reaches only after it (a cycle)",
                       actor, taskName(graph, t), taskName(graph, producer), actor),
           {{graph.tasks[producer].loc,
             fmt::format("'{}' sends its result over nccl here; remove "
                         "with_tensor_transport(cg::transport::nccl) or bind "
                         "'{}' on another actor",
                         taskName(graph, producer), taskName(graph, t))}}});
    }
  }
  return diagnostics;
}

OperationGraph buildOperationGraph(const Graph& graph, const std::vector<Channel>& channels,
                                   const std::vector<std::optional<unsigned>>& channelOf,
                                   const TaskPriority& priority) {
  if (priority.size() != graph.tasks.size())
    internalError("the task priority does not list every task once");
  OperationGraph g;
  g.actorOps.resize(graph.actors.size());

  // One group per NCCL channel (by channel), then one per collective.
  std::vector<int> groupOfChannel(channels.size(), -1);
  for (unsigned c = 0; c < channels.size(); ++c) {
    if (graph.values[channels[c].value].transport != ir::Transport::Nccl)
      continue;
    if (channels[c].writer == kDriver || channels[c].readers.front() == kDriver)
      internalError(fmt::format("nccl channel c{} has the driver at one end; the "
                                "graph was not validated",
                                c));
    groupOfChannel[c] = static_cast<int>(g.groups.size());
    g.groups.push_back({SyncGroup::Kind::Nccl, c, {}});
  }
  const auto firstCollectiveGroup = static_cast<unsigned>(g.groups.size());
  for (unsigned k = 0; k < graph.collectives.size(); ++k)
    g.groups.push_back(
        {SyncGroup::Kind::Collective, k, std::vector<unsigned>(graph.collectives[k].tasks.size())});

  std::vector<int> writeOfChannel(channels.size(), -1);
  std::vector<std::vector<unsigned>> readsOfChannel(channels.size());
  // Per channel and reader slot, whether that reader has read it already
  // this execution: a value read for an earlier task stays in memory.
  std::vector<unsigned> firstReader(channels.size() + 1, 0);
  for (unsigned c = 0; c < channels.size(); ++c)
    firstReader[c + 1] = firstReader[c] + static_cast<unsigned>(channels[c].readers.size());
  std::vector<bool> alreadyRead(firstReader.back(), false);
  auto readerOf = [&](unsigned c, unsigned actor) {
    const std::vector<int>& readers = channels[c].readers;
    auto it = std::lower_bound(readers.begin(), readers.end(), static_cast<int>(actor));
    if (it == readers.end() || *it != static_cast<int>(actor))
      internalError(fmt::format("actor #{} reads c{} but is not its reader", actor, c));
    return firstReader[c] + static_cast<unsigned>(it - readers.begin());
  };
  std::vector<int> lastCompute(graph.actors.size(), -1);
  std::vector<bool> placedTask(graph.tasks.size(), false);

  auto addOp = [&](Operation::Kind kind, unsigned t, std::vector<unsigned> chans, int group) {
    auto id = static_cast<unsigned>(g.ops.size());
    g.ops.push_back({kind, t, graph.tasks[t].actor, std::move(chans), group});
    g.actorOps[graph.tasks[t].actor].push_back(id);
    return id;
  };

  for (unsigned t : priority) {
    if (t >= graph.tasks.size() || placedTask[t])
      internalError("the task priority does not list every task once");
    placedTask[t] = true;
    const ir::Task& task = graph.tasks[t];
    const unsigned actor = task.actor;

    std::vector<unsigned> shmReads, ncclReads;
    for (const ir::Arg& arg : task.args) {
      if (arg.kind != ir::Arg::Kind::Value)
        continue;
      const ir::Producer& producer = graph.values[arg.value].producer;
      if (producer.kind == Producer::Kind::Task) {
        if (!placedTask[producer.index])
          internalError(fmt::format("the task priority puts task #{} before the "
                                    "producer of its argument, task #{}",
                                    t, producer.index));
        // Produced by a task of this same actor: already in memory.
        if (graph.tasks[producer.index].actor == actor)
          continue;
      }
      if (!channelOf[arg.value])
        internalError(fmt::format("value {} is read by actor '{}' but has no "
                                  "channel",
                                  arg.value, graph.actors[actor].name));
      unsigned channel = *channelOf[arg.value];
      unsigned reader = readerOf(channel, actor);
      if (alreadyRead[reader])
        continue;
      alreadyRead[reader] = true;
      (groupOfChannel[channel] < 0 ? shmReads : ncclReads).push_back(channel);
    }

    std::vector<unsigned> readOps;
    if (!shmReads.empty())
      readOps.push_back(addOp(Operation::Kind::Read, t, shmReads, -1));
    for (unsigned channel : ncclReads)
      readOps.push_back(addOp(Operation::Kind::Read, t, {channel}, groupOfChannel[channel]));
    for (unsigned op : readOps)
      for (unsigned channel : g.ops[op].channels)
        readsOfChannel[channel].push_back(op);

    int computeGroup = -1;
    if (task.collective >= 0)
      computeGroup =
          static_cast<int>(firstCollectiveGroup + static_cast<unsigned>(task.collective));
    unsigned compute = addOp(Operation::Kind::Compute, t, {}, computeGroup);
    if (computeGroup >= 0) {
      const std::vector<unsigned>& ranks =
          graph.collectives[static_cast<unsigned>(task.collective)].tasks;
      auto rank = std::find(ranks.begin(), ranks.end(), t) - ranks.begin();
      g.groups[static_cast<unsigned>(computeGroup)].members[static_cast<std::size_t>(rank)] =
          compute;
    }
    for (unsigned op : readOps)
      g.edges.push_back({op, compute, OpEdge::Kind::InTask, 0});
    if (lastCompute[actor] >= 0)
      g.edges.push_back(
          {static_cast<unsigned>(lastCompute[actor]), compute, OpEdge::Kind::ProgramOrder, 0});
    lastCompute[actor] = static_cast<int>(compute);

    std::vector<unsigned> shmWrites, ncclWrites;
    for (unsigned result : task.results)
      if (channelOf[result])
        (groupOfChannel[*channelOf[result]] < 0 ? shmWrites : ncclWrites)
            .push_back(*channelOf[result]);
    std::vector<unsigned> writeOps;
    if (!shmWrites.empty())
      writeOps.push_back(addOp(Operation::Kind::Write, t, shmWrites, -1));
    for (unsigned channel : ncclWrites)
      writeOps.push_back(addOp(Operation::Kind::Write, t, {channel}, groupOfChannel[channel]));
    for (unsigned op : writeOps) {
      g.edges.push_back({compute, op, OpEdge::Kind::InTask, 0});
      for (unsigned channel : g.ops[op].channels)
        writeOfChannel[channel] = static_cast<int>(op);
    }
  }

  for (unsigned c = 0; c < channels.size(); ++c) {
    if (channels[c].writer == kDriver)
      continue; // the driver writes every input before anything else runs
    if (writeOfChannel[c] < 0)
      internalError(fmt::format("channel c{} has no WRITE", c));
    for (unsigned op : readsOfChannel[c])
      g.edges.push_back({static_cast<unsigned>(writeOfChannel[c]), op, OpEdge::Kind::Data, c});
    if (groupOfChannel[c] >= 0) {
      OpGroup& group = g.groups[static_cast<unsigned>(groupOfChannel[c])];
      group.members.push_back(static_cast<unsigned>(writeOfChannel[c]));
      std::vector<unsigned> reads = readsOfChannel[c];
      std::sort(reads.begin(), reads.end(),
                [&](unsigned a, unsigned b) { return g.ops[a].actor < g.ops[b].actor; });
      group.members.insert(group.members.end(), reads.begin(), reads.end());
    }
  }
  g.index();
  return g;
}

} // namespace cg::schedule
