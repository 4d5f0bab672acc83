// NCCL and collectives schedule fine (cgc --emit=ir,schedule,schedule-json,dot)
// but this build has no GPU runtime to generate the program for: each is an
// error at its bind, never silently shared memory.
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
  auto ga = a.bind<&Worker::grad>(in).with_tensor_transport(cg::transport::nccl);  // expected-error {{transport nccl of 'a.grad' needs the GPU runtime, which this build does not have yet; cgc --emit=ir,schedule,schedule-json,dot still shows its schedule}}
  auto gb = b.bind<&Worker::grad>(in);
  auto sums = cg::allreduce(g, {ga, gb}, cg::ReduceOp::sum);  // expected-error {{allreduce needs the GPU runtime, which this build does not have yet; cgc --emit=ir,schedule,schedule-json,dot still shows its schedule}}
  g.output(b.bind<&Worker::apply>(ga), sums[0], sums[1]);
}
