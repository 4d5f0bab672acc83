// Only cg::Tensor values have a device to be delivered on: a task's result or
// a graph input of another type given cg::device::cuda or cg::device::cpu is
// an error, at its bind (at the graph function for an input).
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> grad(int step) { return std::vector<float>(4, float(step)); }
  std::vector<float> apply(std::vector<float> g, int step) { return g; }
};

CG_GRAPH void to_devices(cg::GraphBuilder& g) {  // expected-error {{graph input #0 is a 'int', so it cannot use transport cuda: only cg::Tensor values are delivered on a device}}
  auto a = g.actor<Worker>("a").gpus(1);
  auto b = g.actor<Worker>("b").gpus(1);
  auto in = g.input<int>().with_tensor_transport(cg::device::cuda);
  auto ga = a.bind<&Worker::grad>(in).with_tensor_transport(cg::device::cuda);  // expected-error {{the result of 'a.grad' is a 'std::vector<float>', so it cannot use transport cuda: only cg::Tensor values are delivered on a device}}
  auto gb = b.bind<&Worker::grad>(in).with_tensor_transport(cg::device::cpu);  // expected-error {{the result of 'b.grad' is a 'std::vector<float>', so it cannot use transport cpu: only cg::Tensor values are delivered on a device}}
  g.output(b.bind<&Worker::apply>(ga, 1), a.bind<&Worker::apply>(gb, 2));
}
