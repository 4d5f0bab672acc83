// crc32c.cpp - CRC-32C, table-driven and with the SSE4.2 instruction.
//
// Conventions: bits are reflected (the register's bit 0 is the coefficient of
// the highest power), the register starts at ~0 and the result is inverted, as
// in every published CRC-32C. Internally we work on the raw register, whose
// update over a message M is linear: reg(A ++ B, r) = reg(A, r) * x^(8|B|) xor
// reg(B, 0) (mod P). That is what lets three streams be computed independently
// and joined: see shift_by_block below.
#include "net/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace cg::detail {

namespace {

constexpr std::uint32_t polynomial = 0x82f63b78u; // 0x1edc6f41 reflected

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

// tables[0][b]: the register after feeding byte b into a zero register;
// tables[k][b]: the same followed by k zero bytes (slicing-by-8).
constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit)
      c = (c >> 1) ^ (polynomial & (0u - (c & 1u)));
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  }
  return t;
}

constexpr Tables tables = make_tables();

inline std::uint64_t load_le64(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v; // x86-64 and every target we build for are little-endian
}

// a * b mod P, both in the reflected representation (bit 31 = x^0).
constexpr std::uint32_t multiply_mod_p(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & (0x8000'0000u >> i))
      product ^= b;                                // a has the term x^i: add b * x^i
    b = (b >> 1) ^ (polynomial & (0u - (b & 1u))); // b *= x
  }
  return product;
}

// x^(8 n) mod P: multiplying a register by it appends n zero bytes.
constexpr std::uint32_t x_to_8n(std::uint64_t n) noexcept {
  std::uint32_t result = 0x8000'0000u; // x^0
  std::uint32_t power = 0x0080'0000u;  // x^8
  for (; n != 0; n >>= 1) {
    if (n & 1)
      result = multiply_mod_p(power, result);
    power = multiply_mod_p(power, power);
  }
  return result;
}

std::uint32_t portable_register(std::uint32_t reg, const unsigned char* p, std::size_t n) noexcept {
  while (n >= 8) {
    const std::uint64_t w = load_le64(p) ^ reg;
    reg = tables[7][w & 0xff] ^ tables[6][(w >> 8) & 0xff] ^ tables[5][(w >> 16) & 0xff] ^
          tables[4][(w >> 24) & 0xff] ^ tables[3][(w >> 32) & 0xff] ^ tables[2][(w >> 40) & 0xff] ^
          tables[1][(w >> 48) & 0xff] ^ tables[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0)
    reg = (reg >> 8) ^ tables[0][(reg ^ *p++) & 0xff];
  return reg;
}

#if defined(__x86_64__)

// Each of the three streams covers this many bytes of a block.
constexpr std::size_t stream_bytes = 8192;
constexpr std::uint32_t shift_by_block = x_to_8n(stream_bytes);

__attribute__((target("sse4.2"))) std::uint32_t
hardware_register(std::uint32_t reg32, const unsigned char* p, std::size_t n) noexcept {
  std::uint64_t reg = reg32;
  while (n >= 3 * stream_bytes) {
    std::uint64_t a = reg, b = 0, c = 0;
    for (std::size_t i = 0; i < stream_bytes; i += 8) {
      a = _mm_crc32_u64(a, load_le64(p + i));
      b = _mm_crc32_u64(b, load_le64(p + stream_bytes + i));
      c = _mm_crc32_u64(c, load_le64(p + 2 * stream_bytes + i));
    }
    const std::uint32_t ab = multiply_mod_p(shift_by_block, static_cast<std::uint32_t>(a)) ^
                             static_cast<std::uint32_t>(b);
    reg = multiply_mod_p(shift_by_block, ab) ^ static_cast<std::uint32_t>(c);
    p += 3 * stream_bytes;
    n -= 3 * stream_bytes;
  }
  for (; n >= 8; p += 8, n -= 8)
    reg = _mm_crc32_u64(reg, load_le64(p));
  auto r = static_cast<std::uint32_t>(reg);
  for (; n > 0; ++p, --n)
    r = _mm_crc32_u8(r, *p);
  return r;
}

bool has_sse42() noexcept {
  static const bool supported = [] {
    __builtin_cpu_init(); // may run before libgcc's own initialiser
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return supported;
}

#endif

} // namespace

std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b,
                             std::uint64_t bytes_b) noexcept {
  // crc(c, B) = c * x^(8|B|) xor crc(0, B): the register's ones and the
  // result's inversion cancel out (see the top of this file).
  return multiply_mod_p(x_to_8n(bytes_b), crc_a) ^ crc_b;
}

std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t bytes) noexcept {
  return ~portable_register(~crc, static_cast<const unsigned char*>(data), bytes);
}

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t bytes) noexcept {
#if defined(__x86_64__)
  if (has_sse42())
    return ~hardware_register(~crc, static_cast<const unsigned char*>(data), bytes);
#endif
  return crc32c_portable(crc, data, bytes);
}

} // namespace cg::detail
