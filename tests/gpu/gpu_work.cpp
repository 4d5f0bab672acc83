// gpu_work.cpp - steps that hold the legacy default stream (tests/gpu/gpu_work.hpp).
#include "gpu_work.hpp"

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#endif

namespace gpu_work {

#if defined(CG_HAVE_CUDA)
namespace {

std::atomic<std::int64_t> steps_done{0};
std::atomic<int> step_milliseconds{0};

void run_step(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(step_milliseconds.load()));
  steps_done.fetch_add(1);
}

} // namespace

std::int64_t queue_step(int milliseconds) {
  const std::int64_t before = steps_done.load();
  step_milliseconds.store(milliseconds);
  if (const cudaError_t e = cudaLaunchHostFunc(cudaStreamLegacy, run_step, nullptr);
      e != cudaSuccess)
    throw std::runtime_error(std::string("cudaLaunchHostFunc: ") + cudaGetErrorString(e));
  return before;
}

#else

std::int64_t queue_step(int) { return -1; }

#endif

} // namespace gpu_work
