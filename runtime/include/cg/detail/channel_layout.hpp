// cg/detail/channel_layout.hpp — the in-memory layout of a cg::Channel (internal).
//
// The layout is shared by every process that maps a channel, so it is spelled
// out once here: the channel implementation uses it, and tests use it to corrupt
// a channel on purpose. Nothing outside the runtime should depend on it.
//
//   [ChannelHeader: 4 cache lines][ReaderState x readers][slot x slots]
//   slot = [SlotHeader: 1 cache line][payload: slot_bytes rounded up to 64]
//
// Fields written by different parties sit on different cache lines so that the
// writer publishing and the readers releasing do not false-share.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cg::detail {

inline constexpr std::size_t cache_line = 64;
inline constexpr std::uint64_t channel_magic = 0x314e'4e41'4843'4743ull;  // "CGCHANN1" little-endian
inline constexpr std::uint32_t channel_version = 1;

// The futex system call works on a plain 32-bit word, and a mapping shared by
// several processes only works with address-free (lock-free) atomics.
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));

struct ChannelHeader {
  // Line 0: identity and configuration, immutable after create().
  alignas(cache_line) std::atomic<std::uint64_t> magic;  // stored last by create()
  std::uint32_t version;
  std::uint32_t slots;
  std::uint32_t slot_bytes;
  std::uint32_t readers;
  std::uint64_t slot_stride;  // bytes from one slot header to the next
  std::uint64_t footprint;    // channel_footprint() of the config

  // Line 1: written by the writer on every publish.
  alignas(cache_line) std::atomic<std::uint64_t> published;

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
  alignas(cache_line) std::atomic<std::uint64_t> consumed;  // messages released by this reader
};
static_assert(sizeof(ReaderState) == cache_line);

struct SlotHeader {
  alignas(cache_line) std::atomic<std::uint64_t> sequence;  // n + 1 once message n is published
  std::atomic<std::uint32_t> kind;                          // a MessageKind
  std::atomic<std::uint32_t> size;                          // payload bytes
};
static_assert(sizeof(SlotHeader) == cache_line);

inline std::byte* channel_base(ChannelHeader* h) noexcept { return reinterpret_cast<std::byte*>(h); }

inline ReaderState* reader_state(ChannelHeader* h, std::uint32_t reader) noexcept {
  return reinterpret_cast<ReaderState*>(channel_base(h) + sizeof(ChannelHeader)) + reader;
}

inline SlotHeader* slot_header(ChannelHeader* h, std::uint32_t readers, std::uint64_t stride,
                               std::uint32_t slot) noexcept {
  std::byte* first = channel_base(h) + sizeof(ChannelHeader) + std::size_t{readers} * sizeof(ReaderState);
  return reinterpret_cast<SlotHeader*>(first + slot * stride);
}

inline std::byte* slot_payload(SlotHeader* s) noexcept {
  return reinterpret_cast<std::byte*>(s) + sizeof(SlotHeader);
}

}  // namespace cg::detail
