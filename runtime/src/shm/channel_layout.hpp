// shm/channel_layout.hpp - the in-memory layout of a cg::Channel (internal).
//
// The layout is shared by every process that maps a channel, so it is spelled
// out once here: the channel implementation uses it, and tests use it to corrupt
// a channel on purpose. Nothing outside the runtime should depend on it.
//
//   [ChannelHeader: 4 cache lines][ReaderState x readers][slot x max_in_flight]
//   slot = [SlotHeader: 1 cache line][payload: slot_bytes rounded up to 64]
//
// A message of at most header_payload_bytes lives on the slot header's own
// line, where an overflow reference would be: publishing it then hands one
// cache line from writer to reader, not two.
//
// A message larger than slot_bytes lives in the slot's overflow buffer, an
// anonymous shared-memory file (memfd) of the writer: [OverflowHeader][payload].
// The slot header then names it by the writer's pid and descriptor (readers open
// /proc/<pid>/fd/<fd>), its generation and the payload size (see shm/overflow.hpp).
//
// Fields written by different parties sit on different cache lines so that the
// writer publishing and the readers releasing do not false-share.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cg::detail {

inline constexpr std::size_t cache_line = 64;
inline constexpr std::uint64_t channel_magic = 0x314e'4e41'4843'4743ull; // "CGCHANN1" little-endian
inline constexpr std::uint32_t channel_version = 3;
inline constexpr std::uint64_t overflow_magic =
    0x3130'4c46'564f'4743ull; // "CGOVFL01" little-endian

// The futex system call works on a plain 32-bit word, and a mapping shared by
// several processes only works with address-free (lock-free) atomics.
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));

struct ChannelHeader {
  // Line 0: identity and configuration, immutable after create().
  alignas(cache_line) std::atomic<std::uint64_t> magic; // stored last by create()
  std::uint32_t version;
  std::uint32_t max_in_flight; // slots of the ring
  std::uint32_t slot_bytes;
  std::uint32_t readers;
  std::uint64_t slot_stride; // bytes from one slot header to the next
  std::uint64_t footprint;   // channel_footprint() of the config

  // Line 1: written by the writer on every publish.
  alignas(cache_line) std::atomic<std::uint64_t> published;
  // Overflow buffers created so far: the last one's generation.
  std::atomic<std::uint64_t> overflow_generations;

  // Line 2: the writer sleeps here; readers bump the word when it does.
  alignas(cache_line) std::atomic<std::uint32_t> writer_futex;
  std::atomic<std::uint32_t> writer_waiters;

  // Line 3: readers sleep here; the writer bumps the word when any does.
  alignas(cache_line) std::atomic<std::uint32_t> reader_futex;
  std::atomic<std::uint32_t> reader_waiters;
  std::atomic<std::uint32_t> closed;
};
static_assert(sizeof(ChannelHeader) == 4 * cache_line);

struct ReaderState {
  alignas(cache_line) std::atomic<std::uint64_t> consumed; // messages released by this reader
};
static_assert(sizeof(ReaderState) == cache_line);

// Where a message's payload is.
enum class Storage : std::uint32_t { slot = 0, overflow = 1, header = 2 };

struct SlotHeader {
  alignas(cache_line) std::atomic<std::uint64_t> sequence; // n + 1 once message n is published
  std::atomic<std::uint32_t> kind;                         // a MessageKind
  std::atomic<std::uint32_t> size;    // payload bytes in the slot (Storage::slot)
  std::atomic<std::uint32_t> storage; // a Storage
  // Storage::overflow: the writer's buffer for this slot and the payload size.
  std::atomic<std::int32_t> overflow_pid;
  std::atomic<std::int32_t> overflow_fd;
  std::atomic<std::uint64_t> overflow_bytes;
  std::atomic<std::uint64_t> overflow_generation;
};
static_assert(sizeof(SlotHeader) == cache_line);

// Storage::header: the payload takes the overflow reference's bytes (unused
// then) and the rest of the line.
inline constexpr std::size_t header_payload_offset = 24;
inline constexpr std::size_t header_payload_bytes = cache_line - header_payload_offset;
static_assert(offsetof(SlotHeader, overflow_fd) == header_payload_offset);

// The first bytes of an overflow buffer; the payload follows at offset 64.
struct OverflowHeader {
  std::uint64_t magic;      // overflow_magic
  std::uint64_t generation; // unique per channel: ChannelHeader::overflow_generations when made
  std::uint64_t capacity;   // payload bytes the buffer holds
  // Nonzero: the writer lets a channel's only reader give back the pages of
  // a large message it has read (shm/overflow.hpp); zero while a GPU port
  // has the buffer pinned, whose pages must stay the ones it pinned.
  std::atomic<std::uint32_t> releasable;
};
inline constexpr std::size_t overflow_payload_offset = cache_line;
static_assert(sizeof(OverflowHeader) <= overflow_payload_offset);

inline std::byte* channel_base(ChannelHeader* h) noexcept {
  return reinterpret_cast<std::byte*>(h);
}

inline ReaderState* reader_state(ChannelHeader* h, std::uint32_t reader) noexcept {
  return reinterpret_cast<ReaderState*>(channel_base(h) + sizeof(ChannelHeader)) + reader;
}

inline SlotHeader* slot_header(ChannelHeader* h, std::uint32_t readers, std::uint64_t stride,
                               std::uint32_t slot) noexcept {
  std::byte* first =
      channel_base(h) + sizeof(ChannelHeader) + std::size_t{readers} * sizeof(ReaderState);
  return reinterpret_cast<SlotHeader*>(first + slot * stride);
}

inline std::byte* slot_payload(SlotHeader* s) noexcept {
  return reinterpret_cast<std::byte*>(s) + sizeof(SlotHeader);
}
inline std::byte* header_payload(SlotHeader* s) noexcept {
  return reinterpret_cast<std::byte*>(s) + header_payload_offset;
}
// Where the published message in `s` keeps its payload, if in the slot: on
// the header's line or after it (tests reach in here as a stray write would).
inline std::byte* message_payload(SlotHeader* s) noexcept {
  return s->storage.load(std::memory_order_relaxed) == static_cast<std::uint32_t>(Storage::header)
             ? header_payload(s)
             : slot_payload(s);
}

} // namespace cg::detail
