// cuda_memory.cpp - cudaMalloc, cudaFree, cudaMemcpy and cudaMemset for cg::Tensor.
//
// Every call switches to the tensor's device and back, so tensors on several
// devices can be used from one thread without it noticing. Without CUDA the
// calls throw (cuda_free does nothing: nothing can have been allocated).
#include "tensor/cuda_memory.hpp"
#include "tensor/cuda_device_guard.hpp"

#include <string>

#include <cg/tensor.hpp>

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace cg::detail {

#if defined(CG_HAVE_CUDA)
namespace {

[[noreturn]] void throw_cuda(cudaError_t error, const std::string& what) {
  throw TensorError("cg: " + what + " failed: " + cudaGetErrorName(error) + ": " +
                    cudaGetErrorString(error));
}

// cuda:`index` current until the guard goes (tensor/cuda_device_guard.hpp).
CudaDeviceGuard on_device(int index) {
  return CudaDeviceGuard(
      index, [](cudaError_t error, const std::string& what) { throw_cuda(error, what); });
}

} // namespace

void* cuda_allocate(std::size_t bytes, int index) {
  const CudaDeviceGuard guard = on_device(index);
  void* pointer = nullptr;
  const cudaError_t error = cudaMalloc(&pointer, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess) {
    throw_cuda(error, "cudaMalloc of " + std::to_string(bytes) +
                          " bytes on cuda:" + std::to_string(index));
  }
  return pointer;
}

void cuda_free(void* pointer, int index) noexcept {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess)
    return; // the runtime is gone (process exit)
  (void)cudaSetDevice(index);
  (void)cudaFree(pointer);
  (void)cudaSetDevice(previous);
}

void cuda_copy(void* dst, const void* src, std::size_t bytes) {
  const cudaError_t error = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  if (error != cudaSuccess)
    throw_cuda(error, "cudaMemcpy of " + std::to_string(bytes) + " bytes");
}

void cuda_zero(void* pointer, std::size_t bytes, int index) {
  const CudaDeviceGuard guard = on_device(index);
  const cudaError_t error = cudaMemset(pointer, 0, bytes);
  if (error != cudaSuccess)
    throw_cuda(error, "cudaMemset of " + std::to_string(bytes) + " bytes");
}

void* cuda_allocate_pinned(std::size_t bytes) {
  void* pointer = nullptr;
  const cudaError_t error = cudaMallocHost(&pointer, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess)
    throw_cuda(error, "cudaMallocHost of " + std::to_string(bytes) + " bytes");
  return pointer;
}

void cuda_free_pinned(void* pointer) noexcept { (void)cudaFreeHost(pointer); }

#else // !CG_HAVE_CUDA

namespace {
[[noreturn]] void throw_no_cuda(const std::string& what) {
  throw TensorError(
      "cg: " + what +
      ": this build of the runtime has no CUDA support (configure with -DCG_WITH_CUDA=ON "
      "on a machine with the CUDA toolkit)");
}
} // namespace

void* cuda_allocate(std::size_t bytes, int index) {
  throw_no_cuda("allocating " + std::to_string(bytes) + " bytes on cuda:" + std::to_string(index));
}

void cuda_free(void*, int) noexcept {}

void cuda_copy(void*, const void*, std::size_t bytes) {
  throw_no_cuda("copying " + std::to_string(bytes) + " bytes to or from a CUDA device");
}

void cuda_zero(void*, std::size_t bytes, int index) {
  throw_no_cuda("zeroing " + std::to_string(bytes) + " bytes on cuda:" + std::to_string(index));
}

void* cuda_allocate_pinned(std::size_t bytes) {
  throw_no_cuda("allocating " + std::to_string(bytes) + " bytes of pinned host memory");
}

void cuda_free_pinned(void*) noexcept {}

#endif

} // namespace cg::detail
