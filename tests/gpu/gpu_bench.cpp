// gpu_bench.cpp - tensors between GPU actors beside cudaMemcpy, measured in the same run.
//
//   build/tests/gpu/gpu_bench [--quick]      the rows below
//   build/tests/gpu/gpu_bench --count-devices   the CUDA devices the runtime sees
//   build/tests/gpu/gpu_bench --trace-made-in-place FILE
//                                            a Chrome trace of 20 made-in-place
//                                            host -> GPU executions of 64 MiB
//
// Each row is a median of many repetitions, ours beside a baseline:
//   - host -> GPU bandwidth of a 64 MiB float32 tensor given to execute() and
//     delivered on an actor's GPU (with_tensor_transport(cg::device::cuda):
//     one copy into shared memory, one copy from there to the GPU), beside
//     cudaMemcpy of the same size from pinned and from pageable memory;
//   - GPU -> host bandwidth of a 64 MiB tensor an actor returns on its GPU and
//     the driver gets in host memory (cg::device::cpu: the actor's copy into
//     its pinned overflow buffer, the driver's out of it), beside pinned
//     cudaMemcpy device to host, alone and followed by a host memcpy;
//   - the latency of a 16-byte CUDA tensor's hop between two actor processes
//     (execute() to get()) over CUDA IPC (cg::transport::cuda_ipc) and through
//     host memory (cg::device::cuda), beside cudaMemcpy device to device in
//     one process (for the IPC hop) and device -> host -> device (for the other);
//   - the same CUDA IPC hop of 4 KiB (the largest tensor that travels in
//     the message) and of 16 KiB (through the slot's device buffer), beside
//     cudaMemcpy device to device of the same size;
//   - the 16-byte and 16 KiB CUDA IPC hops beside their floor, a bare
//     two-process CUDA IPC hop of 16 bytes in plain CUDA (ipc_floor.hpp),
//     judged by target gpu_ipc_hop;
//   - a one-rank allreduce of 16 bytes over NCCL (execute() to get()), beside
//     the same cudaMemcpy device to device.
//   - the same 64 MiB made in place (graph.input_tensor(): written where the
//     input channel carries it, so execute() copies nothing and the actor's
//     copy engines read it there), beside pinned cudaMemcpy, alone and of
//     memory written just before (as the made-in-place tensor was);
// The host -> GPU rows also give a host memcpy of the same 64 MiB: the driver
// copies the tensor into shared memory before the actor's copy engines read
// it (pinned: tensor/pinned_mappings.hpp), so execute..get cannot pass
// 1 / (1/memcpy + 1/pinned); and the actor's copy alone, from a pinned
// overflow buffer, beside pinned cudaMemcpy. Then each graph runs again with a profile, and
// cg::format_stats() says where an execution's time goes: each task's method
// and the wait and copy of its reads.
// A row with a target (tests/bench/targets.def) ends with it and "met" or
// "MISSED"; the others are steps of a row or context, shown without one.
// The actors share the first GPU, so one GPU runs every row. Without a CUDA
// device it says so and exits 0: there is nothing to compare; where CUDA
// fails on a machine with a device, it quotes the error and exits 1.
#include "../bench/targets.hpp"
#include "gpu_bench_graphs.cg.hpp"
#include "ipc_floor.hpp"

#include "tensor/cuda_memory.hpp"
#include "tensor/pinned_mappings.hpp"
#include <cg/detail/channel.hpp>
#include <cg/device.hpp>
#include <cg/stats.hpp>
#include <cg/tensor.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The median of `iterations` timings of `body`, after a few untimed ones;
// `prepare` runs before each, off the clock.
double median_micros(
    int iterations, const std::function<void()>& body,
    const std::function<void()>& prepare = [] {}) {
  for (int i = 0; i < std::max(3, iterations / 10); ++i) {
    prepare();
    body();
  }
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    prepare();
    auto start = Clock::now();
    body();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// One row: ours beside the baseline, and, where `target` names one, the
// target and whether ours meets it.
void row(const char* name, double ours, const char* baseline, double theirs, const char* unit,
         bool higher_is_better, const char* target = nullptr) {
  double ratio = higher_is_better ? ours / theirs : theirs / ours;
  std::string verdict;
  if (target) {
    const cg_bench::Target& t = cg_bench::target(target);
    verdict = " | target " + cg_bench::describe(t) + ": " +
              cg_bench::word(cg_bench::judge(t, ours, theirs));
  }
  std::printf("%-38s %10.2f %-5s | %-34s %10.2f %-5s | %.2fx of the baseline%s\n", name, ours, unit,
              baseline, theirs, unit, ratio, verdict.c_str());
  std::fflush(stdout);
}

// Runs `graph` (launched with record_profile) `executions` times on `input`
// and prints its statistics under `title`.
template <class Graph, class Input>
void breakdown(const char* title, Graph& graph, const Input& input, int executions) {
  for (int i = 0; i < executions; ++i)
    (void)graph.execute(input).get();
  std::printf("\n%s\n%s", title, cg::format_stats(graph.stats()).c_str());
  std::fflush(stdout);
}

cg::LaunchOptions profiled(cg::LaunchOptions options) {
  options.record_profile = true;
  return options;
}

// The actor's half of a host -> GPU delivery alone: `bytes` written to a
// channel (one slot of 64 KiB: they go to an overflow buffer), read as a
// DeviceInputPort reads them, the buffer pinned as it pins them
// (tensor/pinned_mappings.hpp), copied to `device`; median microseconds of
// the copy.
double pinned_overflow_copy_micros(int iterations, void* device, std::size_t bytes) {
  const cg::ChannelConfig config{1, 64 * 1024, 1};
  void* memory = std::aligned_alloc(64, (cg::channel_footprint(config) + 63) / 64 * 64);
  std::memset(memory, 0, cg::channel_footprint(config));
  double micros = 0;
  {
    cg::Channel channel = cg::Channel::create(memory, config);
    cg::ChannelWriter writer(channel);
    auto pinned = cg::detail::pin_mappings_for(
        0, cg::detail::PinnedAccess::read_only); // outlives the reader, which tells it of unmaps
    cg::ChannelReader reader(channel, 0);
    reader.observe_mappings(pinned.get());
    std::span<std::byte> payload;
    if (writer.acquire(bytes, payload, cg::Deadline::max()) != cg::ChannelStatus::ok)
      throw std::runtime_error("no overflow buffer of " + std::to_string(bytes) + " bytes");
    std::memset(payload.data(), 1, bytes);
    writer.publish(cg::MessageKind::value, bytes);
    cg::ChannelReader::Message message{};
    if (reader.acquire(message, cg::Deadline::max()) != cg::ChannelStatus::ok)
      throw std::runtime_error("the overflow buffer cannot be read back");
    micros = median_micros(iterations, [&] {
      cg::detail::cuda_copy(device, message.payload.data(), message.payload.size());
    });
    reader.release();
  }
  std::free(memory);
  return micros;
}

// cudaMemcpy of `bytes` from `from` to `to`, median microseconds.
double copy_micros(int iterations, void* to, const void* from, std::size_t bytes) {
  return median_micros(iterations, [&] { cg::detail::cuda_copy(to, from, bytes); });
}

} // namespace

int main(int argc, char** argv) {
  // Process B of the bare CUDA IPC hop (ipc_floor.hpp), before anything uses CUDA.
  if (argc > 2 && std::strcmp(argv[1], "--ipc-floor-peer") == 0)
    return gpu_bench::ipc_floor_peer(std::atoi(argv[2]));
  // For run.sh: the count, or CUDA's failure (exit 1), never a failure as 0.
  if (argc > 1 && std::strcmp(argv[1], "--count-devices") == 0) {
    const cg::CudaDevices& cuda = cg::cuda_devices();
    if (!cuda.error.empty()) {
      std::fprintf(stderr, "gpu_bench: %s\n", cuda.error.c_str());
      return 1;
    }
    std::printf("%d\n", cuda.count);
    return 0;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (const cg::CudaDevices& cuda = cg::cuda_devices(); !cuda.error.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", cuda.error.c_str());
    return 1;
  } else if (cuda.count == 0) {
    std::printf("gpu_bench: no CUDA device (%s); nothing to measure\n", cuda.none_because.c_str());
    return 0;
  }
  const int iterations = quick ? 10 : 50;

  // Host -> GPU, 64 MiB, through the input channel's overflow buffer.
  constexpr std::int64_t kBytes = 64 << 20;
  cg::LaunchOptions to_gpu;
  to_gpu.slot_bytes = 1 << 20;
  to_gpu.max_in_flight = 2;
  // The tensor made where the input channel carries it, written as a caller
  // fills it: no host copy, the actor's copy engines read it where it is.
  cg::Tensor made;
  auto make_in_place = [&](auto& graph) {
    made = graph.input_tensor(cg::DType::float32, {kBytes / 4});
    std::memset(made.data_ptr(), 0, kBytes);
  };
  if (argc > 2 && std::strcmp(argv[1], "--trace-made-in-place") == 0) {
    // Where a made-in-place execution's time goes, operation by operation:
    // 20 of them written to a Chrome trace (cg-profile summary reads it).
    to_gpu.profile = argv[2];
    auto graph = cg::launch<&host_to_gpu>(to_gpu);
    for (int i = 0; i < 20; ++i) {
      make_in_place(graph);
      (void)graph.execute(made).get();
    }
    return 0;
  }
  cg::Tensor host = cg::Tensor::zeros(cg::DType::float32, {kBytes / 4});
  double ours = 0, in_place = 0;
  {
    auto graph = cg::launch<&host_to_gpu>(to_gpu);
    ours = median_micros(iterations, [&] { (void)graph.execute(host).get(); });
    // Made (and written) before the clock starts, as pinned cudaMemcpy's source is.
    in_place = median_micros(
        iterations, [&] { (void)graph.execute(made).get(); }, [&] { make_in_place(graph); });
    made = {};
  }
  void* device = cg::detail::cuda_allocate(kBytes, 0);
  void* pinned = cg::detail::cuda_allocate_pinned(kBytes);
  std::memset(pinned, 0, kBytes);
  const double pinned_micros = copy_micros(iterations, device, pinned, kBytes);
  // The same copy of memory written just before it, as a made-in-place input
  // is: the copy engines then read what the CPU's caches still hold.
  int fill = 0;
  const double written_micros = median_micros(
      iterations, [&] { cg::detail::cuda_copy(device, pinned, kBytes); },
      [&] { std::memset(pinned, ++fill & 0xff, kBytes); });
  const double pageable_micros = copy_micros(iterations, device, host.data_ptr(), kBytes);
  const double overflow_micros = pinned_overflow_copy_micros(iterations, device, kBytes);
  cg::Tensor host_copy = cg::Tensor::zeros(cg::DType::float32, {kBytes / 4});
  const double memcpy_micros = median_micros(
      iterations, [&] { std::memcpy(host_copy.data_ptr(), host.data_ptr(), kBytes); });
  cg::detail::cuda_free_pinned(pinned);
  cg::detail::cuda_free(device, 0);
  auto gbps = [](double micros) { return static_cast<double>(kBytes) / micros / 1e3; };
  row("host -> GPU 64 MiB (execute..get)", gbps(ours), "cudaMemcpy H2D 64 MiB, pinned",
      gbps(pinned_micros), "GB/s", true, "host_to_gpu");
  row("host -> GPU 64 MiB (execute..get)", gbps(ours), "cudaMemcpy H2D 64 MiB, pageable",
      gbps(pageable_micros), "GB/s", true, "host_to_gpu_by_value");
  row("host -> GPU 64 MiB (execute..get)", gbps(ours), "memcpy 64 MiB + pinned cudaMemcpy",
      gbps(memcpy_micros + pinned_micros), "GB/s", true);
  row("host -> GPU 64 MiB made in place", gbps(in_place), "cudaMemcpy H2D 64 MiB, pinned",
      gbps(pinned_micros), "GB/s", true, "host_to_gpu");
  row("host -> GPU 64 MiB made in place", gbps(in_place), "the same, of memory just written",
      gbps(written_micros), "GB/s", true);
  row("the actor's copy alone, pinned overflow", gbps(overflow_micros),
      "cudaMemcpy H2D 64 MiB, pinned", gbps(pinned_micros), "GB/s", true);
  // The row above pinned in this process (actor threads too, in threads mode):
  // say whether CUDA let it.
  if (const auto pins = cg::detail::pinned_counts(); pins.pinned + pins.refused > 0)
    std::printf("overflow buffers pinned for the copy to the GPU: %zu (CUDA refused %zu)\n",
                pins.pinned, pins.refused);

  // GPU -> host, 64 MiB: the actor's copy into the pinned overflow buffer,
  // then the driver's out of it (a result is the caller's own memory).
  {
    cg::LaunchOptions options;
    options.slot_bytes = 1 << 20;
    options.max_in_flight = 2;
    auto graph = cg::launch<&gpu_to_host>(options);
    const double back = median_micros(iterations, [&] { (void)graph.execute(kBytes / 4).get(); });
    void* from = cg::detail::cuda_allocate(kBytes, 0);
    void* to = cg::detail::cuda_allocate_pinned(kBytes);
    const double d2h_micros = copy_micros(iterations, to, from, kBytes);
    cg::detail::cuda_free_pinned(to);
    cg::detail::cuda_free(from, 0);
    row("GPU -> host 64 MiB (execute..get)", gbps(back), "cudaMemcpy D2H 64 MiB, pinned",
        gbps(d2h_micros), "GB/s", true);
    row("GPU -> host 64 MiB (execute..get)", gbps(back), "pinned cudaMemcpy D2H + memcpy",
        gbps(d2h_micros + memcpy_micros), "GB/s", true);
  }

  // 16 bytes between GPU buffers: the baselines.
  void* a = cg::detail::cuda_allocate(16, 0);
  void* b = cg::detail::cuda_allocate(16, 0);
  float bounce[4] = {};
  const double d2d = copy_micros(iterations * 20, b, a, 16);
  const double through_host = median_micros(iterations * 20, [&] {
    cg::detail::cuda_copy(bounce, a, 16);
    cg::detail::cuda_copy(b, bounce, 16);
  });
  cg::detail::cuda_free(a, 0);
  cg::detail::cuda_free(b, 0);

  // The floor of a hop between processes, in plain CUDA.
  const gpu_bench::IpcFloor floor = gpu_bench::measure_ipc_floor("/proc/self/exe", iterations * 20);
  int status = 0;
  if (!floor.error.empty()) {
    std::printf("bare two-process CUDA IPC hop 16 B: failed: %s\n", floor.error.c_str());
    status = 1;
  } else {
    std::printf("bare two-process CUDA IPC hop 16 B: p50 %.2f us, p99 %.2f us (plain CUDA: "
                "memset, interprocess event, the peer's D2D copy and synchronise, acknowledged "
                "in shared memory)\n",
                floor.p50_micros, floor.p99_micros);
  }
  {
    auto graph = cg::launch<&ipc_hop>();
    const double hop = median_micros(iterations * 20, [&] { (void)graph.execute(4).get(); });
    row("GPU hop of 16 B, cuda_ipc (execute..get)", hop, "cudaMemcpy D2D 16 B, one process", d2d,
        "us", false);
    row("GPU hop of 16 B, cuda_ipc (execute..get)", hop, "cudaMemcpy D2H + H2D 16 B", through_host,
        "us", false);
    row("GPU hop of 16 B, cuda_ipc (execute..get)", hop, "bare CUDA IPC hop 16 B, p50",
        floor.p50_micros, "us", false, "gpu_ipc_hop");
    // The largest tensor that travels in the message, and one four times
    // larger through the slot's device buffer (tensor/cuda_ipc.hpp).
    for (const int floats : {1024, 4096}) {
      const std::size_t bytes = sizeof(float) * floats;
      void* from = cg::detail::cuda_allocate(bytes, 0);
      void* to = cg::detail::cuda_allocate(bytes, 0);
      const double copy = copy_micros(iterations * 20, to, from, bytes);
      cg::detail::cuda_free(from, 0);
      cg::detail::cuda_free(to, 0);
      const double larger =
          median_micros(iterations * 20, [&] { (void)graph.execute(floats).get(); });
      const std::string size = std::to_string(bytes / 1024) + " KiB";
      row(("GPU hop of " + size + ", cuda_ipc" + (floats == 1024 ? ", in message" : ", buffer"))
              .c_str(),
          larger, ("cudaMemcpy D2D " + size + ", one process").c_str(), copy, "us", false);
      if (floats == 4096)
        row("GPU hop of 16 KiB, cuda_ipc, buffer", larger, "bare CUDA IPC hop 16 B, p50",
            floor.p50_micros, "us", false, "gpu_ipc_hop");
    }
  }
  {
    auto graph = cg::launch<&gpu_hop>();
    const double hop = median_micros(iterations * 20, [&] { (void)graph.execute(4).get(); });
    row("GPU hop of 16 B, via host (execute..get)", hop, "cudaMemcpy D2H + H2D 16 B", through_host,
        "us", false);
  }

  {
    cg::LaunchOptions options;
    options.slot_bytes = 1 << 20;
    options.max_in_flight = 2;
    auto graph = cg::launch<&host_to_gpu>(profiled(options));
    breakdown("host -> GPU 64 MiB, where the time goes:", graph, host, iterations);
  }
  {
    auto graph = cg::launch<&ipc_hop>(profiled({}));
    breakdown("GPU hop of 16 B over cuda_ipc, where the time goes:", graph, 4, iterations * 20);
  }
  {
    auto graph = cg::launch<&gpu_hop>(profiled({}));
    breakdown("GPU hop of 16 B via host, where the time goes:", graph, 4, iterations * 20);
  }
  std::printf("\n");

#if defined(CG_HAVE_CUDA)
  if (!cg::NcclCommunicator::available()) {
    std::printf("1-rank NCCL allreduce: skipped, NCCL cannot be loaded (libnccl.so.2, or "
                "CG_NCCL_LIBRARY)\n");
    return status;
  }
  try {
    cg::LaunchOptions options;
    options.communicator = cg::CommunicatorKind::nccl;
    auto graph = cg::launch<&one_rank_allreduce>(options);
    const double allreduce = median_micros(iterations * 20, [&] { (void)graph.execute(4).get(); });
    row("1-rank NCCL allreduce 16 B (execute..get)", allreduce, "cudaMemcpy D2D 16 B, one process",
        d2d, "us", false);
    auto profiled_graph = cg::launch<&one_rank_allreduce>(profiled(options));
    breakdown("1-rank NCCL allreduce of 16 B, where the time goes:", profiled_graph, 4,
              iterations * 20);
  } catch (const std::exception& e) {
    std::printf("1-rank NCCL allreduce: failed: %s\n", e.what());
    return 1;
  }
#endif
  return status;
}
