// gpu_run_ahead.cpp - events on the legacy default stream, one per execution
// in flight (tensor/gpu_run_ahead.hpp). Without CUDA there is no GPU work to
// wait for: executed() does nothing.
#include "tensor/gpu_run_ahead.hpp"

#if defined(CG_HAVE_CUDA)
#include "tensor/cuda_device_guard.hpp"

#include <cuda_runtime_api.h>
#endif

#include <algorithm>

namespace cg::detail {

GpuRunAhead::GpuRunAhead(int device, std::uint32_t max_in_flight) noexcept
    : device_(device), max_in_flight_(std::max<std::uint32_t>(max_in_flight, 1)) {}

#if defined(CG_HAVE_CUDA)

GpuRunAhead::~GpuRunAhead() {
  int previous = 0;
  if (events_.empty() || cudaGetDevice(&previous) != cudaSuccess)
    return; // nothing made, or the runtime is gone (process exit)
  (void)cudaSetDevice(device_);
  for (void* event : events_)
    if (event != nullptr)
      (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  (void)cudaSetDevice(previous);
}

bool GpuRunAhead::fail(const char* what, int code) noexcept {
  failed_ = true;
  const auto error = static_cast<cudaError_t>(code);
  try {
    error_ = std::string(what) + " on cuda:" + std::to_string(device_) +
             " failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  } catch (...) {
  }
  return false;
}

bool GpuRunAhead::executed() noexcept {
  if (failed_)
    return false;
  cudaError_t switched = cudaSuccess;
  const CudaDeviceGuard guard(device_, [&](cudaError_t e, const std::string&) { switched = e; });
  if (switched != cudaSuccess)
    return fail("selecting the device", switched);
  if (events_.empty()) {
    try {
      events_.assign(max_in_flight_, nullptr);
    } catch (...) {
      return fail("making its events (no memory)", cudaErrorMemoryAllocation);
    }
    for (void*& event : events_) {
      cudaEvent_t made = nullptr;
      if (const cudaError_t e = cudaEventCreateWithFlags(&made, cudaEventDisableTiming);
          e != cudaSuccess)
        return fail("cudaEventCreateWithFlags", e);
      event = made;
    }
  }
  const std::uint64_t done = executions_++;
  if (const cudaError_t e = cudaEventRecord(
          static_cast<cudaEvent_t>(events_[done % max_in_flight_]), cudaStreamLegacy);
      e != cudaSuccess)
    return fail("cudaEventRecord", e);
  // The next execution is max_in_flight ahead of the one recorded max_in_flight - 1 ago.
  if (executions_ < max_in_flight_)
    return true;
  const std::uint64_t oldest = executions_ - max_in_flight_;
  if (const cudaError_t e =
          cudaEventSynchronize(static_cast<cudaEvent_t>(events_[oldest % max_in_flight_]));
      e != cudaSuccess)
    return fail("cudaEventSynchronize", e);
  return true;
}

#else

GpuRunAhead::~GpuRunAhead() = default;

bool GpuRunAhead::executed() noexcept { return true; }

#endif

} // namespace cg::detail
