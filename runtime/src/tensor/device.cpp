// device.cpp - device names, and whether this process has CUDA devices at all.
//
// Built in both configurations: without CUDA (CG_HAVE_CUDA undefined) every
// query answers "none", so callers need no #ifdef to skip GPU work.
#include <cg/device.hpp>

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace cg {

std::string to_string(const Device& d) {
  if (d.kind == DeviceKind::cpu)
    return "cpu";
  return "cuda:" + std::to_string(d.index);
}

bool built_with_cuda() noexcept {
#if defined(CG_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

int cuda_device_count() noexcept {
#if defined(CG_HAVE_CUDA)
  int count = 0;
  // No driver (cudaErrorInsufficientDriver), no device (cudaErrorNoDevice), ...:
  // all mean there is nothing to run on.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError(); // clear it, so that later CUDA calls do not report it
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

} // namespace cg
