// gpu_math.cpp - fill, product and read-back for the overlap example (see gpu_math.hpp).
//
// cuBLAS is dlopen()ed, as the runtime does NCCL: on a GPU machine it lives
// in the Python wheel nvidia-cublas (run.sh points CG_CUBLAS_LIBRARY at it)
// or in the CUDA toolkit, and linking it statically would add ~100 MiB.
// cuMemsetD16Async comes from the driver through the CUDA runtime.
#include "gpu_math.hpp"

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace overlap {
namespace {

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess)
    throw cg::TensorError(std::string("overlap: ") + what + ": " + cudaGetErrorString(error));
}

// IEEE binary16 bits of `value` (round to nearest; the example's values are
// small integers, which are exact).
unsigned short half_bits(float value) {
  std::uint32_t f = 0;
  std::memcpy(&f, &value, sizeof f);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const int exponent = static_cast<int>((f >> 23) & 0xffu) - 127 + 15;
  std::uint32_t mantissa = f & 0x7fffffu;
  if (exponent <= 0)
    return static_cast<unsigned short>(sign); // too small: zero
  if (exponent >= 31)
    return static_cast<unsigned short>(sign | 0x7c00u); // too large: infinity
  mantissa += 0x1000u;                                  // round to nearest
  std::uint32_t bits = sign | (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  return static_cast<unsigned short>(bits);
}

float from_half_bits(unsigned short h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                    : exponent == 31
                        ? INFINITY
                        : std::ldexp(1.0f + static_cast<float>(mantissa) / 1024.0f, exponent - 15);
  return (h & 0x8000) ? -magnitude : magnitude;
}

struct Cublas {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                         const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                         int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                         cublasGemmAlgo_t) = nullptr;
  cublasHandle_t handle = nullptr; // one per process, on the legacy default stream
};

const Cublas& cublas() {
  static std::once_flag once;
  static Cublas api;
  static std::string failure;
  std::call_once(once, [] {
    const char* configured = std::getenv("CG_CUBLAS_LIBRARY");
    const std::string name = configured && *configured ? configured : "libcublas.so.13";
    void* library = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      failure = "cannot load cuBLAS (" + name + "): " + ::dlerror() +
                "; set CG_CUBLAS_LIBRARY to libcublas.so.13 (e.g. the nvidia-cublas wheel's)";
      return;
    }
    api.create = reinterpret_cast<decltype(api.create)>(::dlsym(library, "cublasCreate_v2"));
    api.gemm = reinterpret_cast<decltype(api.gemm)>(::dlsym(library, "cublasGemmEx"));
    if (!api.create || !api.gemm) {
      failure = name + " lacks cublasCreate_v2 or cublasGemmEx";
      return;
    }
    if (api.create(&api.handle) != CUBLAS_STATUS_SUCCESS)
      failure = "cublasCreate failed";
  });
  if (!failure.empty())
    throw cg::TensorError("overlap: " + failure);
  return api;
}

using MemsetD16 = int (*)(unsigned long long, unsigned short, std::size_t, cudaStream_t);

MemsetD16 memset_d16() {
  static MemsetD16 fn = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status{};
    check(cudaGetDriverEntryPointByVersion("cuMemsetD16Async", &found, 12000, cudaEnableDefault,
                                           &status),
          "cudaGetDriverEntryPointByVersion(cuMemsetD16Async)");
    if (status != cudaDriverEntryPointSuccess || found == nullptr)
      throw cg::TensorError("overlap: the CUDA driver has no cuMemsetD16Async");
    return reinterpret_cast<MemsetD16>(found);
  }();
  return fn;
}

} // namespace

cg::Tensor filled(std::int64_t n, float value) {
  cg::Tensor t = cg::Tensor::empty(cg::DType::float16, {n, n}, cg::device::cuda);
  const int result =
      memset_d16()(reinterpret_cast<unsigned long long>(t.data_ptr()), half_bits(value),
                   static_cast<std::size_t>(n * n), cudaStreamLegacy);
  if (result != 0)
    throw cg::TensorError("overlap: cuMemsetD16Async failed with CUresult " +
                          std::to_string(result));
  return t;
}

void square(const cg::Tensor& a, cg::Tensor& out) {
  if (a.dim() != 2 || a.shape()[0] != a.shape()[1] || a.dtype() != cg::DType::float16 ||
      a.device().kind != cg::DeviceKind::cuda || out.shape() != a.shape())
    throw cg::TensorError("overlap: square() takes n x n float16 CUDA tensors, not " +
                          a.describe() + " into " + out.describe());
  const Cublas& api = cublas();
  const int n = static_cast<int>(a.shape()[0]);
  const float one = 1.0f, zero = 0.0f;
  // Row-major a*a is column-major (a^T a^T)^T: the same product, read back.
  const cublasStatus_t status =
      api.gemm(api.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data_ptr(), CUDA_R_16F, n,
               a.data_ptr(), CUDA_R_16F, n, &zero, out.data_ptr(), CUDA_R_16F, n,
               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS)
    throw cg::TensorError("overlap: cublasGemmEx failed with status " + std::to_string(status));
}

float first_element(const cg::Tensor& t) {
  unsigned short bits = 0;
  check(cudaMemcpy(&bits, t.data_ptr(), sizeof bits, cudaMemcpyDeviceToHost),
        "cudaMemcpy of element (0, 0)");
  return from_half_bits(bits);
}

} // namespace overlap
