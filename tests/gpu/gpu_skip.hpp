// gpu_skip.hpp - when a GPU test runs, skips or fails: it skips only on a
// machine that truly has no device for it (tests/gpu, tests/unit/runtime).
//
// A GPU machine whose CUDA fails, or whose NCCL does not load, must not pass
// for one without a GPU: a skip there would hide the failure. So the choice
// is a pure function of what the runtime found (cg::cuda_devices(): device
// nodes and CUDA's answer, tensor/cuda_presence.hpp) and of NCCL's load
// error, tested over made-up facts in gpu_skip_test.cpp, and the macros
// below apply it in a test body.
#pragma once

#include <cg/device.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#endif

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace cg_test {

enum class GpuVerdict { run, skip, fail };

struct GpuDecision {
  GpuVerdict verdict = GpuVerdict::run;
  std::string why; // for skip and fail: said by the test
};

// For a test that needs `gpus` CUDA devices and, when `nccl_error` is given,
// NCCL ("" when it loads): fail when CUDA fails, skip when this process has
// fewer devices than that, fail when NCCL does not load beside them, else run.
inline GpuDecision decide_gpu_test(const cg::CudaDevices& cuda, int gpus,
                                   const std::optional<std::string>& nccl_error = std::nullopt) {
  if (!cuda.error.empty())
    return {GpuVerdict::fail, "CUDA fails on this machine: " + cuda.error};
  if (cuda.count == 0)
    return {GpuVerdict::skip, cuda.none_because};
  if (cuda.count < gpus) {
    return {GpuVerdict::skip, "this test needs " + std::to_string(gpus) +
                                  " CUDA devices, and this process has " +
                                  std::to_string(cuda.count)};
  }
  if (nccl_error && !nccl_error->empty()) {
    return {GpuVerdict::fail, "NCCL cannot be loaded, and this process has " +
                                  std::to_string(cuda.count) + " CUDA device(s): " + *nccl_error};
  }
  return {GpuVerdict::run, ""};
}

// For a test of what a machine without a device reports: fail when CUDA
// fails (that is no machine without a device), skip when there is a device.
inline GpuDecision decide_no_gpu_test(const cg::CudaDevices& cuda) {
  if (!cuda.error.empty())
    return {GpuVerdict::fail, "CUDA fails on this machine: " + cuda.error};
  if (cuda.count > 0) {
    return {GpuVerdict::skip, "this machine has " + std::to_string(cuda.count) +
                                  " CUDA device(s): this test is for one without"};
  }
  return {GpuVerdict::run, ""};
}

// Why NCCL cannot be loaded here, "" when it can.
inline std::string nccl_load_error() {
#if defined(CG_HAVE_CUDA)
  return cg::NcclCommunicator::load_error();
#else
  return "the runtime was built without CUDA";
#endif
}

inline bool have_cuda_device() { return cg::cuda_device_count() > 0; }

} // namespace cg_test

// In a test body: skips or fails it, saying why, unless the decision is run.
#define CG_APPLY_GPU_DECISION(decision)                                                            \
  do {                                                                                             \
    const cg_test::GpuDecision cg_decision = (decision);                                           \
    if (cg_decision.verdict == cg_test::GpuVerdict::skip)                                          \
      GTEST_SKIP() << cg_decision.why;                                                             \
    if (cg_decision.verdict == cg_test::GpuVerdict::fail)                                          \
      FAIL() << cg_decision.why;                                                                   \
  } while (false)

// A test that needs a GPU; one that needs `gpus` of them and NCCL.
#define CG_SKIP_WITHOUT_GPU() CG_APPLY_GPU_DECISION(cg_test::decide_gpu_test(cg::cuda_devices(), 1))
#define CG_SKIP_WITHOUT_GPUS_AND_NCCL(gpus)                                                        \
  CG_APPLY_GPU_DECISION(                                                                           \
      cg_test::decide_gpu_test(cg::cuda_devices(), gpus, cg_test::nccl_load_error()))
// A test of what a machine without a GPU reports.
#define CG_SKIP_WITH_GPU() CG_APPLY_GPU_DECISION(cg_test::decide_no_gpu_test(cg::cuda_devices()))
