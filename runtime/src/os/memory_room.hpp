// os/memory_room.hpp - How much more memory this process may take without waking the OOM killer.
//
// Linux overcommits: a large allocation, or a memfd's pages reserved with
// fallocate(), does not fail when memory runs out. Touching the pages (or
// reserving them) wakes the kernel's OOM killer instead, which kills whatever
// it picks, not necessarily us. So memory sized by what arrives (a frame's
// length, a value's size) is first held against what the system says it can
// give, and refused with an error where it cannot: shared memory
// (shm/shm.hpp's shared_memory_room()), the receive buffers of channels
// between hosts.
#pragma once

#include <cstdint>
#include <limits>

namespace cg::detail {

struct MemoryRoom {
  std::uint64_t bytes = std::numeric_limits<std::uint64_t>::max(); // max: nothing bounds it
  const char* bound = "";                                          // what bounds it, in words
};

/// The least of MemAvailable in /proc/meminfo and the room the process's
/// memory cgroup leaves (v1: limit_in_bytes less usage_in_bytes; v2:
/// memory.max less memory.current). A bound that cannot be read does not
/// count. Reads a few small files; never throws.
MemoryRoom memory_room() noexcept;

} // namespace cg::detail
