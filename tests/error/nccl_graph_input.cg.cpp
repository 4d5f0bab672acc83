// The driver takes part in no NCCL group: an input cannot arrive over nccl.
// cgc-args: --emit=ir,schedule
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> step(std::vector<float> x) { return x; }
};

CG_GRAPH void gpu_input(cg::GraphBuilder& g) {
  auto w = g.actor<Worker>("w");
  auto in = g.input<std::vector<float>>().with_tensor_transport(cg::transport::nccl);  // expected-error {{graph input #0 cannot use transport nccl: the driver takes part in no NCCL group; send it over nccl from the first actor that reads it}}
  g.output(w.bind<&Worker::step>(in));
}
