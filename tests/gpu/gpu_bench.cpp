// gpu_bench.cpp - device tensor transports beside cudaMemcpy, measured in the same run.
//
//   build/tests/bench/gpu_bench [--quick]
//
// Two rows, each a median of many repetitions:
//   - host -> GPU bandwidth of a 64 MiB float32 tensor given to execute() and
//     delivered on an actor's GPU (with_tensor_transport(cg::device::cuda):
//     one copy into shared memory, one cudaMemcpy from there), beside a plain
//     cudaMemcpy of the same size from pageable host memory in this process;
//   - the latency of a 16-byte CUDA tensor's hop from one GPU actor to
//     another through host memory (execute() to get()), beside a cudaMemcpy
//     device -> host -> device of the same size.
// Without a CUDA device it says so and exits 0: there is nothing to compare.
#include "gpu_bench_graphs.cg.hpp"

#include "tensor/cuda_memory.hpp"
#include <cg/device.hpp>
#include <cg/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median_micros(int iterations, const std::function<void()>& body) {
  for (int i = 0; i < std::max(3, iterations / 10); ++i)
    body();
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    body();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

void row(const char* name, double ours, const char* baseline, double theirs, const char* unit,
         bool higher_is_better) {
  double ratio = higher_is_better ? ours / theirs : theirs / ours;
  std::printf("%-34s %10.2f %-6s | %-34s %10.2f %-6s | %.2fx of the baseline\n", name, ours, unit,
              baseline, theirs, unit, ratio);
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (!cg::built_with_cuda() || cg::cuda_device_count() == 0) {
    std::printf("gpu_bench: no CUDA device (runtime built with CUDA: %s); nothing to measure\n",
                cg::built_with_cuda() ? "yes" : "no");
    return 0;
  }
  const int iterations = quick ? 10 : 50;

  // Host -> GPU, 64 MiB.
  constexpr std::int64_t kBytes = 64 << 20;
  cg::Tensor host = cg::Tensor::zeros(cg::DType::float32, {kBytes / 4});
  double ours = 0;
  {
    cg::LaunchOptions options;
    options.slot_bytes = 1 << 20; // the 64 MiB go through the overflow buffer
    options.max_in_flight = 2;
    auto graph = cg::launch<&host_to_gpu>(options);
    ours = median_micros(iterations, [&] { (void)graph.execute(host).get(); });
  }
  void* device = cg::detail::cuda_allocate(kBytes, 0);
  double memcpy_micros =
      median_micros(iterations, [&] { cg::detail::cuda_copy(device, host.data_ptr(), kBytes); });
  cg::detail::cuda_free(device, 0);
  auto gbps = [](double micros) { return static_cast<double>(kBytes) / micros / 1e3; };
  row("host -> GPU 64 MiB (execute..get)", gbps(ours), "cudaMemcpy H2D 64 MiB", gbps(memcpy_micros),
      "GB/s", true);

  // A 16-byte tensor's hop GPU -> GPU through the host.
  {
    auto graph = cg::launch<&gpu_hop>();
    double hop = median_micros(iterations * 20, [&] { (void)graph.execute(4).get(); });
    void* a = cg::detail::cuda_allocate(16, 0);
    void* b = cg::detail::cuda_allocate(16, 0);
    float bounce[4] = {};
    double copies = median_micros(iterations * 20, [&] {
      cg::detail::cuda_copy(bounce, a, 16);
      cg::detail::cuda_copy(b, bounce, 16);
    });
    cg::detail::cuda_free(a, 0);
    cg::detail::cuda_free(b, 0);
    row("GPU hop of 16 B (execute..get)", hop, "cudaMemcpy D2H + H2D 16 B", copies, "us", false);
  }
  return 0;
}
