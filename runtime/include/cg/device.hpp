// cg/device.hpp - Where a tensor's memory is: host memory or one CUDA device.
//
//   cg::Device d = cg::device::cuda;              // cuda:0
//   cg::Device second{cg::DeviceKind::cuda, 1};   // cuda:1
//   cg::to_string(d);                             // "cuda:0"
//   if (cg::cuda_device_count() == 0) { /* no GPU, or a runtime built without CUDA */ }
//   const cg::CudaDevices& cuda = cg::cuda_devices();
//   if (!cuda.error.empty()) { /* CUDA fails here: cuda.error quotes it */ }
//
// A Device is a literal type (usable in constant expressions, e.g. by the
// graph builder). Host memory is always `cpu` with index 0.
//
// "No device" is a claim about the machine, so it is made only on evidence:
// no /dev/nvidia* node (the NVIDIA driver makes them for its devices) and
// CUDA saying it found no device or no driver. A CUDA error on a machine
// with device nodes, or any other CUDA error, is a failure, not an absence:
// cuda_devices() says so, quoting CUDA, and a test that needs a GPU must fail
// on it rather than skip.
#pragma once

#include <cstdint>
#include <string>

namespace cg {

enum class DeviceKind : std::uint8_t { cpu = 0, cuda = 1 };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0; // the CUDA device ordinal; 0 for cpu
  friend constexpr bool operator==(const Device&, const Device&) = default;
};

namespace device {
inline constexpr Device cpu{DeviceKind::cpu, 0};
inline constexpr Device cuda{DeviceKind::cuda, 0};
} // namespace device

/// "cpu" or "cuda:<index>".
std::string to_string(const Device& d);

/// True when this build of the runtime was configured with CUDA (CG_WITH_CUDA).
bool built_with_cuda() noexcept;

/// What this process knows of its CUDA devices: how many, and, when there are
/// none, why, or why CUDA could not tell.
struct CudaDevices {
  int count = 0; // the devices this process can use (0 when `error` is set)
  /// "" when `count` is the truth. Otherwise CUDA failed where it should have
  /// answered: its error name and string, e.g. "cudaGetDeviceCount failed with
  /// cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA
  /// runtime version) on a machine with a CUDA device (/dev/nvidia0, /dev/nvidiactl)".
  std::string error;
  /// When `count` is 0 and `error` is "": why this process has no device
  /// (the runtime built without CUDA; no device node and what CUDA said; a
  /// CUDA_VISIBLE_DEVICES that leaves it none of the machine's).
  std::string none_because;
};

/// Asked once per process (cudaGetDeviceCount, and the /dev/nvidia* nodes),
/// then remembered: CUDA itself reads its devices once. Never throws (out of
/// memory: terminates). Without CUDA in the build: none, saying so.
const CudaDevices& cuda_devices() noexcept;

/// cuda_devices().count: 0 when built without CUDA, when there is no device,
/// and also when CUDA fails (for the runtime's own choice of a path without a
/// GPU). Whoever must tell "none" from "CUDA fails" asks cuda_devices().
int cuda_device_count() noexcept;

} // namespace cg
