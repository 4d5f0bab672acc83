// schedule_bench.cpp - The scheduler alone: IR JSON in, schedule out.
//
//   schedule_bench                 random graphs of 1,000, 10,000 and 100,000 tasks
//   schedule_bench <graph.ir.json> one graph, e.g. one cgc wrote
//
// Prints, per graph, the time to read the IR, to build the schedule (channels,
// operation graph, global order, the simulator's check of 11 executions with
// 10 in flight and of 2 with 1) and to render schedule.txt, beside a
// baseline: a plain topological sort of the same task graph, the least any
// scheduler must do. Times are medians of 3 runs, wall clock and this
// process's CPU. The target (targets.def: scheduler_100k) is for 100,000
// tasks, judged on the wall time of building the schedule (the scheduler
// alone: its channels, order and simulated check, not reading the IR or
// rendering the text); smaller graphs show that the time grows about linearly.
#include "GraphJsonReader.h"
#include "ir/GraphJson.h"
#include "schedule/Schedule.h"
#include "schedule/ScheduleJson.h"
#include "targets.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Wall-clock seconds, and this process's CPU seconds (on a shared machine
/// the wall clock also counts the time other processes had the core).
struct Seconds {
  double wall, cpu;
};

Seconds seconds(const std::function<void()>& f) {
  std::vector<double> walls, cpus;
  for (int i = 0; i < 3; ++i) {
    auto start = Clock::now();
    std::clock_t cpuStart = std::clock();
    f();
    cpus.push_back(static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC);
    walls.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(walls.begin(), walls.end());
  std::sort(cpus.begin(), cpus.end());
  return {walls[1], cpus[1]};
}

/// A random layered workload: tasks on numTasks / 100 actors, each reading
/// one to three recent values, a tenth of the results sent over nccl, every
/// value nobody reads an output.
cg::ir::Graph randomGraph(unsigned numTasks, unsigned seed) {
  std::mt19937 rng(seed);
  cg::ir::Graph graph;
  graph.name = "bench";
  graph.loc = {"bench.cg.cpp", 1, 1};
  unsigned numActors = std::max(4u, numTasks / 100);
  for (unsigned a = 0; a < numActors; ++a)
    graph.actors.push_back({"a" + std::to_string(a), "Worker", {}, {"bench.cg.cpp", 2, 3}});
  graph.values.push_back({{"int"}, {cg::ir::Producer::Kind::Input, 0, -1}, cg::ir::Transport::Shm});
  graph.inputs.push_back(0);
  std::vector<bool> used(1, false);
  for (unsigned t = 0; t < numTasks; ++t) {
    cg::ir::Task task;
    task.actor = t < numActors ? t : std::uniform_int_distribution<unsigned>(0, numActors - 1)(rng);
    task.method = "work";
    task.loc = {"bench.cg.cpp", 10 + t, 3};
    unsigned numArgs = std::uniform_int_distribution<unsigned>(1, 3)(rng);
    for (unsigned k = 0; k < numArgs; ++k) {
      auto size = static_cast<unsigned>(graph.values.size());
      unsigned back = std::uniform_int_distribution<unsigned>(0, std::min(size, 50u) - 1)(rng);
      unsigned v = size - 1 - back;
      const cg::ir::Value& value = graph.values[v];
      // An nccl value is never read by a plain task of its own actor.
      if (value.transport == cg::ir::Transport::Nccl &&
          graph.tasks[value.producer.index].actor == task.actor)
        v = 0;
      task.args.push_back({cg::ir::Arg::Kind::Value, v, {}});
      used[v] = true;
    }
    auto result = static_cast<unsigned>(graph.values.size());
    task.results.push_back(result);
    bool nccl = std::uniform_int_distribution<unsigned>(0, 9)(rng) == 0;
    graph.values.push_back({{"Tensor"},
                            {cg::ir::Producer::Kind::Task, t, -1},
                            nccl ? cg::ir::Transport::Nccl : cg::ir::Transport::Shm});
    used.push_back(false);
    graph.tasks.push_back(std::move(task));
  }
  for (unsigned v = 1; v < graph.values.size(); ++v)
    if (!used[v]) {
      graph.values[v].transport = cg::ir::Transport::Shm;
      graph.outputs.push_back(v);
    }
  return graph;
}

/// The baseline: Kahn's algorithm over tasks and their data edges.
std::size_t topologicalSort(const cg::ir::Graph& graph) {
  std::vector<std::vector<unsigned>> consumers(graph.values.size());
  std::vector<unsigned> waits(graph.tasks.size(), 0);
  for (unsigned t = 0; t < graph.tasks.size(); ++t)
    for (const cg::ir::Arg& arg : graph.tasks[t].args)
      if (graph.values[arg.value].producer.kind == cg::ir::Producer::Kind::Task) {
        consumers[graph.values[arg.value].producer.index].push_back(t);
        ++waits[t];
      }
  std::vector<unsigned> order;
  for (unsigned t = 0; t < graph.tasks.size(); ++t)
    if (waits[t] == 0)
      order.push_back(t);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (unsigned c : consumers[order[i]])
      if (--waits[c] == 0)
        order.push_back(c);
  return order.size();
}

void bench(const std::string& label, const std::string& json, bool judged) {
  cg::ir::Graph graph;
  Seconds parse = seconds([&] { graph = cg::ir::graphFromJson(json); });
  cg::schedule::Schedule schedule;
  Seconds build = seconds(
      [&] { schedule = std::get<cg::schedule::Schedule>(cg::schedule::buildSchedule(graph)); });
  Seconds render = seconds([&] { cg::schedule::renderScheduleText(graph, schedule); });
  Seconds baseline = seconds([&] { topologicalSort(graph); });
  std::size_t operations = 0;
  for (const auto& actor : schedule.actors)
    operations += actor.operations.size();
  std::printf("%s: %zu tasks, %zu operations, %zu groups\n", label.c_str(), graph.tasks.size(),
              operations, schedule.groups.size());
  std::printf("  read IR %7.3f s (cpu %.3f) | schedule %7.3f s (cpu %.3f) | text %7.3f s "
              "(cpu %.3f) | baseline, topological sort %7.4f s (cpu %.4f)\n",
              parse.wall, parse.cpu, build.wall, build.cpu, render.wall, render.cpu, baseline.wall,
              baseline.cpu);
  if (judged) {
    const cg_bench::Target& target = cg_bench::target("scheduler_100k");
    std::printf("  schedule %.3f s, target %s: %s\n", build.wall,
                cg_bench::describe(target).c_str(),
                cg_bench::word(cg_bench::judge(target, build.wall)));
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    bench(argv[1], text.str(), false);
    return 0;
  }
  for (unsigned n : {1000u, 10000u, 100000u})
    bench("random " + std::to_string(n), cg::ir::toJson(randomGraph(n, n)), n == 100000);
  return 0;
}
