// overlap_nccl.cg.cpp - the overlap example over NCCL between two ranks on one GPU: a sender and a
// receiver that multiplies each tensor it gets, and a two-stage pipeline.
//
// Each tensor is 5792 x 5792 float16 (64 MiB). With two ranks on one GPU
// NCCL moves it through its socket transport (the ranks get host identities
// of their own: CG_NCCL_SHARE_GPUS=1, which overlap_nccl_app.cpp sets), slow
// enough that a transfer takes about as long as a few dozen products of the
// tensor with itself; the program picks how many (`products`).
//
// Built twice (CMakeLists.txt): as is, and with cgc
// --overlap-gpu-communication, which moves the receiver's READs ahead of its
// products and has each receive run on the communicator's stream while the
// GPU multiplies (the products of a tensor wait for its own receive only).
#include "gpu_math.hpp"

#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

// What the receiver says of each tensor: its element (0, 0), shape and dtype.
struct Arrived {
  float first = 0;
  std::vector<std::int64_t> shape;
  std::string dtype;
};

struct CG_ACTOR NcclWorker {
  explicit NcclWorker(std::int64_t n) : n_(n) {}

  // An n x n float16 tensor of `value`s on this actor's GPU.
  cg::Tensor make(int value) { return overlap::filled(n_, static_cast<float>(value)); }

  // The first stage of the pipeline: `products` products of its own, then
  // the tensor of `value`s it passes on (sent once the products are done).
  cg::Tensor produce(int value, int products) {
    cg::Tensor t = make(value);
    multiply(t, products);
    return t;
  }

  // Reads element (0, 0) of `t` first (the host waits for the tensor and for
  // the products queued before it), then queues `products` products of `t`
  // and returns: the next receive is posted while they run. `settle` waits
  // for them too, so that an execution ends with its GPU work.
  Arrived consume(cg::Tensor t, int products, bool settle) {
    Arrived arrived{overlap::first_element(t), t.shape(), std::string(cg::to_string(t.dtype()))};
    multiply(t, products);
    if (settle && product_.defined())
      (void)overlap::first_element(product_);
    return arrived;
  }

private:
  void multiply(const cg::Tensor& t, int products) {
    if (products > 0 && !product_.defined())
      product_ = cg::Tensor::empty(t.dtype(), t.shape(), t.device());
    for (int i = 0; i < products; ++i)
      overlap::square(t, product_);
  }

  std::int64_t n_;
  cg::Tensor product_; // reused: one n x n buffer
};

// One execution: four tensors from the sender, each multiplied `products`
// times by the receiver as it arrives.
CG_GRAPH void nccl_overlap_graph(cg::GraphBuilder& g) {
  constexpr std::int64_t n = 5792;
  auto sender = g.actor<NcclWorker>("sender", n);
  auto receiver = g.actor<NcclWorker>("receiver", n);
  auto value = g.input<int>();
  auto products = g.input<int>();
  auto t0 = sender.bind<&NcclWorker::make>(value).with_tensor_transport(cg::transport::nccl);
  auto t1 = sender.bind<&NcclWorker::make>(value).with_tensor_transport(cg::transport::nccl);
  auto t2 = sender.bind<&NcclWorker::make>(value).with_tensor_transport(cg::transport::nccl);
  auto t3 = sender.bind<&NcclWorker::make>(value).with_tensor_transport(cg::transport::nccl);
  g.output(receiver.bind<&NcclWorker::consume>(t0, products, false),
           receiver.bind<&NcclWorker::consume>(t1, products, false),
           receiver.bind<&NcclWorker::consume>(t2, products, false),
           receiver.bind<&NcclWorker::consume>(t3, products, true));
}

// Two stages, several executions in flight: the first multiplies and sends,
// the second receives and multiplies; overlapped, the second receives
// execution i + 1 while it multiplies execution i.
CG_GRAPH void nccl_pipeline_graph(cg::GraphBuilder& g) {
  constexpr std::int64_t n = 5792;
  auto first = g.actor<NcclWorker>("first", n);
  auto second = g.actor<NcclWorker>("second", n);
  auto value = g.input<int>();
  auto products = g.input<int>();
  auto t =
      first.bind<&NcclWorker::produce>(value, products).with_tensor_transport(cg::transport::nccl);
  g.output(second.bind<&NcclWorker::consume>(t, products, false));
}
