// host_memory.cpp - host blocks of cg::Tensor, the large ones kept for reuse (see host_memory.hpp).
#include "tensor/host_memory.hpp"

#include <array>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace cg::detail {
namespace {

constexpr std::size_t kAlignment = 256;

// Blocks kept, oldest first. A mutex, not a lock-free list: it is taken only
// for blocks of a MiB or more, whose copies cost far more.
struct Kept {
  std::mutex mutex;
  std::vector<HostBlock> blocks; // at most kKeptBlocks + 1, briefly

  std::size_t bytes() const noexcept {
    std::size_t sum = 0;
    for (const HostBlock& block : blocks)
      sum += block.capacity;
    return sum;
  }
};

Kept& kept() {
  static auto* instance = new Kept; // never destroyed: tensors may die after main()
  return *instance;
}

std::size_t capacity_for(std::size_t bytes) {
  return (bytes == 0 ? 1 : (bytes + kAlignment - 1) / kAlignment) * kAlignment;
}

} // namespace

HostBlock host_allocate(std::size_t bytes) {
  const std::size_t capacity = capacity_for(bytes);
  if (capacity >= kReusedBytes) {
    Kept& k = kept();
    std::lock_guard lock(k.mutex);
    // The newest block that fits, most likely still in the caches.
    for (std::size_t i = k.blocks.size(); i-- > 0;) {
      const HostBlock block = k.blocks[i];
      if (block.capacity >= capacity && block.capacity / 2 <= capacity) {
        k.blocks.erase(k.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        return block;
      }
    }
  }
  void* memory = std::aligned_alloc(kAlignment, capacity);
  if (memory == nullptr)
    throw std::bad_alloc();
  return {memory, capacity};
}

void host_free(HostBlock block) noexcept {
  if (block.capacity < kReusedBytes || block.capacity > kKeptBytes) {
    std::free(block.memory);
    return;
  }
  std::array<void*, kKeptBlocks + 1> released{};
  std::size_t count = 0;
  {
    Kept& k = kept();
    std::lock_guard lock(k.mutex);
    try {
      k.blocks.push_back(block);
    } catch (const std::bad_alloc&) {
      std::free(block.memory);
      return;
    }
    while (k.blocks.size() > kKeptBlocks || k.bytes() > kKeptBytes) {
      released[count++] = k.blocks.front().memory;
      k.blocks.erase(k.blocks.begin());
    }
  }
  for (std::size_t i = 0; i < count; ++i) // outside the lock: munmap takes a while
    std::free(released[i]);
}

KeptHostMemory kept_host_memory() noexcept {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  return {k.blocks.size(), k.bytes()};
}

} // namespace cg::detail
