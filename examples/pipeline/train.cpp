// train.cpp - runs train.cg.cpp's training step and sets the pipeline bubble
// it measures beside 1F1B's bound and cgc's simulated prediction.
//
//   build/examples/pipeline/pipeline_training_app
//   cg-profile summary train_step.trace.json     (per stage, and the critical path)
//   cg-profile timeline train_step.trace.json > train_step.svg
#include "pipeline_training.cg.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

// The simulated length of one step, in cost units: "one execution takes N
// cost units" in the schedule cgc wrote (CG_SCHEDULE_TXT).
double simulated_makespan() {
  std::ifstream schedule(CG_SCHEDULE_TXT);
  std::stringstream text;
  text << schedule.rdbuf();
  const std::string all = text.str();
  const std::string marker = "one execution takes ";
  const auto at = all.find(marker);
  return at == std::string::npos ? 0 : std::strtod(all.c_str() + at + marker.size(), nullptr);
}

int main() {
  constexpr int kSteps = 10;
  cg::LaunchOptions options;
  options.record_profile = true; // for graph.stats() and write_profile()
  auto graph = cg::launch<&train_step>(options);
  const std::vector<float> batch(1024, 1.0f);
  for (int step = 0; step < kSteps; ++step)
    graph.execute(batch).get();

  // Each stage computes m forwards and m backwards a step; the rest of the
  // step it waits: the bubble is what the stages did not compute.
  const cg::GraphStats stats = graph.stats();
  double compute_us = 0;
  for (const cg::TaskStats& task : stats.tasks)
    compute_us += task.compute.p50_us;
  const double step_us = stats.latency.p50_us;
  const double measured = 1 - compute_us / (kStages * step_us);
  const double bound = double(kStages - 1) / (kMicrobatches + kStages - 1);
  const double makespan = simulated_makespan();
  const double work = kMicrobatches * (1.0 + 2.0); // a stage's costs a step
  std::printf("train_step: %d stages, %d microbatches, scheduled by cost (1F1B)\n", kStages,
              kMicrobatches);
  std::printf("step: median %.1f ms over %d steps\n", step_us / 1000, kSteps);
  std::printf("bubble measured   %.3f  (1 - compute / (stages x step), from graph.stats())\n",
              measured);
  std::printf("bubble bound      %.3f  ((p-1)/(m+p-1), 1F1B's)\n", bound);
  std::printf("bubble simulated  %.3f  (cgc: a step takes %g cost units, a stage computes %g)\n",
              makespan > 0 ? 1 - work / makespan : 0, makespan, work);
  graph.write_profile("train_step.trace.json");
  std::printf("trace: train_step.trace.json (cg-profile summary, cg-profile timeline)\n");
}
