// gpu_run_ahead_test.cpp - how far an actor's loop may run ahead of its GPU
// (tensor/gpu_run_ahead.hpp). The GPU is made to lag by host functions that
// hold the legacy default stream until the test lets them go.
#include "tensor/gpu_run_ahead.hpp"

#include <cg/device.hpp>

#include "../../../gpu/gpu_skip.hpp"

#include <gtest/gtest.h>

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;

#if defined(CG_HAVE_CUDA)
// A host function on the legacy stream that waits until `*gate` passes
// `step`: the GPU is busy with step `step` until the test says so.
struct Step {
  const std::atomic<int>* gate;
  int step;
};
void hold(void* raw) {
  const auto* s = static_cast<const Step*>(raw);
  while (s->gate->load() <= s->step)
    std::this_thread::sleep_for(1ms);
}
#endif

// max_in_flight 2: the end of execution 0 does not wait; the end of execution 1
// waits for execution 0's GPU work, and for nothing after it.
TEST(GpuRunAhead, TheEndOfAnExecutionWaitsForTheGpuWorkOfTheOneDepthMinusOneBefore) {
  CG_SKIP_WITHOUT_GPU(); // a build without CUDA has no device: it skips
#if defined(CG_HAVE_CUDA)
  std::atomic<int> gate{0};
  Step steps[3] = {{&gate, 0}, {&gate, 1}, {&gate, 2}};
  cg::detail::GpuRunAhead run_ahead(0, 2);
  ASSERT_EQ(cudaLaunchHostFunc(cudaStreamLegacy, hold, &steps[0]), cudaSuccess);
  ASSERT_TRUE(run_ahead.executed()) << run_ahead.error(); // execution 0: 1 ahead, no wait
  ASSERT_EQ(cudaLaunchHostFunc(cudaStreamLegacy, hold, &steps[1]), cudaSuccess);
  auto ended = std::async(std::launch::async, [&] { return run_ahead.executed(); });
  EXPECT_EQ(ended.wait_for(200ms), std::future_status::timeout)
      << "execution 1 ended while execution 0's GPU work was still running";
  gate = 1; // execution 0's step ends; execution 1's still runs
  ASSERT_EQ(ended.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(ended.get()) << run_ahead.error();
  gate = 3;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
#endif
}

// Without a usable device the bound says why and stops; an actor then runs
// unbounded (it has no GPU work to wait for).
TEST(GpuRunAhead, WithoutADeviceItSaysWhyAndStops) {
  CG_SKIP_WITH_GPU();
#if defined(CG_HAVE_CUDA)
  cg::detail::GpuRunAhead run_ahead(0, 2);
  EXPECT_FALSE(run_ahead.executed());
  EXPECT_EQ(run_ahead.error().rfind("selecting the device on cuda:0 failed: cudaError", 0), 0u)
      << run_ahead.error();
  const std::string first = run_ahead.error();
  EXPECT_FALSE(run_ahead.executed());
  EXPECT_EQ(run_ahead.error(), first);
#else
  cg::detail::GpuRunAhead run_ahead(0, 2);
  EXPECT_TRUE(run_ahead.executed()) << "without CUDA there is nothing to wait for";
#endif
}

} // namespace
