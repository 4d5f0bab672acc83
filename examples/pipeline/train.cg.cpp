// train.cg.cpp - pipeline-parallel training: 4 stages, 8 microbatches, a
// forward and a backward per stage and microbatch.
//
// The graph is written the plain way, every forward, then every backward
// (GPipe's order). Built with SCHEDULE cost (examples/pipeline/CMakeLists.txt),
// cgc orders each stage's tasks by their costs instead: 1F1B, which finishes
// as early and keeps at most 4 microbatches' activations alive per stage.
// The stages sleep for their costs (1 ms a forward, 2 a backward), so the
// bubble measured is the schedule's, not this machine's CPU count's.
#include <cg/cg.hpp>

#include <chrono>
#include <thread>
#include <vector>

inline constexpr int kStages = 4;
inline constexpr int kMicrobatches = 8;

struct CG_ACTOR Stage {
  std::vector<float> forward(std::vector<float> activations) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return activations;
  }
  std::vector<float> backward(std::vector<float> gradients) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return gradients;
  }
};

CG_GRAPH void train_step(cg::GraphBuilder& g) {
  g.cost<&Stage::forward>(1.0);
  g.cost<&Stage::backward>(2.0);
  std::vector<cg::Actor<Stage>> stage;
  for (int s = 0; s < kStages; ++s)
    stage.push_back(g.actor<Stage>(cg::indexed_name("stage", s)));
  auto batch = g.input<std::vector<float>>();
  std::vector<cg::Value<std::vector<float>>> last;
  for (int mb = 0; mb < kMicrobatches; ++mb) {
    auto v = batch;
    for (int s = 0; s < kStages; ++s)
      v = stage[s].bind<&Stage::forward>(v);
    last.push_back(v);
  }
  for (int mb = 0; mb < kMicrobatches; ++mb) {
    auto v = last[mb];
    for (int s = kStages - 1; s >= 0; --s)
      v = stage[s].bind<&Stage::backward>(v);
    g.output(v);
  }
}
