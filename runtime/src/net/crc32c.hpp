// net/crc32c.hpp - CRC-32C (Castagnoli), the checksum of TCP channel frames (internal).
//
// CRC-32C is the checksum of iSCSI, ext4 and SCTP; x86-64 computes it in
// hardware (SSE4.2), so checking every byte of a 64 MiB frame costs a few
// milliseconds instead of dominating the transfer. The hardware path runs three
// independent streams and joins them with a polynomial shift, because one
// stream is bound by the instruction's latency, not its throughput.
//
//   std::uint32_t c = cg::detail::crc32c(0, "123456789", 9);  // 0xe3069283
//   c = cg::detail::crc32c(cg::detail::crc32c(0, a, na), b, nb);  // == crc32c(0, a ++ b)
#pragma once

#include <cstddef>
#include <cstdint>

namespace cg::detail {

// The CRC-32C of `bytes` bytes at `data` continuing from `crc`, the value a
// previous call returned for the bytes before them (0 to start).
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t bytes) noexcept;

// The CRC-32C of A ++ B from crc_a (of A) and crc_b (of B alone, from 0),
// where B is `bytes_b` long: how pieces checksummed apart are joined.
std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b,
                             std::uint64_t bytes_b) noexcept;

// crc32c() where the whole of a large buffer waits for it (a sender, whose
// checksum must be known before the first byte leaves; a receiver that
// checks a message that arrived whole): from crc32c_split_bytes up, a helper thread checksums the
// second half while the caller does the first, and the two are joined (on two cores, half the
// time). When the helper is busy with another caller's buffer, or cannot be started, the caller
// does it all. net/crc32c_helper.cpp.
std::uint32_t crc32c_parallel(std::uint32_t crc, const void* data, std::size_t bytes) noexcept;
inline constexpr std::size_t crc32c_split_bytes = std::size_t{4} << 20;

// The same function, table-driven and without CPU-specific instructions: the
// fallback where SSE4.2 is missing, and the reference the tests compare with.
std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t bytes) noexcept;

} // namespace cg::detail
