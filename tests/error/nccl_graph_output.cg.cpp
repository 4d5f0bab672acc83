// The driver takes part in no NCCL group: an output cannot leave over nccl.
// cgc-args: --emit=ir,schedule
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> step(std::vector<float> x) { return x; }
};

CG_GRAPH void gpu_output(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b");
  auto x = a.bind<&Worker::step>(g.input<std::vector<float>>())  // expected-error {{the result of 'a.step' is a graph output, so it cannot use transport nccl: the driver takes part in no NCCL group}}
               .with_tensor_transport(cg::transport::nccl);
  g.output(b.bind<&Worker::step>(x), x);
}
