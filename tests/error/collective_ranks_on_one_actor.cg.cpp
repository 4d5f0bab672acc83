// Each rank of a collective runs on the actor that produced its value, so
// two values of one actor would put two ranks on one process.
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> grad(int step) { return std::vector<float>(4, float(step)); }
};

CG_GRAPH void two_ranks(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto b = g.actor<Worker>("b");
  auto in = g.input<int>();
  auto ga = a.bind<&Worker::grad>(in);
  auto gb = b.bind<&Worker::grad>(in);
  auto again = a.bind<&Worker::grad>(in);
  auto sums = cg::allreduce(g, {ga, gb, again}, cg::ReduceOp::sum);  // expected-error {{ranks 0 and 2 of the allreduce both run on actor 'a', which produced both values; a collective needs one actor per rank}}
  g.output(sums[0], sums[1], sums[2]);
}
