// tensor/pinned_mappings.hpp - pins the overflow buffers a GPU port reads or writes, so that
// copies to or from the device run at the speed of pinned memory (internal).
//
// cudaMemcpy from pageable memory goes through a staging buffer of the
// driver, a CPU copy and a DMA in turn: several times slower than the copy
// engines read pinned memory (tests/gpu/gpu_bench). A tensor larger than a
// slot arrives in an overflow buffer that the reader maps once and reads for
// many executions, so a DeviceInputPort registers each such mapping with
// CUDA when it is mapped (cudaHostRegister, read-only and portable) and
// unregisters it before it is unmapped (detail::MappingObserver); the copy
// itself is the same cudaMemcpy, which then reads the buffer directly. A
// DeviceOutputPort does the same for the buffers its writer makes, from its
// first tensor on a GPU: a tensor from a GPU is then copied by the copy
// engines straight into the buffer. Mappings under kMinPinnedBytes stay
// pageable (pinning costs more than it saves there), and a mapping CUDA
// refuses to pin is copied as before.
#pragma once

#include <cg/detail/channel.hpp>

#include <cstddef>
#include <memory>

namespace cg::detail {

inline constexpr std::size_t kMinPinnedBytes = 256 * 1024;

/// Whether the copy engines only read the pinned memory (a reader's
/// mappings, copied to a GPU) or write it too (a writer's buffers).
enum class PinnedAccess { read_only, read_write };

/// An observer that pins the mappings it hears of for copies with
/// cuda:`device`; null in a build without CUDA.
std::unique_ptr<MappingObserver> pin_mappings_for(int device, PinnedAccess access);

/// How many mappings the observers of this process pinned, and how many CUDA
/// refused (for tests and gpu_bench).
struct PinnedCounts {
  std::size_t pinned = 0;
  std::size_t refused = 0;
};
PinnedCounts pinned_counts() noexcept;

} // namespace cg::detail
