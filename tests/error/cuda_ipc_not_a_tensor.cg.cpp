// Only cg::Tensor values travel over cuda_ipc (their elements in device
// memory, their dtype and shape beside them): anything else is an error at its bind.
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> step(std::vector<float> x) { return x; }
};

CG_GRAPH void not_a_tensor(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b");
  auto x = a.bind<&Worker::step>(g.input<std::vector<float>>())  // expected-error {{the result of 'a.step' is a 'std::vector<float>', so it cannot use transport cuda_ipc: only cg::Tensor values travel over cuda_ipc}}
               .with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Worker::step>(x));
}
