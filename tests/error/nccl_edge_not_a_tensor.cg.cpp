// Only cg::Tensor values travel over nccl (their elements go through a
// communicator, their dtype and shape beside them), and collectives take
// cg::Tensor values: anything else is an error at its bind.
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> grad(int step) { return std::vector<float>(4, float(step)); }
  std::vector<float> apply(std::vector<float> g) { return g; }
};

CG_GRAPH void data_parallel(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b");
  auto in = g.input<int>();
  auto ga = a.bind<&Worker::grad>(in).with_tensor_transport(cg::transport::nccl);  // expected-error {{the result of 'a.grad' is a 'std::vector<float>', so it cannot use transport nccl: only cg::Tensor values travel over nccl}}
  auto gb = b.bind<&Worker::grad>(in);
  auto sums = cg::allreduce(g, {ga, gb}, cg::ReduceOp::sum);  // expected-error {{allreduce of 'std::vector<float>' values: a collective takes cg::Tensor values}}
  g.output(b.bind<&Worker::apply>(ga), sums[0], sums[1]);
}
