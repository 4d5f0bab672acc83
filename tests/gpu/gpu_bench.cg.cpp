// gpu_bench.cg.cpp - graphs timed by gpu_bench: tensors delivered on a GPU.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>

struct CG_ACTOR GpuSide {
  // Touches nothing: the time is the transport's.
  std::int64_t bytes(cg::Tensor t) { return static_cast<std::int64_t>(t.nbytes()); }
  // `n` float32 zeros on this actor's GPU: the same tensor each time, so that
  // the time is the transport's (a fresh one costs an allocation and a kernel).
  cg::Tensor small(int n) {
    if (!small_.defined() || small_.numel() != n)
      small_ = cg::Tensor::zeros(cg::DType::float32, {n}, cg::device::cuda);
    return small_;
  }

private:
  cg::Tensor small_;
};

struct CG_ACTOR GpuSource {
  // `n` float32 zeros on this actor's GPU, the same tensor each time.
  cg::Tensor large(std::int64_t n) {
    if (!large_.defined() || large_.numel() != n)
      large_ = cg::Tensor::zeros(cg::DType::float32, {n}, cg::device::cuda);
    return large_;
  }

private:
  cg::Tensor large_;
};

// driver (host tensor) -> shm -> g's GPU: one host copy, one host-to-device copy.
CG_GRAPH void host_to_gpu(cg::GraphBuilder& g) {
  auto gpu = g.actor<GpuSide>("gpu").gpus(1);
  auto t = g.input<cg::Tensor>().with_tensor_transport(cg::device::cuda);
  g.output(gpu.bind<&GpuSide::bytes>(t));
}

// g's GPU -> shm (a pinned overflow buffer) -> the driver's host memory: one
// device-to-host copy, one host copy.
CG_GRAPH void gpu_to_host(cg::GraphBuilder& g) {
  auto gpu = g.actor<GpuSource>("gpu").gpus(1);
  auto t = gpu.bind<&GpuSource::large>(g.input<std::int64_t>());
  g.output(t.with_tensor_transport(cg::device::cpu));
}

// a's GPU -> host -> shm -> b's GPU: a small tensor's hop between two GPU
// actors (both on the first GPU, so one GPU is enough).
CG_GRAPH void gpu_hop(cg::GraphBuilder& g) {
  auto a = g.actor<GpuSide>("a");
  auto b = g.actor<GpuSide>("b");
  auto t = a.bind<&GpuSide::small>(g.input<int>()).with_tensor_transport(cg::device::cuda);
  g.output(b.bind<&GpuSide::bytes>(t));
}

// a's GPU -> CUDA IPC -> b's GPU: the same hop without the host.
CG_GRAPH void ipc_hop(cg::GraphBuilder& g) {
  auto a = g.actor<GpuSide>("a");
  auto b = g.actor<GpuSide>("b");
  auto t = a.bind<&GpuSide::small>(g.input<int>()).with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&GpuSide::bytes>(t));
}

// One rank's allreduce (over NCCL when launched with cg::CommunicatorKind::nccl).
CG_GRAPH void one_rank_allreduce(cg::GraphBuilder& g) {
  auto a = g.actor<GpuSide>("a");
  auto sums = cg::allreduce(g, {a.bind<&GpuSide::small>(g.input<int>())}, cg::ReduceOp::sum);
  g.output(a.bind<&GpuSide::bytes>(sums[0]));
}
