// A collective's ranks run on actors: a graph input has none.
// cgc-args: --emit=ir,schedule
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> grad(std::vector<float> x) { return x; }
};

CG_GRAPH void from_driver(cg::GraphBuilder& g) {
  auto a = g.actor<Worker>("a");
  auto in = g.input<std::vector<float>>();
  auto ga = a.bind<&Worker::grad>(in);
  auto gathered = cg::allgather(g, {in, ga});  // expected-error {{rank 0 of the allgather is graph input #0; each rank runs on the actor that produced its value, so pass a task's result}}
  g.output(gathered[0], gathered[1]);
}
