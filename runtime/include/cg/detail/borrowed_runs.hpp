// cg/detail/borrowed_runs.hpp - Large runs of an encoded value left where the
// caller keeps them, for a stream to another host to send from there.
//
// Encoding copies a value into its channel's memory, where every reader reads
// it. A value the driver hands to a channel whose every reader is on another
// host is read there only from the stream: copying a 64 MiB vector into the
// channel first, only for the stream to send it from there, is a pass over it
// that a plain send() does not make. So the driver's encoder records each
// large run of bytes it is given (a vector's elements, a tensor's) here
// instead of copying it, leaving a hole of its size in the encoded payload,
// and the stream sends the run from the caller's memory
// (ChannelWriter::publish_borrowed in cg/detail/channel.hpp; the stream's
// side in net/scale_out.cpp). Whatever of a run has not been sent when the
// writer returns is copied into its hole first: the caller may change or free
// the value once execute() has returned, as always.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

namespace cg::detail {

/// Bytes [offset, offset + size) of an encoded payload, which are at `bytes`
/// (the caller's memory) instead.
struct BorrowedRun {
  std::size_t offset;
  const std::byte* bytes;
  std::size_t size;
};

/// The runs an encoder left out of `payload`, in payload order.
struct BorrowedRuns {
  /// Runs shorter than this are copied as usual: the copy costs little, and
  /// each run costs its stream an I/O vector entry.
  static constexpr std::size_t min_bytes = std::size_t{1} << 20;
  /// A value with more large runs than this (a strided tensor) copies the rest.
  static constexpr std::size_t capacity = 8;

  std::span<std::byte> payload; // the encoded value's area, holes included
  BorrowedRun runs[capacity];
  std::size_t count = 0;

  /// Records `size` bytes at `bytes`, due at payload offset `offset`, if the
  /// run is large enough and there is room; false: the caller copies them.
  bool take(std::size_t offset, const void* bytes, std::size_t size) noexcept {
    if (size < min_bytes || count == capacity)
      return false;
    runs[count++] = {offset, static_cast<const std::byte*>(bytes), size};
    return true;
  }

  std::span<const BorrowedRun> view() const noexcept { return {runs, count}; }

  /// Copies what the runs hold from payload offset `from` on into their
  /// holes: the payload is then whole from `from` to its end.
  void fill_from(std::size_t from) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
      const BorrowedRun& run = runs[i];
      const std::size_t skip = from > run.offset ? from - run.offset : 0;
      if (skip < run.size)
        std::memcpy(payload.data() + run.offset + skip, run.bytes + skip, run.size - skip);
    }
  }
};

} // namespace cg::detail
