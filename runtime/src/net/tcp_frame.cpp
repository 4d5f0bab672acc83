// tcp_frame.cpp — encoding, decoding and checksumming TCP channel frame headers.
#include "net/tcp_frame.hpp"

#include "net/crc32c.hpp"

#include <cstring>

namespace cg::detail {

namespace {

template <class T> void store_le(std::byte* out, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

template <class T> T load_le(const std::byte* in) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(std::to_integer<T>(in[i]) << (8 * i));
  return value;
}

} // namespace

void encode_frame_header(const FrameHeader& header, std::byte* out) noexcept {
  store_le<std::uint32_t>(out + 0, header.magic);
  store_le<std::uint16_t>(out + 4, header.version);
  store_le<std::uint16_t>(out + 6, header.kind);
  store_le<std::uint64_t>(out + 8, header.sequence);
  store_le<std::uint64_t>(out + 16, header.length);
  store_le<std::uint32_t>(out + frame_checksum_offset, header.checksum);
  store_le<std::uint32_t>(out + 28, header.reserved);
}

FrameHeader decode_frame_header(const std::byte* in) noexcept {
  FrameHeader header;
  header.magic = load_le<std::uint32_t>(in + 0);
  header.version = load_le<std::uint16_t>(in + 4);
  header.kind = load_le<std::uint16_t>(in + 6);
  header.sequence = load_le<std::uint64_t>(in + 8);
  header.length = load_le<std::uint64_t>(in + 16);
  header.checksum = load_le<std::uint32_t>(in + frame_checksum_offset);
  header.reserved = load_le<std::uint32_t>(in + 28);
  return header;
}

std::uint32_t frame_header_checksum(const std::byte* encoded) noexcept {
  std::byte copy[frame_header_bytes];
  std::memcpy(copy, encoded, frame_header_bytes);
  std::memset(copy + frame_checksum_offset, 0, 4);
  return crc32c(0, copy, frame_header_bytes);
}

std::uint32_t frame_checksum(const FrameHeader& header,
                             std::span<const std::byte> payload) noexcept {
  std::byte encoded[frame_header_bytes];
  encode_frame_header(header, encoded);
  return crc32c(frame_header_checksum(encoded), payload.data(), payload.size());
}

} // namespace cg::detail
