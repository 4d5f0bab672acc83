// cg/serialize.hpp - the byte encoding of values that travel through channels.
//
// Every value crossing a process or thread boundary is written straight into a
// channel slot and read back out of it, so the encoder works on a caller-provided
// buffer (no intermediate allocation) and the decoder treats its input as
// untrusted: every read is bounds-checked and every length prefix is validated
// against the bytes that are actually left before anything is allocated.
//
// The encoded form is HOST-ENDIAN and uses the host's object representation of
// arithmetic types: it is only meant to be read on the same host (or an identical
// one), never stored or sent across architectures.
//
// Extending: specialise cg::Codec<T> with
//   static std::size_t size(const T&);        // exact number of bytes encode() writes
//   static void encode(Encoder&, const T&);   // writes exactly size() bytes
//   static T decode(Decoder&);                // may throw DecodeError
#pragma once

#include <cg/detail/borrowed_runs.hpp>

#include <algorithm>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cg {

// Thrown by Decoder and the codecs on truncated, oversized or otherwise malformed input.
struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Appends bytes to a fixed caller-provided buffer. Writing past the end is a
// programming error (callers size the buffer with encoded_size()): it asserts in
// debug builds and aborts in release builds rather than scribbling on memory.
class Encoder {
public:
  explicit Encoder(std::span<std::byte> out) noexcept : out_(out) {}
  /// An encoder that records large runs in `borrowed` (when not null)
  /// instead of copying them, leaving their holes in `out`: the driver's,
  /// for a value only other hosts read (cg/detail/borrowed_runs.hpp).
  Encoder(std::span<std::byte> out, detail::BorrowedRuns* borrowed) noexcept
      : out_(out), borrowed_(borrowed) {
    if (borrowed_ != nullptr) {
      borrowed_->payload = out;
      borrowed_->count = 0;
    }
  }

  void write(const void* data, std::size_t bytes) noexcept {
    assert(bytes <= out_.size() - written_ && "cg::Encoder: write past the end of the buffer");
    if (bytes > out_.size() - written_)
      std::abort(); // never past the end, even with NDEBUG
    // Bytes already where they go (a graph's input tensor made in place) are
    // not copied onto themselves; runs that are borrowed, not yet.
    if (bytes != 0 && data != out_.data() + written_ &&
        (borrowed_ == nullptr || !borrowed_->take(written_, data, bytes)))
      std::memcpy(out_.data() + written_, data, bytes);
    written_ += bytes;
  }

  /// The next `bytes` bytes of the buffer, for the caller to fill (a copy
  /// engine, say); they count as written.
  std::span<std::byte> reserve(std::size_t bytes) noexcept {
    assert(bytes <= out_.size() - written_ && "cg::Encoder: reserve past the end of the buffer");
    if (bytes > out_.size() - written_)
      std::abort();
    std::span<std::byte> area = out_.subspan(written_, bytes);
    written_ += bytes;
    return area;
  }

  std::size_t written() const noexcept { return written_; }

private:
  std::span<std::byte> out_;
  std::size_t written_ = 0;
  detail::BorrowedRuns* borrowed_ = nullptr;
};

// How a Decoder treats an input that is a mapping of memory kept elsewhere (a
// channel's shared buffer) as it copies a large stretch of it out
// (Decoder::copy_out): once a piece is copied, this process's pages of it are
// let go. The memory stays where it is kept (a later read maps it again);
// what goes is this process's hold on it, so that a large value decoded costs
// the reader its decoded copy and one piece, not twice the value.
struct InputPaging {
  // Whole pages only, from the page holding `first` up to the one holding
  // first + bytes (excluded): the bytes before `first` have been read.
  void (*let_go)(const std::byte* first, std::size_t bytes) noexcept;
};

// Reads bytes from a buffer; throws DecodeError instead of reading past its end.
class Decoder {
public:
  // Copies out of an input with paging go in pieces of this many bytes.
  static constexpr std::size_t kPagedPiece = std::size_t{4} << 20;

  explicit Decoder(std::span<const std::byte> in, const InputPaging* paging = nullptr) noexcept
      : in_(in), paging_(paging) {}

  void read(void* out, std::size_t bytes) {
    const std::span<const std::byte> src = take(bytes);
    if (bytes != 0)
      std::memcpy(out, src.data(), bytes);
  }

  // A view of the next `bytes` bytes (valid as long as the input buffer is).
  std::span<const std::byte> take(std::size_t bytes) {
    if (bytes > remaining()) {
      throw DecodeError("cg: truncated input: need " + std::to_string(bytes) + " bytes, " +
                        std::to_string(remaining()) + " remain");
    }
    const std::span<const std::byte> out = in_.subspan(read_, bytes);
    read_ += bytes;
    return out;
  }

  // Takes the next `bytes` bytes and hands them to `sink` (called with a
  // std::span<const std::byte>) to copy: at once, or, when the input has
  // paging and is larger than a piece, in pieces of kPagedPiece bytes (a
  // multiple of every scalar's size), each let go once sunk.
  template <class Sink> void copy_out(std::size_t bytes, Sink&& sink) {
    const std::span<const std::byte> all = take(bytes);
    if (paging_ == nullptr || bytes <= kPagedPiece) {
      sink(all);
      return;
    }
    for (std::size_t done = 0; done < bytes; done += kPagedPiece) {
      const std::span<const std::byte> piece =
          all.subspan(done, std::min(kPagedPiece, bytes - done));
      sink(piece);
      paging_->let_go(piece.data(), piece.size());
    }
  }

  std::size_t remaining() const noexcept { return in_.size() - read_; }

private:
  std::span<const std::byte> in_;
  std::size_t read_ = 0;
  const InputPaging* paging_;
};

// Customisation point; left undefined so that unsupported types are detectable.
template <class T, class Enable = void> struct Codec;

// True when Codec<T> is defined with the three static members above. T is taken
// as is: ask about the decayed type (std::remove_cvref_t) if that is what you mean.
template <class T>
inline constexpr bool is_serializable_v = requires(const T& value, Encoder& e, Decoder& d) {
  { Codec<T>::size(value) } -> std::convertible_to<std::size_t>;
  Codec<T>::encode(e, value);
  { Codec<T>::decode(d) } -> std::same_as<T>;
};

template <class T> std::size_t encoded_size(const T& v) { return Codec<T>::size(v); }

template <class T> void encode(Encoder& e, const T& v) { Codec<T>::encode(e, v); }

template <class T> T decode(Decoder& d) { return Codec<T>::decode(d); }

// Decodes one T that must span the whole input, paged as `paging` says.
template <class T>
T decode_all(std::span<const std::byte> bytes, const InputPaging* paging = nullptr) {
  Decoder d(bytes, paging);
  T value = Codec<T>::decode(d);
  if (d.remaining() != 0)
    throw DecodeError("cg: trailing bytes");
  return value;
}

namespace detail {

// Types whose encoding is their object representation (bool is excluded: not
// every byte value is a valid bool, so it gets a validating codec).
template <class T>
inline constexpr bool is_plain_scalar_v =
    (std::is_arithmetic_v<T> || std::is_enum_v<T>)&&!std::is_same_v<T, bool>;

// Length prefixes are u64 on the wire whatever size_t is.
inline void encode_length(Encoder& e, std::size_t n) noexcept {
  const std::uint64_t wire = n;
  e.write(&wire, sizeof wire);
}

// Reads a length prefix and rejects it unless `n * min_element_bytes` bytes could
// still follow, so a corrupted prefix fails here instead of in the allocator.
inline std::size_t decode_length(Decoder& d, std::size_t min_element_bytes) {
  std::uint64_t wire = 0;
  d.read(&wire, sizeof wire);
  const std::size_t per = min_element_bytes == 0 ? 1 : min_element_bytes;
  if (wire > d.remaining() / per) {
    throw DecodeError("cg: length prefix " + std::to_string(wire) + " exceeds the " +
                      std::to_string(d.remaining()) + " remaining bytes");
  }
  return static_cast<std::size_t>(wire);
}

} // namespace detail

// Arithmetic types and enums: a copy of the object representation.
template <class T> struct Codec<T, std::enable_if_t<detail::is_plain_scalar_v<T>>> {
  static std::size_t size(const T&) noexcept { return sizeof(T); }
  static void encode(Encoder& e, const T& v) noexcept { e.write(&v, sizeof(T)); }
  static T decode(Decoder& d) {
    T v{};
    d.read(&v, sizeof(T));
    return v;
  }
};

// bool: one byte, 0 or 1; anything else is corruption (and would be UB as a bool).
template <> struct Codec<bool> {
  static std::size_t size(const bool&) noexcept { return 1; }
  static void encode(Encoder& e, const bool& v) noexcept {
    const std::uint8_t byte = v ? 1 : 0;
    e.write(&byte, 1);
  }
  static bool decode(Decoder& d) {
    std::uint8_t byte = 0;
    d.read(&byte, 1);
    if (byte > 1)
      throw DecodeError("cg: invalid bool byte " + std::to_string(byte));
    return byte == 1;
  }
};

// std::string: u64 length, then the bytes.
template <> struct Codec<std::string> {
  static std::size_t size(const std::string& v) noexcept {
    return sizeof(std::uint64_t) + v.size();
  }
  static void encode(Encoder& e, const std::string& v) noexcept {
    detail::encode_length(e, v.size());
    e.write(v.data(), v.size());
  }
  static std::string decode(Decoder& d) {
    const std::size_t n = detail::decode_length(d, 1);
    std::string s;
    s.reserve(n);
    d.copy_out(n, [&s](std::span<const std::byte> piece) {
      s.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    });
    return s;
  }
};

// std::vector<T>: u64 count, then the elements; plain scalars go as one block.
// The count is validated assuming every element encodes to at least one byte
// (sizeof(T) for plain scalars), which bounds the allocation by the input size.
template <class T> struct Codec<std::vector<T>, std::enable_if_t<is_serializable_v<T>>> {
  static std::size_t size(const std::vector<T>& v) {
    if constexpr (detail::is_plain_scalar_v<T>) {
      return sizeof(std::uint64_t) + v.size() * sizeof(T);
    } else {
      std::size_t total = sizeof(std::uint64_t);
      for (const T& x : v)
        total += Codec<T>::size(x);
      return total;
    }
  }

  static void encode(Encoder& e, const std::vector<T>& v) {
    detail::encode_length(e, v.size());
    if constexpr (detail::is_plain_scalar_v<T>) {
      e.write(v.data(), v.size() * sizeof(T));
    } else {
      for (const T& x : v)
        Codec<T>::encode(e, x);
    }
  }

  static std::vector<T> decode(Decoder& d) {
    if constexpr (detail::is_plain_scalar_v<T>) {
      const std::size_t n = detail::decode_length(d, sizeof(T));
      std::vector<T> v;
      // One pass over the bytes, not two (zero-filling a vector, then
      // copying into it): what a large value costs is mostly this.
      v.reserve(n);
      d.copy_out(n * sizeof(T), [&v](std::span<const std::byte> piece) {
        if (piece.empty())
          return;
        if (reinterpret_cast<std::uintptr_t>(piece.data()) % alignof(T) == 0) {
          const T* first = reinterpret_cast<const T*>(piece.data());
          v.insert(v.end(), first, first + piece.size() / sizeof(T));
        } else { // misaligned: copy byte-wise into zeroed elements
          const std::size_t had = v.size();
          v.resize(had + piece.size() / sizeof(T));
          std::memcpy(v.data() + had, piece.data(), piece.size());
        }
      });
      return v;
    } else {
      const std::size_t n = detail::decode_length(d, 1);
      std::vector<T> v;
      v.reserve(n);
      for (std::size_t i = 0; i < n; ++i)
        v.push_back(Codec<T>::decode(d));
      return v;
    }
  }
};

} // namespace cg
