// device_graphs.cg.cpp - GPU placement and device tensor transports for the end-to-end tests.
//
// `.gpus(n)` gives an actor process its own CUDA_VISIBLE_DEVICES, which the
// tests read back through a method; `with_tensor_transport(cg::device::...)`
// delivers tensors in host or GPU memory. Every graph here also runs on a
// machine without a GPU: the tests check what happens there.
#include "gpu_work.hpp"

#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

struct CG_ACTOR Placed {
  // The CUDA_VISIBLE_DEVICES this actor runs with, "<unset>" when it has none.
  std::string visible(int) {
    const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
    return value ? value : "<unset>";
  }
};

// Device-transport helpers: tensors made in host memory, read back from
// wherever they arrive.
struct CG_ACTOR DeviceWorker {
  // [first, first + 1, ..., first + n - 1] as float32, in host memory.
  cg::Tensor ramp(int n) {
    cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
    for (int i = 0; i < n; ++i)
      t.data<float>()[i] = static_cast<float>(n + i);
    return t;
  }
  // The same on this process's first GPU (in host memory without one).
  cg::Tensor ramp_on_gpu(int n) {
    cg::Tensor t = ramp(n);
    return cg::cuda_device_count() > 0 ? t.to(cg::device::cuda) : t;
  }
  // "cuda:0 [1, 2, 3]": where the tensor arrived and its elements.
  std::string where(cg::Tensor t) {
    std::string out = cg::to_string(t.device()) + " [";
    cg::Tensor host = t.to(cg::device::cpu);
    for (std::int64_t i = 0; i < host.numel(); ++i)
      out += (i ? ", " : "") + std::to_string(static_cast<int>(host.data<float>()[i]));
    return out + "]";
  }
  // "cuda:0 4194304 elements, sum 2097152000": where a large tensor arrived,
  // its size and the sum of its elements (exact in double for integers).
  std::string summed(cg::Tensor t) {
    cg::Tensor host = t.to(cg::device::cpu);
    double sum = 0;
    for (std::int64_t i = 0; i < host.numel(); ++i)
      sum += host.data<float>()[i];
    return cg::to_string(t.device()) + " " + std::to_string(host.numel()) + " elements, sum " +
           std::to_string(static_cast<std::int64_t>(sum));
  }
  // A rank's contribution to a collective, in host memory: element i is
  // (rank + 1) * 10^i, so that sums show who gave what.
  cg::Tensor contribution(int n, int rank) {
    cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
    float unit = 1;
    for (int i = 0; i < n; ++i, unit *= 10)
      t.data<float>()[i] = static_cast<float>(rank + 1) * unit;
    return t;
  }
  // The tensor, back in host memory, each element doubled.
  cg::Tensor twice(cg::Tensor t) {
    cg::Tensor host = t.to(cg::device::cpu);
    cg::Tensor out = cg::Tensor::empty(host.dtype(), host.shape());
    for (std::int64_t i = 0; i < host.numel(); ++i)
      out.data<float>()[i] = 2 * host.data<float>()[i];
    return out;
  }
};

// An actor whose method queues GPU work and returns at once, as one that
// launches kernels does.
struct CG_ACTOR Stepper {
  // Queues a 5 ms step on the GPU; returns the steps done before it.
  std::int64_t step(std::int64_t) { return gpu_work::queue_step(5); }
};

// s.gpus(1) steps once per execution: it may run ahead of its GPU by
// max_in_flight executions, no more.
CG_GRAPH void gpu_steps(cg::GraphBuilder& g) {
  auto s = g.actor<Stepper>("s").gpus(1);
  g.output(s.bind<&Stepper::step>(g.input<std::int64_t>()));
}

// a.gpus(1), b.gpus(2), c without, d.gpus(1): each reports its devices.
CG_GRAPH void gpu_placement(cg::GraphBuilder& g) {
  auto a = g.actor<Placed>("a").gpus(1);
  auto b = g.actor<Placed>("b").gpus(2);
  auto c = g.actor<Placed>("c");
  auto d = g.actor<Placed>("d").gpus(1);
  auto in = g.input<int>();
  g.output(a.bind<&Placed::visible>(in), b.bind<&Placed::visible>(in), c.bind<&Placed::visible>(in),
           d.bind<&Placed::visible>(in));
}

// p.ramp --cpu--> q.where, and to the driver.
CG_GRAPH void to_cpu(cg::GraphBuilder& g) {
  auto p = g.actor<DeviceWorker>("p");
  auto q = g.actor<DeviceWorker>("q");
  auto n = g.input<int>();
  auto t = p.bind<&DeviceWorker::ramp>(n).with_tensor_transport(cg::device::cpu);
  g.output(q.bind<&DeviceWorker::where>(t), t);
}

// The driver's tensor delivered on q's GPU.
CG_GRAPH void to_cuda(cg::GraphBuilder& g) {
  auto q = g.actor<DeviceWorker>("q").gpus(1);
  auto t = g.input<cg::Tensor>().with_tensor_transport(cg::device::cuda);
  g.output(q.bind<&DeviceWorker::where>(t));
}

// The same for tensors larger than a slot: they arrive in overflow buffers,
// which q pins for the copy to its GPU.
CG_GRAPH void large_to_cuda(cg::GraphBuilder& g) {
  auto q = g.actor<DeviceWorker>("q").gpus(1);
  auto t = g.input<cg::Tensor>().with_tensor_transport(cg::device::cuda);
  g.output(q.bind<&DeviceWorker::summed>(t));
}

// A large tensor from q's GPU to the driver's host memory: copied from the
// GPU straight into the overflow buffers q's writer pins.
CG_GRAPH void large_from_cuda(cg::GraphBuilder& g) {
  auto q = g.actor<DeviceWorker>("q").gpus(1);
  auto t = q.bind<&DeviceWorker::ramp_on_gpu>(g.input<int>());
  g.output(t.with_tensor_transport(cg::device::cpu));
}

// One rank, one GPU: an allreduce (over NCCL when launched with
// cg::CommunicatorKind::nccl), its result brought back to host memory.
CG_GRAPH void single_rank_allreduce(cg::GraphBuilder& g) {
  auto w = g.actor<DeviceWorker>("w").gpus(1);
  auto n = g.input<int>();
  auto sums = cg::allreduce(g, {w.bind<&DeviceWorker::ramp>(n)}, cg::ReduceOp::sum);
  g.output(sums[0].with_tensor_transport(cg::device::cpu));
}

// Two ranks, on two GPUs or sharing one: a.ramp --nccl--> b.twice, back to
// the driver in host memory (twice copies to the host itself).
CG_GRAPH void two_gpu_pipeline(cg::GraphBuilder& g) {
  auto a = g.actor<DeviceWorker>("a").gpus(1);
  auto b = g.actor<DeviceWorker>("b").gpus(1);
  auto t = a.bind<&DeviceWorker::ramp>(g.input<int>()).with_tensor_transport(cg::transport::nccl);
  g.output(b.bind<&DeviceWorker::twice>(t));
}

// The collectives over three ranks, one after the other: allreduce sum,
// allgather of the (partly doubled) sums, reducescatter sum of that; each
// result back in host memory.
CG_GRAPH void three_rank_collectives(cg::GraphBuilder& g) {
  auto w0 = g.actor<DeviceWorker>("w0").gpus(1);
  auto w1 = g.actor<DeviceWorker>("w1").gpus(1);
  auto w2 = g.actor<DeviceWorker>("w2").gpus(1);
  auto n = g.input<int>();
  auto sums = cg::allreduce(g,
                            {w0.bind<&DeviceWorker::contribution>(n, 0),
                             w1.bind<&DeviceWorker::contribution>(n, 1),
                             w2.bind<&DeviceWorker::contribution>(n, 2)},
                            cg::ReduceOp::sum);
  auto gathered = cg::allgather(
      g, {w0.bind<&DeviceWorker::twice>(sums[0]), w1.bind<&DeviceWorker::twice>(sums[1]), sums[2]});
  auto scattered = cg::reducescatter(g, {gathered[0], gathered[1], gathered[2]}, cg::ReduceOp::sum);
  g.output(sums[0].with_tensor_transport(cg::device::cpu),
           gathered[1].with_tensor_transport(cg::device::cpu),
           scattered[0].with_tensor_transport(cg::device::cpu),
           scattered[1].with_tensor_transport(cg::device::cpu),
           scattered[2].with_tensor_transport(cg::device::cpu));
}

// One rank's tensor sent to the two others over NCCL (the graph's
// broadcast): each reports where it arrived and its elements.
CG_GRAPH void nccl_broadcast(cg::GraphBuilder& g) {
  auto w0 = g.actor<DeviceWorker>("w0").gpus(1);
  auto w1 = g.actor<DeviceWorker>("w1").gpus(1);
  auto w2 = g.actor<DeviceWorker>("w2").gpus(1);
  auto t = w0.bind<&DeviceWorker::ramp>(g.input<int>()).with_tensor_transport(cg::transport::nccl);
  g.output(w1.bind<&DeviceWorker::where>(t), w2.bind<&DeviceWorker::where>(t));
}
