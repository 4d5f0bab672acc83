// net/frame.cpp - encoding, decoding and checking the frames of channels between hosts.
#include "net/frame.hpp"

#include "net/crc32c.hpp"
#include <cg/detail/channel.hpp>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace cg {

const char* to_string(FrameFault fault) noexcept {
  switch (fault) {
  case FrameFault::none:
    return "none";
  case FrameFault::peer_closed:
    return "peer_closed";
  case FrameFault::truncated:
    return "truncated";
  case FrameFault::connection_error:
    return "connection_error";
  case FrameFault::closed_locally:
    return "closed_locally";
  case FrameFault::send_timeout:
    return "send_timeout";
  case FrameFault::bad_magic:
    return "bad_magic";
  case FrameFault::bad_version:
    return "bad_version";
  case FrameFault::bad_header:
    return "bad_header";
  case FrameFault::too_large:
    return "too_large";
  case FrameFault::no_memory:
    return "no_memory";
  case FrameFault::checksum_mismatch:
    return "checksum_mismatch";
  case FrameFault::bad_kind:
    return "bad_kind";
  case FrameFault::lost_frame:
    return "lost_frame";
  case FrameFault::reordered_frame:
    return "reordered_frame";
  case FrameFault::bad_tag:
    return "bad_tag";
  }
  return "unknown";
}

} // namespace cg

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

using ull = unsigned long long; // for printf

FrameFault say(std::span<char> error, FrameFault fault, const char* format, ...) noexcept
    __attribute__((format(printf, 3, 4)));
FrameFault say(std::span<char> error, FrameFault fault, const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error.data(), error.size(), format, args);
  va_end(args);
  return fault;
}

} // namespace

void encode_frame_header(const FrameHeader& header, std::byte* out) noexcept {
  store_le<std::uint32_t>(out + 0, header.magic);
  store_le<std::uint16_t>(out + 4, header.version);
  store_le<std::uint16_t>(out + 6, header.kind);
  store_le<std::uint64_t>(out + 8, header.sequence);
  store_le<std::uint64_t>(out + 16, header.length);
  store_le<std::uint32_t>(out + frame_reserved_offset, 0);
  store_le<std::uint32_t>(out + frame_header_checksum_offset, header_checksum_of(out));
}

FrameHeader decode_frame_header(const std::byte* in) noexcept {
  FrameHeader header;
  header.magic = load_le<std::uint32_t>(in + 0);
  header.version = load_le<std::uint16_t>(in + 4);
  header.kind = load_le<std::uint16_t>(in + 6);
  header.sequence = load_le<std::uint64_t>(in + 8);
  header.length = load_le<std::uint64_t>(in + 16);
  header.header_checksum = load_le<std::uint32_t>(in + frame_header_checksum_offset);
  return header;
}

std::uint32_t frame_header_checksum(const std::byte* encoded) noexcept {
  std::byte copy[frame_header_bytes];
  std::memcpy(copy, encoded, frame_header_bytes);
  std::memset(copy + frame_reserved_offset, 0, 8);
  return crc32c(0, copy, frame_header_bytes);
}

std::uint32_t header_checksum_of(const std::byte* encoded) noexcept {
  return crc32c(0, encoded, frame_header_checksum_offset);
}

std::uint32_t frame_checksum(const FrameHeader& header,
                             std::span<const std::byte> payload) noexcept {
  std::byte encoded[frame_header_bytes];
  encode_frame_header(header, encoded);
  return crc32c_parallel(frame_header_checksum(encoded), payload.data(), payload.size());
}

void encode_frame_trailer(std::uint32_t checksum, std::byte* out) noexcept {
  store_le<std::uint32_t>(out, checksum);
}

std::uint32_t decode_frame_trailer(const std::byte* in) noexcept {
  return load_le<std::uint32_t>(in);
}

std::string encoded_frame(const FrameHeader& header, std::span<const std::byte> payload) {
  std::string frame(frame_header_bytes + payload.size() + frame_trailer_bytes, '\0');
  auto* out = reinterpret_cast<std::byte*>(frame.data());
  encode_frame_header(header, out);
  if (!payload.empty())
    std::memcpy(out + frame_header_bytes, payload.data(), payload.size());
  encode_frame_trailer(frame_checksum(header, payload), out + frame_header_bytes + payload.size());
  return frame;
}

std::string encoded_frame(const FrameHeader& header, std::span<const std::byte> payload,
                          const FrameKey& key, std::uint64_t place) {
  std::string frame = encoded_frame(header, payload);
  std::byte tag[frame_tag_bytes];
  frame_tag(key, place, reinterpret_cast<const std::byte*>(frame.data()), payload.data(),
            payload.size(), tag);
  frame.append(reinterpret_cast<const char*>(tag), sizeof tag);
  return frame;
}

FrameFault check_frame_tag(const std::byte* computed, const std::byte* carried, std::uint64_t next,
                           std::span<char> error) noexcept {
  if (tags_equal(computed, carried))
    return FrameFault::none;
  return say(error, FrameFault::bad_tag,
             "frame %llu: authentication failed: its tag does not match its bytes (rewritten on "
             "the way, or not sent by the peer that proved the launch's secret)",
             static_cast<ull>(next));
}

FrameFault check_frame_start(const FrameHeader& header, std::uint32_t header_crc,
                             std::uint64_t next, std::uint64_t max_payload,
                             std::span<char> error) noexcept {
  if (header.magic != frame_magic) {
    return say(error, FrameFault::bad_magic,
               "frame %llu: bad magic 0x%08x (expected 0x%08x, \"CGTF\")", static_cast<ull>(next),
               header.magic, frame_magic);
  }
  if (header.version != frame_version) {
    return say(error, FrameFault::bad_version, "frame %llu: protocol version %u, expected %u",
               static_cast<ull>(next), unsigned{header.version}, unsigned{frame_version});
  }
  if (header.header_checksum != header_crc) {
    return say(error, FrameFault::checksum_mismatch,
               "frame %llu: header checksum mismatch: it says 0x%08x, its bytes give 0x%08x",
               static_cast<ull>(next), header.header_checksum, header_crc);
  }
  if (header.length > max_payload) {
    return say(
        error, FrameFault::too_large, "frame %llu: payload of %llu bytes exceeds the limit of %llu",
        static_cast<ull>(next), static_cast<ull>(header.length), static_cast<ull>(max_payload));
  }
  return FrameFault::none;
}

FrameFault check_frame_end(const FrameHeader& header, std::uint32_t crc, std::uint32_t carried,
                           std::size_t checked_bytes, std::uint64_t next,
                           std::span<char> error) noexcept {
  if (crc != carried) {
    return say(error, FrameFault::checksum_mismatch,
               "frame %llu: checksum mismatch: the frame says 0x%08x, its %zu bytes give 0x%08x",
               static_cast<ull>(next), carried, checked_bytes, crc);
  }
  if (header.kind != static_cast<std::uint16_t>(MessageKind::value) &&
      header.kind != static_cast<std::uint16_t>(MessageKind::error)) {
    return say(error, FrameFault::bad_kind,
               "frame %llu: unexpected kind %u (not a value or an error)", static_cast<ull>(next),
               unsigned{header.kind});
  }
  if (header.sequence > next) {
    return say(error, FrameFault::lost_frame,
               "lost frame: expected sequence %llu, got %llu (%llu missing)",
               static_cast<ull>(next), static_cast<ull>(header.sequence),
               static_cast<ull>(header.sequence - next));
  }
  if (header.sequence < next) {
    return say(error, FrameFault::reordered_frame,
               "reordered or repeated frame: expected sequence %llu, got %llu",
               static_cast<ull>(next), static_cast<ull>(header.sequence));
  }
  return FrameFault::none;
}

} // namespace cg::detail
