//===- ScheduleJson.cpp - The schedule as `<graph>.schedule.json` ---------===//
//
// nlohmann::ordered_json keeps the keys in the documented order.
//
//===----------------------------------------------------------------------===//

#include "schedule/ScheduleJson.h"

#include "ir/Names.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cg::schedule {

std::string renderScheduleJson(const ir::Graph& graph, const Schedule& schedule,
                               bool tcpEverywhere) {
  using Json = nlohmann::ordered_json;
  const std::vector<std::string> tasks = taskLabels(graph);
  const std::vector<std::string> values = valueLabels(graph, tasks);

  // The global step of every operation.
  const std::vector<std::vector<unsigned>> stepOf = operationSteps(schedule);
  auto ref = [&](const OpRef& r) {
    Json j = Json::object();
    j["actor"] = graph.actors[r.actor].name;
    j["operation"] = r.index + 1;
    return j;
  };

  Json j = Json::object();
  j["format"] = "cg-schedule";
  j["version"] = 1;
  j["graph"] = graph.name;
  j["loc"] = shortLoc(graph.loc);

  Json options = Json::object();
  options["order"] = schedule.options.order == ScheduleOptions::Order::Cost ? "cost" : "bind";
  options["overlapGpuCommunication"] = schedule.options.overlapGpuCommunication;
  options["maxInFlight"] = schedule.options.maxInFlight;
  j["options"] = std::move(options);

  Json simulation = Json::object();
  simulation["executions"] = schedule.simulation.executions;
  simulation["makespan"] = schedule.simulation.makespan;
  simulation["busiest"] = schedule.simulation.busiest;
  simulation["peakInFlight"] = schedule.simulation.peakInFlight;
  j["simulation"] = std::move(simulation);

  Json channels = Json::array();
  for (unsigned c = 0; c < schedule.channels.size(); ++c) {
    const Channel& channel = schedule.channels[c];
    Json out = Json::object();
    out["id"] = c;
    out["value"] = values[channel.value];
    out["type"] = graph.values[channel.value].type.spelling;
    out["transport"] = channelTransport(graph, channel, tcpEverywhere);
    out["writer"] = endpointName(graph, channel.writer);
    Json readers = Json::array();
    for (int reader : channel.readers)
      readers.push_back(endpointName(graph, reader));
    out["readers"] = std::move(readers);
    channels.push_back(std::move(out));
  }
  j["channels"] = std::move(channels);

  Json groups = Json::array();
  for (unsigned g = 0; g < schedule.groups.size(); ++g) {
    const SyncGroup& group = schedule.groups[g];
    Json out = Json::object();
    out["id"] = g;
    if (group.kind == SyncGroup::Kind::Nccl) {
      out["kind"] = "nccl";
      out["channel"] = group.source;
    } else {
      out["kind"] = ir::toString(graph.collectives[group.source].kind);
      out["collective"] = group.source;
    }
    Json members = Json::array();
    for (const OpRef& member : group.members)
      members.push_back(ref(member));
    out["members"] = std::move(members);
    groups.push_back(std::move(out));
  }
  j["groups"] = std::move(groups);

  const auto& start = schedule.simulation.start;
  const auto& finish = schedule.simulation.finish;
  Json actors = Json::array();
  for (const ActorSchedule& actor : schedule.actors) {
    Json out = Json::object();
    out["name"] = graph.actors[actor.actor].name;
    out["class"] = graph.actors[actor.actor].className;
    Json operations = Json::array();
    for (unsigned i = 0; i < actor.operations.size(); ++i) {
      const Operation& op = actor.operations[i];
      Json o = Json::object();
      o["number"] = i + 1;
      o["step"] = stepOf[actor.actor][i];
      o["kind"] = kindName(op.kind);
      o["task"] = op.task;
      o["call"] = tasks[op.task];
      o["loc"] = shortLoc(graph.tasks[op.task].loc);
      o["channels"] = op.channels;
      if (op.group >= 0)
        o["group"] = op.group;
      if (op.moved)
        o["moved"] = true;
      bool timed = actor.actor < start.size() && i < start[actor.actor].size();
      o["start"] = timed ? start[actor.actor][i] : 0.0;
      o["finish"] = timed ? finish[actor.actor][i] : 0.0;
      operations.push_back(std::move(o));
    }
    out["operations"] = std::move(operations);
    actors.push_back(std::move(out));
  }
  j["actors"] = std::move(actors);

  Json driver = Json::object();
  driver["inputs"] = schedule.inputChannels;
  driver["outputs"] = schedule.outputChannels;
  j["driver"] = std::move(driver);

  Json steps = Json::array();
  for (const std::vector<OpRef>& step : schedule.steps) {
    Json out = Json::array();
    for (const OpRef& r : step)
      out.push_back(ref(r));
    steps.push_back(std::move(out));
  }
  j["steps"] = std::move(steps);

  return j.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) + "\n";
}

} // namespace cg::schedule
