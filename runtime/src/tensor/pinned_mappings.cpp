// pinned_mappings.cpp - cudaHostRegister of the overflow buffers a GPU port reads or writes
// (see tensor/pinned_mappings.hpp).
#include "tensor/pinned_mappings.hpp"

#include <atomic>

#if defined(CG_HAVE_CUDA)
#include "tensor/cuda_device_guard.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <unordered_set>
#endif

namespace cg::detail {
namespace {
std::atomic<std::size_t> pinned_total{0};
std::atomic<std::size_t> refused_total{0};
} // namespace

PinnedCounts pinned_counts() noexcept {
  return {pinned_total.load(std::memory_order_relaxed),
          refused_total.load(std::memory_order_relaxed)};
}

#if defined(CG_HAVE_CUDA)
namespace {

class PinnedMappings final : public MappingObserver {
public:
  PinnedMappings(int device, PinnedAccess access) : device_(device), access_(access) {}
  ~PinnedMappings() override {
    for (const void* base : pinned_)
      (void)cudaHostUnregister(const_cast<void*>(base));
  }

  void mapped(std::span<const std::byte> mapping) noexcept override {
    if (mapping.size() < kMinPinnedBytes)
      return;
    try {
      const CudaDeviceGuard guard(device_, [](cudaError_t, const std::string&) {});
      // A reader maps buffers read-only, and the copy engines only read them.
      void* base = const_cast<std::byte*>(mapping.data());
      const unsigned flags = cudaHostRegisterPortable |
                             (access_ == PinnedAccess::read_only ? cudaHostRegisterReadOnly : 0u);
      if (cudaHostRegister(base, mapping.size(), flags) != cudaSuccess) {
        (void)cudaGetLastError(); // not sticky: no later call should see it
        refused_total.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      pinned_.insert(base);
      pinned_total.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      // No memory for the set, or no device: the buffer stays pageable.
    }
  }

  void unmapping(std::span<const std::byte> mapping) noexcept override {
    const void* base = mapping.data();
    if (pinned_.erase(base) != 0)
      (void)cudaHostUnregister(const_cast<void*>(base));
  }

private:
  int device_;
  PinnedAccess access_;
  std::unordered_set<const void*> pinned_;
};

} // namespace

std::unique_ptr<MappingObserver> pin_mappings_for(int device, PinnedAccess access) {
  return std::make_unique<PinnedMappings>(device, access);
}

#else

std::unique_ptr<MappingObserver> pin_mappings_for(int, PinnedAccess) { return nullptr; }

#endif

} // namespace cg::detail
