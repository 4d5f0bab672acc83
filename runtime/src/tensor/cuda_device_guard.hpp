// tensor/cuda_device_guard.hpp - Making a CUDA device current for a scope, then restoring the
// previous one.
//
// Tensors (tensor/cuda_memory.cpp) and NCCL communicators
// (comm/nccl_communicator.cpp) both run CUDA calls on a device of their own
// from threads that may have another one current; each reports a failure to
// switch in its own exception type, through `fail`.
#pragma once

#if defined(CG_HAVE_CUDA)

#include <cuda_runtime_api.h>

#include <string>

namespace cg::detail {

class CudaDeviceGuard {
public:
  /// Makes cuda:`index` current; when CUDA refuses, calls
  /// fail(error, "selecting cuda:<index>"), which must throw.
  template <class Fail> CudaDeviceGuard(int index, Fail&& fail) {
    cudaError_t error = cudaGetDevice(&previous_);
    if (error == cudaSuccess && previous_ != index)
      error = cudaSetDevice(index);
    if (error != cudaSuccess)
      fail(error, "selecting cuda:" + std::to_string(index));
  }
  ~CudaDeviceGuard() { (void)cudaSetDevice(previous_); }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

private:
  int previous_ = 0;
};

} // namespace cg::detail

#endif // CG_HAVE_CUDA
