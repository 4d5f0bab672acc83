// Graphs over one actor set are checked and scheduled; generating the code
// that runs them is refused until the runtime launches a set.
#include <cg/cg.hpp>

#include <string>
#include <vector>

struct CG_ACTOR Trainer {
  explicit Trainer(double rate) : rate(rate) {}
  double step(std::vector<float> batch) { return rate * static_cast<double>(batch.size()); }
  std::vector<float> weights(int version) { return std::vector<float>(4, version * 0.5f); }
  double rate;
};

struct CG_ACTOR Rollout {
  explicit Rollout(int seed) : seed(seed) {}
  std::vector<float> generate(std::vector<std::string> prompts) {
    return std::vector<float>(prompts.size(), static_cast<float>(seed));
  }
  int load(std::vector<float> weights) { return static_cast<int>(weights.size()); }
  int seed;
};

CG_ACTOR_SET void rl(cg::GraphBuilder& s) {
  s.actor<Trainer>("trainer", 0.001).gpus(1);
  for (int i = 0; i < 2; ++i)
    s.actor<Rollout>(cg::indexed_name("rollout", i), i).gpus(1);
}

CG_GRAPH_OVER(rl) void generate(cg::GraphBuilder& g) {  // expected-error {{graph 'generate' runs over actor set 'rl': running several graphs over one actor set is not supported yet; cgc --emit=ir,schedule checks the set and writes its schedules}}
  auto prompts = g.input<std::vector<std::string>>();
  auto r0 = g.actor<Rollout>("rollout0"); // the set's rollout0, built with 0, on its GPU
  auto r1 = g.actor<Rollout>("rollout1");
  g.output(r0.bind<&Rollout::generate>(prompts), r1.bind<&Rollout::generate>(prompts));
}

CG_GRAPH_OVER(rl) void train(cg::GraphBuilder& g) {  // expected-error {{graph 'train' runs over actor set 'rl': running several graphs over one actor set is not supported yet; cgc --emit=ir,schedule checks the set and writes its schedules}}
  g.output(g.actor<Trainer>("trainer").bind<&Trainer::step>(g.input<std::vector<float>>()));
}

// The trainer's weights to every rollout; the version given again, equal to the set's.
CG_GRAPH_OVER(rl) void sync(cg::GraphBuilder& g) {  // expected-error {{graph 'sync' runs over actor set 'rl': running several graphs over one actor set is not supported yet; cgc --emit=ir,schedule checks the set and writes its schedules}}
  auto weights = g.actor<Trainer>("trainer", 0.001).bind<&Trainer::weights>(g.input<int>());
  g.output(g.actor<Rollout>("rollout0", 0).bind<&Rollout::load>(weights),
           g.actor<Rollout>("rollout1").gpus(1).bind<&Rollout::load>(weights));
}
