// gpu_graphs.cg.cpp - graphs with NCCL edges and collectives for the end-to-end tests.
//
// On a machine without GPUs (and in these tests) their tensors move through
// the host communicator: the same schedules, synchronous groups and error
// handling as over NCCL, with host tensors.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

// A float32 tensor of `n` elements: first, first + step, ...
inline cg::Tensor ramp(std::int64_t n, float first, float step) {
  cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
  for (std::int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = first + step * static_cast<float>(i);
  return t;
}

inline cg::Tensor scaled(const cg::Tensor& t, float factor) {
  cg::Tensor out = cg::Tensor::empty(t.dtype(), t.shape());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    out.data<float>()[i] = t.data<float>()[i] * factor;
  return out;
}

struct CG_ACTOR TensorWorker {
  // [n, n + 1, ..., 2n - 1]; a negative n throws.
  cg::Tensor make(int n) {
    if (n < 0)
      throw std::invalid_argument("cannot make a tensor of " + std::to_string(n) + " elements");
    return ramp(n, static_cast<float>(n), 1);
  }
  cg::Tensor twice(cg::Tensor t) { return scaled(t, 2); }
  cg::Tensor add3(cg::Tensor x, cg::Tensor y, cg::Tensor z) {
    cg::Tensor out = scaled(x, 1);
    for (std::int64_t i = 0; i < out.numel(); ++i)
      out.data<float>()[i] += y.data<float>()[i] + z.data<float>()[i];
    return out;
  }
  // A rank's contribution to a collective: element i is (rank + 1) * 10^i,
  // so that sums show who gave what. A negative n makes rank -n - 1 throw
  // and the others give 2 elements.
  cg::Tensor contribution(int n, int rank) {
    if (n == -rank - 1)
      throw std::runtime_error("rank " + std::to_string(rank) + " has no contribution");
    if (n < 0)
      n = 2;
    cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
    float unit = 1;
    for (int i = 0; i < n; ++i, unit *= 10)
      t.data<float>()[i] = static_cast<float>(rank + 1) * unit;
    return t;
  }
};

// Pipeline-parallel training stage: forward adds the stage's weight,
// backward multiplies by it (stand-ins whose results show the path taken).
struct CG_ACTOR Stage {
  explicit Stage(float weight) : weight(weight) {}
  cg::Tensor first(int microbatch) { return ramp(2, static_cast<float>(microbatch), 1); }
  cg::Tensor forward(cg::Tensor x) {
    cg::Tensor out = scaled(x, 1);
    for (std::int64_t i = 0; i < out.numel(); ++i)
      out.data<float>()[i] += weight;
    return out;
  }
  cg::Tensor backward(cg::Tensor grad) { return scaled(grad, weight); }
  float weight;
};

// a.make --nccl--> b.twice --> driver.
CG_GRAPH void nccl_pipeline(cg::GraphBuilder& g) {
  auto a = g.actor<TensorWorker>("a");
  auto b = g.actor<TensorWorker>("b");
  auto n = g.input<int>();
  auto t = a.bind<&TensorWorker::make>(n).with_tensor_transport(cg::transport::nccl);
  g.output(b.bind<&TensorWorker::twice>(t));
}

// Ray's 1F1B example: two stages, two microbatches, activations and
// gradients over nccl; stage w1 computes the loss gradient (backward of its
// own forward).
CG_GRAPH void one_f_one_b(cg::GraphBuilder& g) {
  auto w0 = g.actor<Stage>("w0", 1.0f);
  auto w1 = g.actor<Stage>("w1", 3.0f);
  auto [mb0, mb1] = g.input<int, int>();
  auto f00 = w0.bind<&Stage::forward>(w0.bind<&Stage::first>(mb0));
  auto f01 = w0.bind<&Stage::forward>(w0.bind<&Stage::first>(mb1));
  auto f10 = w1.bind<&Stage::forward>(f00.with_tensor_transport(cg::transport::nccl));
  auto f11 = w1.bind<&Stage::forward>(f01.with_tensor_transport(cg::transport::nccl));
  auto b10 = w1.bind<&Stage::backward>(f10).with_tensor_transport(cg::transport::nccl);
  auto b11 = w1.bind<&Stage::backward>(f11).with_tensor_transport(cg::transport::nccl);
  g.output(w0.bind<&Stage::backward>(b10), w0.bind<&Stage::backward>(b11));
}

// The seed's overlap example: three senders, one receiver, all over nccl.
CG_GRAPH void three_senders(cg::GraphBuilder& g) {
  auto s0 = g.actor<TensorWorker>("s0");
  auto s1 = g.actor<TensorWorker>("s1");
  auto s2 = g.actor<TensorWorker>("s2");
  auto r = g.actor<TensorWorker>("r");
  auto n = g.input<int>();
  auto x = s0.bind<&TensorWorker::contribution>(n, 0).with_tensor_transport(cg::transport::nccl);
  auto y = s1.bind<&TensorWorker::contribution>(n, 1).with_tensor_transport(cg::transport::nccl);
  auto z = s2.bind<&TensorWorker::contribution>(n, 2).with_tensor_transport(cg::transport::nccl);
  g.output(r.bind<&TensorWorker::add3>(x, y, z));
}

// The three collectives over three ranks, one after the other: allreduce
// sum, then allgather of the (partly doubled) sums, then reducescatter sum.
CG_GRAPH void collectives(cg::GraphBuilder& g) {
  auto w0 = g.actor<TensorWorker>("w0");
  auto w1 = g.actor<TensorWorker>("w1");
  auto w2 = g.actor<TensorWorker>("w2");
  auto n = g.input<int>();
  auto sums = cg::allreduce(g,
                            {w0.bind<&TensorWorker::contribution>(n, 0),
                             w1.bind<&TensorWorker::contribution>(n, 1),
                             w2.bind<&TensorWorker::contribution>(n, 2)},
                            cg::ReduceOp::sum);
  auto gathered = cg::allgather(
      g, {w0.bind<&TensorWorker::twice>(sums[0]), w1.bind<&TensorWorker::twice>(sums[1]), sums[2]});
  auto scattered = cg::reducescatter(g, {gathered[0], gathered[1], gathered[2]}, cg::ReduceOp::sum);
  g.output(sums[0], gathered[1], scattered[0], scattered[1], scattered[2]);
}

// A collective whose rank w0 is fed by another actor, x: with x gone, w1 and
// w2 wait in the allreduce for w0 until the graph stops.
CG_GRAPH void fed_collective(cg::GraphBuilder& g) {
  auto x = g.actor<TensorWorker>("x");
  auto w0 = g.actor<TensorWorker>("w0");
  auto w1 = g.actor<TensorWorker>("w1");
  auto w2 = g.actor<TensorWorker>("w2");
  auto n = g.input<int>();
  auto sums = cg::allreduce(
      g,
      {w0.bind<&TensorWorker::twice>(x.bind<&TensorWorker::contribution>(n, 0)),
       w1.bind<&TensorWorker::contribution>(n, 1), w2.bind<&TensorWorker::contribution>(n, 2)},
      cg::ReduceOp::sum);
  g.output(sums[0], sums[1], sums[2]);
}
