// overlap_app.cpp - runs the overlap graph (as Ray's example does: 5 executions, each checked)
// and prints how long they took.
//
//   overlap_example [--executions K]                 compiled as is
//   overlap_example_overlapped [--executions K]      compiled with --overlap-gpu-communication
//
// OVERLAP_HEADER names the driver header of the one of the two builds this
// program drives (CMakeLists.txt). Without a CUDA device it says so and
// exits 0.
#include OVERLAP_HEADER

#include <cg/device.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

int main(int argc, char** argv) {
  int executions = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--executions") == 0 && i + 1 < argc)
      executions = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--executions K]\n", argv[0]);
      return 2;
    }
  }
  if (cg::cuda_device_count() == 0) {
    std::printf("overlap_gpu_communication=%s: no CUDA device; nothing to run\n", OVERLAP_NAME);
    return 0;
  }
  try {
    cg::LaunchOptions options;
    options.max_in_flight = 2; // two n x n buffers per channel, not ten
    options.get_timeout = std::chrono::minutes(2);
    auto graph = cg::launch<&overlap_graph>(options);
    (void)graph.execute(100).get(); // warm-up: buffers, cuBLAS, IPC handles
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < executions; ++i) {
      auto [r0, r1, r2] = graph.execute(i).get();
      for (const Received* r : {&r0, &r1, &r2})
        if (r->first != static_cast<float>(i) ||
            r->shape != std::vector<std::int64_t>{10000, 10000} || r->dtype != "float16") {
          std::fprintf(stderr, "overlap: execution %d: wrong result (first %g, dtype %s)\n", i,
                       r->first, r->dtype.c_str());
          return 1;
        }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("overlap_gpu_communication=%s, duration=%.4f s for %d executions\n", OVERLAP_NAME,
                seconds, executions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap: %s\n", e.what());
    return 1;
  }
  return 0;
}
