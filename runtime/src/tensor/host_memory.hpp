// tensor/host_memory.hpp - the host memory of cg::Tensor, large blocks kept for reuse (internal).
//
// The first write to each 4 KiB page of a fresh block costs a page fault: a
// large memcpy into a fresh block is several times slower than into memory
// written before. glibc hands blocks over its mmap threshold (32 MiB at
// most) back to the kernel on free(), so every large tensor decoded from a
// channel started fresh, and a large result from a GPU actor reached the
// driver at a fraction of what the actor's copy and the driver's memcpy
// allow (gpu_bench on an H200). Blocks of at least kReusedBytes are therefore
// kept when freed, up to kKeptBlocks and kKeptBytes in all (the oldest goes
// first), and given to the next allocation they fit without wasting more
// than half of themselves. Smaller blocks go to the C allocator as before.
#pragma once

#include <cstddef>

namespace cg::detail {

inline constexpr std::size_t kReusedBytes = std::size_t{1} << 20;
inline constexpr std::size_t kKeptBlocks = 8;
inline constexpr std::size_t kKeptBytes = std::size_t{1} << 30;

/// A block of host memory and the bytes it really holds (a kept block may
/// be larger than what was asked).
struct HostBlock {
  void* memory = nullptr;
  std::size_t capacity = 0;
};

/// At least `bytes` of host memory (at least 1), aligned to 256 bytes as
/// DLPack recommends for data pointers. Throws std::bad_alloc.
HostBlock host_allocate(std::size_t bytes);

/// Gives back a block host_allocate() returned: kept for reuse when large,
/// else freed.
void host_free(HostBlock block) noexcept;

/// The blocks kept for reuse now, and their bytes (for tests).
struct KeptHostMemory {
  std::size_t blocks = 0;
  std::size_t bytes = 0;
};
KeptHostMemory kept_host_memory() noexcept;

} // namespace cg::detail
