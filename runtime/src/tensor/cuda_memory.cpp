// cuda_memory.cpp - cudaMalloc, cudaFree, cudaMemcpy and cudaMemset for cg::Tensor.
//
// Every call switches to the tensor's device and back, so tensors on several
// devices can be used from one thread without it noticing. Without CUDA the
// calls throw (cuda_free does nothing: nothing can have been allocated).
//
// Device memory comes from each device's default memory pool, allocated and
// freed in the order of the legacy default stream (cudaMallocAsync,
// cudaFreeAsync), the stream every kernel launched without naming one runs
// on and every blocking stream synchronises with. cudaMalloc and cudaFree
// cost tens to hundreds of microseconds, and cudaFree waits for the whole
// device: once per tensor, that was most of a small tensor's hop between
// actors. The pool keeps what is freed (its release threshold is raised to
// everything), so after the first executions a tensor costs no allocation
// from the driver. Work queued on a non-blocking stream (NCCL's, say) must be
// ordered after the legacy stream before it touches a tensor and be finished
// before the tensor's last copy goes: the NCCL communicator and the CUDA IPC
// ports do both (with overlap, a receive's memory is made in its own
// stream's order instead, and tensor/arrivals.hpp orders the rest). A device
// without memory pools gets cudaMalloc and cudaFree.
#include "tensor/cuda_memory.hpp"
#include "tensor/cuda_device_guard.hpp"

#include <string>

#include <cg/tensor.hpp>

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
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

// Whether cuda:`index` allocates from its memory pool, decided on its first
// allocation (the current device): the pool is then told to keep what is
// freed. Devices past kPooledDevices use cudaMalloc.
constexpr int kPooledDevices = 64;
std::atomic<int> pool_state[kPooledDevices]; // 0 not yet known, 1 pooled, 2 plain

bool pooled(int index) {
  if (index < 0 || index >= kPooledDevices)
    return false;
  int state = pool_state[index].load(std::memory_order_acquire);
  if (state == 0) {
    int supported = 0;
    cudaMemPool_t pool = nullptr;
    std::uint64_t keep_everything = UINT64_MAX;
    const bool usable =
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, index) == cudaSuccess &&
        supported != 0 && cudaDeviceGetDefaultMemPool(&pool, index) == cudaSuccess &&
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything) ==
            cudaSuccess;
    state = usable ? 1 : 2;
    pool_state[index].store(state, std::memory_order_release);
  }
  return state == 1;
}

} // namespace

void* cuda_allocate(std::size_t bytes, int index, CUstream_st* stream) {
  const CudaDeviceGuard guard = on_device(index);
  void* pointer = nullptr;
  const std::size_t size = bytes == 0 ? 1 : bytes;
  const bool from_pool = pooled(index);
  const cudaError_t error =
      from_pool ? cudaMallocAsync(&pointer, size, stream != nullptr ? stream : cudaStreamLegacy)
                : cudaMalloc(&pointer, size);
  if (error != cudaSuccess) {
    throw_cuda(error, std::string(from_pool ? "cudaMallocAsync" : "cudaMalloc") + " of " +
                          std::to_string(bytes) + " bytes on cuda:" + std::to_string(index));
  }
  return pointer;
}

void cuda_free(void* pointer, int index) noexcept {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess)
    return; // the runtime is gone (process exit)
  (void)cudaSetDevice(index);
  if (pooled(index))
    (void)cudaFreeAsync(pointer, cudaStreamLegacy);
  else
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

void* cuda_allocate(std::size_t bytes, int index, CUstream_st*) {
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
