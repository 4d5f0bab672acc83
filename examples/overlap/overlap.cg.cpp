// overlap.cg.cpp - Ray Compiled Graph's overlap example: three senders, one receiver that
// multiplies each tensor it gets (a square float16 matrix, 10000 x 10000 by default).
//
// The tensors go GPU to GPU over CUDA IPC (on a one-GPU machine every actor
// shares it; NCCL would refuse two ranks on one GPU). Built twice
// (CMakeLists.txt): as is, and with cgc --overlap-gpu-communication, which
// moves the receiver's second and third READs ahead of its first product
// (schedule.txt marks them [moved]) and has the receiver copy on its
// communication stream while the GPU multiplies.
#include "gpu_math.hpp"

#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

// What the receiver says of each tensor: its element (0, 0), shape and dtype.
struct Received {
  float first = 0;
  std::vector<std::int64_t> shape;
  std::string dtype;
};

struct CG_ACTOR TensorWorker {
  explicit TensorWorker(std::int64_t n) : n_(n) {}

  // An n x n float16 tensor of `value`s on this actor's GPU.
  cg::Tensor send(int value) { return overlap::filled(n_, static_cast<float>(value)); }

  // Receives a tensor and does some expensive computation with it.
  Received recv_and_matmul(cg::Tensor t) {
    if (!product_.defined())
      product_ = cg::Tensor::empty(t.dtype(), t.shape(), t.device());
    overlap::square(t, product_);
    return {overlap::first_element(t), t.shape(), std::string(cg::to_string(t.dtype()))};
  }

private:
  std::int64_t n_;
  cg::Tensor product_; // reused: one n x n buffer
};

CG_GRAPH void overlap_graph(cg::GraphBuilder& g) {
  constexpr std::int64_t n = 10000;
  auto receiver = g.actor<TensorWorker>("receiver", n);
  auto value = g.input<int>();
  auto s0 = g.actor<TensorWorker>("s0", n);
  auto s1 = g.actor<TensorWorker>("s1", n);
  auto s2 = g.actor<TensorWorker>("s2", n);
  auto t0 = s0.bind<&TensorWorker::send>(value).with_tensor_transport(cg::transport::cuda_ipc);
  auto t1 = s1.bind<&TensorWorker::send>(value).with_tensor_transport(cg::transport::cuda_ipc);
  auto t2 = s2.bind<&TensorWorker::send>(value).with_tensor_transport(cg::transport::cuda_ipc);
  g.output(receiver.bind<&TensorWorker::recv_and_matmul>(t0),
           receiver.bind<&TensorWorker::recv_and_matmul>(t1),
           receiver.bind<&TensorWorker::recv_and_matmul>(t2));
}
