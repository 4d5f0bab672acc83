// shm/overflow.hpp - The buffers that carry a channel's values larger than a
// slot (internal: shm/channel.cpp's writers and readers).
//
// Overflow buffers are memfds (anonymous shared-memory files), not named
// /dev/shm segments, because of who could clean a name up: a graph's processes
// die together (the driver's death SIGKILLs its actors), so any name that
// exists between its creation and its unlink would outlive a SIGKILLed graph,
// and a reader may take arbitrarily long to map it. A memfd has no name to
// leak: the kernel frees it with the last descriptor or mapping, whoever is
// killed when. Readers reach it through the writer's descriptor table,
// /proc/<writer pid>/fd/<fd> (allowed between processes of one user; the
// writer must stay dumpable), which is why the writer keeps each buffer's
// descriptor open. Buffers are sealed against shrinking, so a mapping can never
// fault (SIGBUS) under a reader, and start with a header whose generation must
// match the slot's reference, so a corrupted reference is refused, not read.
// The space is reserved with fallocate when the buffer is made, once the
// system says it has that much (shared_memory_room(), shm/shm.hpp), so memory
// exhaustion is a status (too_large), never a SIGBUS in the middle of a write
// nor the OOM killer.
#pragma once

#include <cg/detail/channel.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace cg::detail {

// One of the writer's overflow buffers. The writer keeps a pool of them, not
// one per slot: a buffer is free for the next large value as soon as every
// reader has released the message it last carried, so a channel holds as many
// buffers as it has large values in flight (at most its K slots), not K.
struct OverflowBuffer {
  int fd = -1;               // kept open: readers open /proc/<owner>/fd/<fd>
  std::byte* data = nullptr; // the whole mapping: OverflowHeader, then the payload
  std::size_t mapped = 0;
  std::uint64_t capacity = 0; // payload bytes
  std::uint64_t generation = 0;
  std::uint64_t carried_until = 0; // 1 + the sequence of the last message it carried (0: none)
  pid_t owner = 0;                 // the process that made it (a fork()ed copy is not the owner)
};

// A reader's mapping of one of the writer's buffers, kept for the next
// message that buffer carries.
struct OverflowMapping {
  const std::byte* data = nullptr; // the whole mapping
  std::size_t mapped = 0;
  std::int32_t pid = 0;
  std::int32_t fd = -1;
  std::uint64_t generation = 0;
  std::uint64_t last_used = 0; // the sequence of the last message read from it
};

// Overflow buffers grow in steps of this many bytes.
inline constexpr std::uint64_t overflow_granule = 64 * 1024;

/// A new sealed, fully reserved buffer of `capacity` payload bytes; false (and
/// nothing left behind) when the system refuses one.
bool make_overflow_buffer(OverflowBuffer& out, std::uint64_t capacity,
                          std::uint64_t generation) noexcept;

/// Maps the buffer a slot refers to (the writer's `pid` and `fd`), read-only,
/// after checking that it is one of ours with the generation the slot names:
/// ok, unmappable (it is gone) or corrupt.
ChannelStatus map_overflow_buffer(OverflowMapping& out, std::int32_t pid, std::int32_t fd,
                                  std::uint64_t generation) noexcept;

/// Unmaps (and, for the writer's, closes) a buffer; it is empty afterwards.
void unmap_overflow(OverflowBuffer& buffer) noexcept;
void unmap_overflow(OverflowMapping& mapping) noexcept;

/// The paging of a message read from an overflow buffer: a decoder that
/// copies it out lets the pages it has copied go (see overflow.cpp).
extern const InputPaging overflow_paging;

} // namespace cg::detail
