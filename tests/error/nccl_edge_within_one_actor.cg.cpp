// NCCL between two tasks of one actor: the send would wait for a receive the
// same actor only reaches after it, a cycle. (Reported before the missing
// GPU runtime: it is wrong whatever the runtime.)
#include <cg/cg.hpp>

#include <vector>

struct CG_ACTOR Worker {
  std::vector<float> forward(int step) { return std::vector<float>(4, float(step)); }
  std::vector<float> backward(std::vector<float> grad) { return grad; }
};

CG_GRAPH void same_actor(cg::GraphBuilder& g) {
  auto w = g.actor<Worker>("w");
  auto activations = w.bind<&Worker::forward>(g.input<int>())  // expected-note {{'w.forward' sends its result over nccl here; remove with_tensor_transport(cg::transport::nccl) or bind 'w.backward' on another actor}}
                         .with_tensor_transport(cg::transport::nccl);
  g.output(w.bind<&Worker::backward>(activations));  // expected-error {{nccl edge within actor 'w': 'w.backward' receives the result of 'w.forward' from its own actor, so the send would wait for a receive that 'w' reaches only after it (a cycle)}}
}
