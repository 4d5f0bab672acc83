// CUDA IPC carries cg::Tensor values between actors of the driver's host.
// cgc-args: --emit=ir,schedule
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> step(std::vector<float> x) { return x; }
  cg::Tensor tensor(cg::Tensor t) { return t; }
};

CG_GRAPH void from_the_driver(cg::GraphBuilder& g) {  // expected-error {{graph input #0 cannot use transport cuda_ipc: the driver reads and writes host memory only; deliver it with cg::device::cuda or cg::device::cpu instead}}
  auto a = g.actor<Worker>("a");
  auto in = g.input<cg::Tensor>().with_tensor_transport(cg::transport::cuda_ipc);
  g.output(a.bind<&Worker::tensor>(in));
}

CG_GRAPH void to_the_driver(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b");
  auto t = a.bind<&Worker::tensor>(g.input<cg::Tensor>())  // expected-error {{the result of 'a.tensor' is a graph output, so it cannot use transport cuda_ipc: the driver reads and writes host memory only; deliver it with cg::device::cuda or cg::device::cpu instead}}
               .with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Worker::tensor>(t), t);
}

CG_GRAPH void across_hosts(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b").host(1);
  auto t = a.bind<&Worker::tensor>(g.input<cg::Tensor>())
               .with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Worker::tensor>(t));  // expected-error {{'b.tensor' reads the result of 'a.tensor' over cuda_ipc, but they run on hosts 1 and 0: CUDA IPC connects actors of one host; use transport nccl between hosts}}
}
