// tensor/cuda_presence.hpp - how cuda_devices() judges from the facts it gathers (internal).
//
// Whether a machine has no GPU or a GPU that CUDA cannot use decides whether
// a GPU test skips or fails, so the judgment is a pure function of the
// facts: the device nodes in /dev, CUDA_VISIBLE_DEVICES, and what
// cudaGetDeviceCount answered. cg::cuda_devices() gathers the facts of this
// process and asks it (tensor/device.cpp); tests ask it of facts they make up,
// including those of machines the suite never runs on.
#pragma once

#include <cg/device.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cg::detail {

/// What cudaGetDeviceCount's answer means here.
enum class CudaAnswer {
  devices,   // cudaSuccess: CudaFacts::count devices
  no_device, // cudaErrorNoDevice
  no_driver, // cudaErrorInsufficientDriver, or cudaErrorStubLibrary (only the toolkit's stub)
  error,     // any other error
};

struct CudaFacts {
  std::vector<std::string> device_nodes;      // e.g. "/dev/nvidia0", "/dev/nvidiactl"; sorted
  std::optional<std::string> visible_devices; // CUDA_VISIBLE_DEVICES, if set
  CudaAnswer answer = CudaAnswer::no_device;
  int count = 0;          // with CudaAnswer::devices
  std::string cuda_error; // otherwise: CUDA's error name and string, "cudaErrorNoDevice (no
                          // CUDA-capable device is detected)"
};

/// None only when there is no device node and CUDA found no device or no
/// driver, or when CUDA_VISIBLE_DEVICES hides every device CUDA has (an
/// answer of no_device); every other failure is an error naming the device
/// nodes and quoting CUDA.
CudaDevices judge_cuda_devices(const CudaFacts& facts);

/// The paths of the entries of `dev` whose names begin with "nvidia", sorted;
/// none when `dev` cannot be read.
std::vector<std::string> cuda_device_nodes(const std::string& dev = "/dev");

} // namespace cg::detail
