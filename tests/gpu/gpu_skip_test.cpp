// gpu_skip_test.cpp - tests of gpu_skip.hpp: a GPU test skips only where the
// machine has no device for it, and fails, quoting why, where CUDA fails or
// NCCL does not load beside a device.
//
// Over made-up facts, so that the machines with a GPU are covered here too.
#include "gpu_skip.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using cg_test::decide_gpu_test;
using cg_test::decide_no_gpu_test;
using cg_test::GpuVerdict;

cg::CudaDevices devices(int count) { return {.count = count, .error = "", .none_because = ""}; }

const cg::CudaDevices none{
    .count = 0,
    .error = "",
    .none_because = "no CUDA device: this machine has no /dev/nvidia* node, and "
                    "cudaGetDeviceCount says cudaErrorNoDevice (no CUDA-capable device is "
                    "detected)"};

const cg::CudaDevices failing{
    .count = 0,
    .error =
        "cudaGetDeviceCount failed with cudaErrorInsufficientDriver (CUDA driver version is "
        "insufficient for CUDA runtime version) on a machine with a CUDA device (/dev/nvidia0)",
    .none_because = ""};

TEST(GpuSkip, AMachineWithoutADeviceSkipsSayingWhy) {
  const cg_test::GpuDecision d = decide_gpu_test(none, 1);
  EXPECT_EQ(d.verdict, GpuVerdict::skip);
  EXPECT_EQ(d.why, none.none_because);
  // NCCL does not matter there.
  EXPECT_EQ(decide_gpu_test(none, 1, std::string("cg: NCCL could not be loaded")).verdict,
            GpuVerdict::skip);
}

TEST(GpuSkip, ACudaErrorFailsTheTestQuotingIt) {
  const cg_test::GpuDecision d = decide_gpu_test(failing, 1);
  EXPECT_EQ(d.verdict, GpuVerdict::fail);
  EXPECT_EQ(d.why, "CUDA fails on this machine: " + failing.error);
  EXPECT_EQ(decide_gpu_test(failing, 2, std::string("")).verdict, GpuVerdict::fail);
}

TEST(GpuSkip, NcclThatDoesNotLoadBesideADeviceFailsTheTestQuotingTheLoader) {
  const cg_test::GpuDecision d =
      decide_gpu_test(devices(1), 1,
                      std::string("cg: NCCL could not be loaded (libnccl.so.2: cannot open shared "
                                  "object file: No such file or directory)"));
  EXPECT_EQ(d.verdict, GpuVerdict::fail);
  EXPECT_EQ(d.why, "NCCL cannot be loaded, and this process has 1 CUDA device(s): cg: NCCL could "
                   "not be loaded (libnccl.so.2: cannot open shared object file: No such file or "
                   "directory)");
}

TEST(GpuSkip, TooFewDevicesSkipsSayingHowMany) {
  const cg_test::GpuDecision d = decide_gpu_test(devices(1), 2, std::string(""));
  EXPECT_EQ(d.verdict, GpuVerdict::skip);
  EXPECT_EQ(d.why, "this test needs 2 CUDA devices, and this process has 1");
}

TEST(GpuSkip, EnoughDevicesAndNcclRun) {
  EXPECT_EQ(decide_gpu_test(devices(1), 1).verdict, GpuVerdict::run);
  EXPECT_EQ(decide_gpu_test(devices(2), 2, std::string("")).verdict, GpuVerdict::run);
}

TEST(GpuSkip, ATestForAMachineWithoutADeviceRunsOnlyWhereThereIsNone) {
  EXPECT_EQ(decide_no_gpu_test(none).verdict, GpuVerdict::run);
  const cg_test::GpuDecision with = decide_no_gpu_test(devices(1));
  EXPECT_EQ(with.verdict, GpuVerdict::skip);
  EXPECT_EQ(with.why, "this machine has 1 CUDA device(s): this test is for one without");
  const cg_test::GpuDecision broken = decide_no_gpu_test(failing);
  EXPECT_EQ(broken.verdict, GpuVerdict::fail);
  EXPECT_EQ(broken.why, "CUDA fails on this machine: " + failing.error);
}

} // namespace
