// cg/device.hpp - Where a tensor's memory is: host memory or one CUDA device.
//
//   cg::Device d = cg::device::cuda;              // cuda:0
//   cg::Device second{cg::DeviceKind::cuda, 1};   // cuda:1
//   cg::to_string(d);                             // "cuda:0"
//   if (cg::cuda_device_count() == 0) { /* no GPU, or a runtime built without CUDA */ }
//
// A Device is a literal type (usable in constant expressions, e.g. by the
// graph builder). Host memory is always `cpu` with index 0.
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

/// CUDA devices this process can use: 0 when built without CUDA, when there is
/// no driver or no device (any error of cudaGetDeviceCount counts as none).
int cuda_device_count() noexcept;

} // namespace cg
