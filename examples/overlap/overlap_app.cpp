// overlap_app.cpp - runs the overlap graph (as Ray's example does: 5 executions, each checked)
// and prints how long they took.
//
//   overlap_example [--executions K] [--in-flight F] [--stats]
//   overlap_example_overlapped [...]      compiled with --overlap-gpu-communication
//
// --in-flight 2 submits execution i+1 before it waits for execution i (Ray's
// example waits for each before the next: 1), so the senders make the next
// tensors while the receiver multiplies. --stats profiles the run and prints
// where the time went (cg::format_stats: each task's method, and the wait
// and copy of its reads).
//
// OVERLAP_HEADER names the driver header of the one of the two builds this
// program drives (CMakeLists.txt). Without a CUDA device it says so and
// exits 0; where CUDA fails it quotes the failure and exits 1.
#include OVERLAP_HEADER

#include <cg/device.hpp>
#include <cg/stats.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>

int main(int argc, char** argv) {
  int executions = 5;
  int in_flight = 1;
  bool stats = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--executions") == 0 && i + 1 < argc)
      executions = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--in-flight") == 0 && i + 1 < argc)
      in_flight = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--stats") == 0)
      stats = true;
    else {
      std::fprintf(stderr, "usage: %s [--executions K] [--in-flight F] [--stats]\n", argv[0]);
      return 2;
    }
  }
  if (executions < 1 || in_flight < 1 || in_flight > 8) {
    std::fprintf(stderr, "overlap: --executions must be at least 1, --in-flight 1 to 8\n");
    return 2;
  }
  // A GPU whose CUDA fails is no machine without a GPU: that is an error.
  const cg::CudaDevices& cuda = cg::cuda_devices();
  if (!cuda.error.empty()) {
    std::fprintf(stderr, "overlap_gpu_communication=%s: CUDA fails on this machine: %s\n",
                 OVERLAP_NAME, cuda.error.c_str());
    return 1;
  }
  if (cuda.count == 0) {
    std::printf("overlap_gpu_communication=%s: no CUDA device; nothing to run (%s)\n", OVERLAP_NAME,
                cuda.none_because.c_str());
    return 0;
  }
  try {
    cg::LaunchOptions options;
    options.max_in_flight = std::max(2, in_flight); // n x n buffers per channel: 2, not 10
    options.get_timeout = std::chrono::minutes(2);
    options.record_profile = stats;
    auto graph = cg::launch<&overlap_graph>(options);
    (void)graph.execute(100).get(); // warm-up: buffers, cuBLAS, IPC handles
    const auto start = std::chrono::steady_clock::now();
    std::deque<decltype(graph.execute(0))> pending; // executions first to last
    for (int submitted = 0, checked = 0; checked < executions;) {
      if (submitted < executions && static_cast<int>(pending.size()) < in_flight) {
        pending.push_back(graph.execute(submitted++));
        continue;
      }
      auto [r0, r1, r2] = pending.front().get();
      pending.pop_front();
      for (const Received* r : {&r0, &r1, &r2})
        if (r->first != static_cast<float>(checked) ||
            r->shape != std::vector<std::int64_t>{10000, 10000} || r->dtype != "float16") {
          std::fprintf(stderr, "overlap: execution %d: wrong result (first %g, dtype %s)\n",
                       checked, r->first, r->dtype.c_str());
          return 1;
        }
      ++checked;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("overlap_gpu_communication=%s, duration=%.4f s for %d executions, %d in flight\n",
                OVERLAP_NAME, seconds, executions, in_flight);
    if (stats)
      std::printf("%s", cg::format_stats(graph.stats()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap: %s\n", e.what());
    return 1;
  }
  return 0;
}
