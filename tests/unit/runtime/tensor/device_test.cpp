// device_test.cpp - tests of cg::cuda_devices()'s judgment: a machine has no
// GPU only on evidence, and a CUDA that fails beside a device is an error.
//
// The judgment is tested over made-up facts (tensor/cuda_presence.hpp), so
// that the answers for machines with a GPU are checked on machines without
// one; the device nodes are read from a folder made here.
#include <cg/device.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tensor/cuda_presence.hpp"

namespace {

using cg::detail::CudaAnswer;
using cg::detail::CudaFacts;
using cg::detail::judge_cuda_devices;

const std::string no_device = "cudaErrorNoDevice (no CUDA-capable device is detected)";
const std::string no_driver =
    "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)";
const std::string unknown = "cudaErrorUnknown (unknown error)";

CudaFacts facts(std::vector<std::string> nodes, CudaAnswer answer, int count,
                std::string cuda_error) {
  CudaFacts f;
  f.device_nodes = std::move(nodes);
  f.answer = answer;
  f.count = count;
  f.cuda_error = std::move(cuda_error);
  return f;
}

TEST(CudaDevices, NoDeviceNodeAndNoDeviceFoundIsNoneSayingWhy) {
  const cg::CudaDevices d = judge_cuda_devices(facts({}, CudaAnswer::no_device, 0, no_device));
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.none_because, "no CUDA device: this machine has no /dev/nvidia* node, and "
                            "cudaGetDeviceCount says " +
                                no_device);
}

TEST(CudaDevices, NoDeviceNodeAndNoDriverIsNone) {
  const cg::CudaDevices d = judge_cuda_devices(facts({}, CudaAnswer::no_driver, 0, no_driver));
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.none_because,
            "no CUDA device: this machine has no /dev/nvidia* node, and cudaGetDeviceCount says " +
                no_driver);
}

TEST(CudaDevices, DevicesFoundAreCountedWithOrWithoutNodes) {
  const cg::CudaDevices with = judge_cuda_devices(
      facts({"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"}, CudaAnswer::devices, 2, ""));
  EXPECT_EQ(with.count, 2);
  EXPECT_EQ(with.error, "");
  // Some containers reach their GPU through other nodes: CUDA's count stands.
  const cg::CudaDevices without = judge_cuda_devices(facts({}, CudaAnswer::devices, 1, ""));
  EXPECT_EQ(without.count, 1);
  EXPECT_EQ(without.error, "");
}

TEST(CudaDevices, NoDriverBesideDeviceNodesIsAnErrorQuotingCuda) {
  const cg::CudaDevices d = judge_cuda_devices(
      facts({"/dev/nvidia0", "/dev/nvidiactl"}, CudaAnswer::no_driver, 0, no_driver));
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.error, "cudaGetDeviceCount failed with " + no_driver +
                         " on a machine with a CUDA device (/dev/nvidia0, /dev/nvidiactl)");
  EXPECT_EQ(d.none_because, "");
}

TEST(CudaDevices, NoDeviceFoundBesideDeviceNodesIsAnError) {
  const cg::CudaDevices d =
      judge_cuda_devices(facts({"/dev/nvidia0"}, CudaAnswer::no_device, 0, no_device));
  EXPECT_EQ(d.error, "cudaGetDeviceCount failed with " + no_device +
                         " on a machine with a CUDA device (/dev/nvidia0)");
}

TEST(CudaDevices, NoDeviceFoundWhereCudaVisibleDevicesHidesThemAllIsNone) {
  CudaFacts f = facts({"/dev/nvidia0"}, CudaAnswer::no_device, 0, no_device);
  f.visible_devices = "";
  const cg::CudaDevices d = judge_cuda_devices(f);
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.none_because, "no CUDA device for this process: CUDA_VISIBLE_DEVICES='' leaves it "
                            "none of this machine's (/dev/nvidia0), and cudaGetDeviceCount says " +
                                no_device);
}

TEST(CudaDevices, NoDriverIsAnErrorBesideDeviceNodesWhateverCudaVisibleDevicesSays) {
  CudaFacts f = facts({"/dev/nvidia0"}, CudaAnswer::no_driver, 0, no_driver);
  f.visible_devices = "0";
  EXPECT_EQ(judge_cuda_devices(f).error, "cudaGetDeviceCount failed with " + no_driver +
                                             " on a machine with a CUDA device (/dev/nvidia0)");
}

TEST(CudaDevices, AnyOtherCudaErrorIsAnErrorEvenWithoutDeviceNodes) {
  EXPECT_EQ(judge_cuda_devices(facts({}, CudaAnswer::error, 0, unknown)).error,
            "cudaGetDeviceCount failed with " + unknown);
  EXPECT_EQ(judge_cuda_devices(facts({"/dev/nvidia0"}, CudaAnswer::error, 0, unknown)).error,
            "cudaGetDeviceCount failed with " + unknown +
                " on a machine with a CUDA device (/dev/nvidia0)");
}

TEST(CudaDevices, DeviceNodesAreTheEntriesNamedNvidiaSorted) {
  const std::filesystem::path dev = ::testing::TempDir() + "cg-device-test-dev";
  std::filesystem::remove_all(dev);
  std::filesystem::create_directories(dev / "nvidia-caps");
  for (const char* name : {"nvidiactl", "nvidia0", "null", "nvidia-uvm", "tty"})
    std::ofstream(dev / name).put('\n');
  EXPECT_EQ(cg::detail::cuda_device_nodes(dev.string()),
            (std::vector<std::string>{dev.string() + "/nvidia-caps", dev.string() + "/nvidia-uvm",
                                      dev.string() + "/nvidia0", dev.string() + "/nvidiactl"}));
  std::filesystem::remove_all(dev);
  EXPECT_EQ(cg::detail::cuda_device_nodes(dev.string()), std::vector<std::string>{});
}

// This machine's answer agrees with its /dev: a count, an error, or none
// with its reason; beside a device node, none only as CUDA_VISIBLE_DEVICES says.
TEST(CudaDevices, ThisMachinesAnswerAgreesWithItsDeviceNodes) {
  const cg::CudaDevices& d = cg::cuda_devices();
  EXPECT_EQ(cg::cuda_device_count(), d.count);
  if (!d.error.empty()) {
    EXPECT_EQ(d.count, 0);
    return;
  }
  if (d.count == 0) {
    EXPECT_FALSE(d.none_because.empty());
    if (!cg::built_with_cuda()) {
      EXPECT_EQ(d.none_because, "the runtime was built without CUDA");
    } else if (cg::detail::cuda_device_nodes().empty()) {
      EXPECT_EQ(d.none_because.rfind("no CUDA device: this machine has no /dev/nvidia* node", 0),
                0u)
          << d.none_because;
    } else {
      EXPECT_EQ(d.none_because.rfind("no CUDA device for this process: CUDA_VISIBLE_DEVICES='", 0),
                0u)
          << d.none_because;
    }
  }
}

} // namespace
