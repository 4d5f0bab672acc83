// gpu_skip.hpp - how the GPU tests tell whether this machine has a CUDA
// device, and skip saying so when they need one (tests/gpu).
#pragma once

#include <cg/device.hpp>

#include <gtest/gtest.h>

namespace cg_test {

inline bool have_cuda_device() { return cg::built_with_cuda() && cg::cuda_device_count() > 0; }

} // namespace cg_test

// In a test body: skips it, saying why, on a machine without a CUDA device.
#define CG_SKIP_WITHOUT_GPU()                                                                      \
  do {                                                                                             \
    if (!cg_test::have_cuda_device())                                                              \
      GTEST_SKIP() << "no CUDA device: this test needs a GPU (built with CUDA: "                   \
                   << (cg::built_with_cuda() ? "yes" : "no") << ")";                               \
  } while (false)
