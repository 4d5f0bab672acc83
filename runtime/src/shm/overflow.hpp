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
//
// Large values give their memory back as soon as they are read. A buffer
// kept for the next value keeps its pages, and a chain of actors keeps one
// per channel: three copies of a 200 MiB value after a chain of two had
// returned it. So the only reader of a message of at least
// overflow_released_from bytes punches the buffer's pages out (fallocate)
// before it releases the message, and the writer reserves them again when it
// takes the buffer for the next value. Smaller values keep their buffers
// warm: a 64 MiB hop then writes into pages that are already there. Not a
// buffer a GPU port pinned (OverflowHeader::releasable): its pinned pages
// must stay the buffer's.
//
// Within one process (threads mode) a reader does not map the writer's
// buffer a second time: it shares the writer's mapping, counted, so that a
// value is resident once, not once per side, and whichever side lets go last
// unmaps it.
#pragma once

#include <cg/detail/channel.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace cg::detail {

// One of the writer's overflow buffers. The writer keeps a pool of them, not
// one per slot: a buffer is free for the next large value as soon as every
// reader has released the message it last carried, so a channel holds as many
// buffers as it has large values in flight (at most max_in_flight, its slots),
// not always one per slot.
struct OverflowShare; // the writer's mapping as readers of its process share it

struct OverflowBuffer {
  int fd = -1;               // kept open: readers open /proc/<owner>/fd/<fd>
  std::byte* data = nullptr; // the whole mapping: OverflowHeader, then the payload
  std::size_t mapped = 0;
  std::uint64_t capacity = 0; // payload bytes
  std::uint64_t generation = 0;
  std::uint64_t carried_until = 0; // 1 + the sequence of the last message it carried (0: none)
  pid_t owner = 0;                 // the process that made it (a fork()ed copy is not the owner)
  OverflowShare* share = nullptr;  // this mapping, as the process's readers find it
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
  // The writer's own mapping, shared (a writer in this process); else null.
  OverflowShare* share = nullptr;
  // A descriptor of the buffer open for writing, kept to punch its pages out
  // (a large buffer of another process); else -1.
  int pages_fd = -1;
};

// Overflow buffers grow in steps of this many bytes.
inline constexpr std::uint64_t overflow_granule = 64 * 1024;

// Messages of at least this many bytes have their buffer's pages given back
// once read (see the top of this file).
inline constexpr std::uint64_t overflow_released_from = std::uint64_t{128} << 20;

/// A new sealed, fully reserved buffer of `capacity` payload bytes; false (and
/// nothing left behind) when the system refuses one.
bool make_overflow_buffer(OverflowBuffer& out, std::uint64_t capacity,
                          std::uint64_t generation) noexcept;

/// Maps the buffer a slot refers to (the writer's `pid` and `fd`), read-only,
/// after checking that it is one of ours with the generation the slot names:
/// ok, unmappable (it is gone) or corrupt.
ChannelStatus map_overflow_buffer(OverflowMapping& out, std::int32_t pid, std::int32_t fd,
                                  std::uint64_t generation) noexcept;

/// The writer taking `buffer` again for a value: the pages a reader punched
/// out are reserved again (as make_overflow_buffer() reserves them); false
/// when the system has no room for them.
bool reserve_overflow_again(OverflowBuffer& buffer) noexcept;

/// Lets (false) or no longer lets (true) a buffer's reader give its pages
/// back: a buffer pinned for a GPU must keep the pages it pinned.
void keep_overflow_pages(OverflowBuffer& buffer, bool keep) noexcept;

/// A reader done with a message of `bytes` bytes in `mapping`, and the only
/// reader of its channel: gives the buffer's pages back if it is that large
/// and its writer lets it. Called before the message is released, while the
/// writer cannot be writing the buffer.
void release_overflow_pages(const OverflowMapping& mapping, std::uint64_t bytes) noexcept;

/// Unmaps (and, for the writer's, closes) a buffer; it is empty afterwards.
void unmap_overflow(OverflowBuffer& buffer) noexcept;
void unmap_overflow(OverflowMapping& mapping) noexcept;

/// The paging of a message read from an overflow buffer: a decoder that
/// copies it out lets the pages it has copied go (see overflow.cpp).
extern const InputPaging overflow_paging;

} // namespace cg::detail
