//===- Groups.cpp - The synchronous groups as communicators ---------------===//
//
// The ranks come from the groups' sources, not their members: an NCCL
// channel's ends are its writer and readers, a collective's its tasks' actors.
//
//===----------------------------------------------------------------------===//
#include "schedule/Groups.h"

#include "support/InternalError.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace cg::schedule {

Communicators communicatorsOf(const ir::Graph& graph, const Schedule& schedule) {
  Communicators out;
  out.memberships.resize(graph.actors.size());
  out.channelGroup.assign(schedule.channels.size(), -1);
  out.collectiveGroup.assign(graph.collectives.size(), -1);
  for (unsigned g = 0; g < schedule.groups.size(); ++g) {
    const SyncGroup& group = schedule.groups[g];
    Communicator communicator;
    std::vector<std::string> names;
    if (group.kind == SyncGroup::Kind::Nccl) {
      const Channel& channel = schedule.channels.at(group.source);
      if (channel.writer == kDriver ||
          std::count(channel.readers.begin(), channel.readers.end(), kDriver) != 0)
        internalError("an nccl channel with the driver at one end");
      communicator.actors.push_back(static_cast<unsigned>(channel.writer));
      for (int reader : channel.readers)
        communicator.actors.push_back(static_cast<unsigned>(reader));
      communicator.name = fmt::format("nccl c{}", group.source);
      out.channelGroup.at(group.source) = static_cast<int>(g);
    } else {
      const ir::Collective& collective = graph.collectives.at(group.source);
      for (unsigned t : collective.tasks)
        communicator.actors.push_back(graph.tasks.at(t).actor);
      std::string kind(ir::toString(collective.kind));
      if (!collective.reduceOp.empty())
        kind += " " + collective.reduceOp;
      communicator.name = fmt::format("{} #{}", kind, group.source);
      out.collectiveGroup.at(group.source) = static_cast<int>(g);
    }
    for (unsigned rank = 0; rank < communicator.actors.size(); ++rank) {
      unsigned actor = communicator.actors[rank];
      names.push_back(graph.actors.at(actor).name);
      out.memberships.at(actor).push_back({g, rank});
    }
    communicator.summary = group.kind == SyncGroup::Kind::Nccl
                               ? fmt::format("{}: {} -> {}", communicator.name, names.front(),
                                             fmt::join(names.begin() + 1, names.end(), ", "))
                               : fmt::format("{}: {}", communicator.name, fmt::join(names, ", "));
    out.groups.push_back(std::move(communicator));
  }
  return out;
}

} // namespace cg::schedule
