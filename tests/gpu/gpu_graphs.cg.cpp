// gpu_graphs.cg.cpp - graphs whose tensors live on GPUs: CUDA IPC edges and device deliveries.
//
// Their tests (gpu_test.cpp) check values on a machine with a CUDA device,
// and without one what each end reports; scripts/gpu-bundle ships them to GPU
// machines. No actor asks for .gpus(n): every actor sees the driver's
// devices and works on the first, so a one-GPU machine runs them all.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpu {

// `n` float32 values start, start + 1, ... on this process's first GPU, or in
// host memory when it has none (so the sending side's errors can be tested
// anywhere).
inline cg::Tensor counting(int n, float start) {
  if (n < 0)
    throw std::invalid_argument("cannot make a tensor of " + std::to_string(n) + " elements");
  cg::Tensor host = cg::Tensor::empty(cg::DType::float32, {n});
  for (int i = 0; i < n; ++i)
    host.data<float>()[i] = start + static_cast<float>(i);
  return cg::cuda_device_count() > 0 ? host.to(cg::device::cuda) : host;
}

} // namespace gpu

struct CG_ACTOR Maker {
  cg::Tensor make(int n) { return gpu::counting(n, static_cast<float>(n)); }
  cg::Tensor nothing(int) { return {}; }
};

struct CG_ACTOR Doubler {
  // Twice each element, in host memory for the driver; insists that the
  // tensor arrived on a GPU.
  cg::Tensor twice(cg::Tensor t) {
    if (!t.defined())
      return t;
    if (t.device().kind != cg::DeviceKind::cuda)
      throw std::logic_error("expected a CUDA tensor, got " + t.describe());
    cg::Tensor host = t.to(cg::device::cpu);
    for (std::int64_t i = 0; i < host.numel(); ++i)
      host.data<float>()[i] *= 2;
    return host;
  }
  std::string where(cg::Tensor t) { return t.defined() ? t.describe() : "undefined"; }
};

// a's GPU -> CUDA IPC -> b's GPU -> host -> driver.
CG_GRAPH void ipc_pipeline(cg::GraphBuilder& g) {
  auto a = g.actor<Maker>("a");
  auto b = g.actor<Doubler>("b");
  auto t = a.bind<&Maker::make>(g.input<int>()).with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Doubler::twice>(t));
}

// One CUDA IPC buffer, two readers in two processes.
CG_GRAPH void ipc_fanout(cg::GraphBuilder& g) {
  auto a = g.actor<Maker>("a");
  auto b = g.actor<Doubler>("b");
  auto c = g.actor<Doubler>("c");
  auto t = a.bind<&Maker::make>(g.input<int>()).with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Doubler::twice>(t), c.bind<&Doubler::where>(t));
}

// An undefined tensor needs no device at either end.
CG_GRAPH void ipc_undefined(cg::GraphBuilder& g) {
  auto a = g.actor<Maker>("a");
  auto b = g.actor<Doubler>("b");
  auto t = a.bind<&Maker::nothing>(g.input<int>()).with_tensor_transport(cg::transport::cuda_ipc);
  g.output(b.bind<&Doubler::where>(t));
}

// Two NCCL ranks on one GPU (neither asks for .gpus(n)): NCCL refuses to
// make such a communicator; launch() must say so, not hang.
CG_GRAPH void nccl_one_gpu(cg::GraphBuilder& g) {
  auto a = g.actor<Maker>("a");
  auto b = g.actor<Doubler>("b");
  auto t = a.bind<&Maker::make>(g.input<int>()).with_tensor_transport(cg::transport::nccl);
  g.output(b.bind<&Doubler::twice>(t));
}
