// cg/dtype.hpp - The element types of a cg::Tensor and their 16-bit float formats.
//
//   cg::DType t = cg::dtype_of<float>;            // DType::float32
//   cg::dtype_size(cg::DType::bfloat16);           // 2
//   cg::to_string(cg::DType::int64);               // "int64"
//   cg::Half h = cg::to_half(1.5f);                // h.bits == 0x3e00
//   float back = cg::to_float(h);                  // 1.5f
//
// The element types are the ones tensors commonly carry between GPUs (and
// NCCL can reduce). C++20 has no 16-bit float types, so float16 and bfloat16
// elements are read and written as cg::Half and cg::BFloat16: their bit
// pattern, with conversions to and from float that round to nearest even.
// The enumerator values are part of the wire format of cg::Codec<cg::Tensor>:
// append, never renumber.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cg {

/// An element type. `boolean` is one byte holding 0 or 1 (`bool` is a keyword).
enum class DType : std::uint8_t {
  float16 = 0,
  bfloat16 = 1,
  float32 = 2,
  float64 = 3,
  int8 = 4,
  int32 = 5,
  int64 = 6,
  uint8 = 7,
  boolean = 8,
};

/// Number of DType enumerators (valid values are 0 .. dtype_count - 1).
inline constexpr int dtype_count = 9;

/// IEEE 754 binary16, as its bit pattern.
struct Half {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(Half, Half) = default;
};

/// bfloat16 (the upper half of a binary32), as its bit pattern.
struct BFloat16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(BFloat16, BFloat16) = default;
};

/// Bytes per element: 1, 2, 4 or 8.
constexpr std::size_t dtype_size(DType t) noexcept {
  switch (t) {
  case DType::float16:
  case DType::bfloat16:
    return 2;
  case DType::float32:
  case DType::int32:
    return 4;
  case DType::float64:
  case DType::int64:
    return 8;
  case DType::int8:
  case DType::uint8:
  case DType::boolean:
    return 1;
  }
  return 0;
}

/// "float16", "bfloat16", "float32", ..., "bool"; "dtype(<n>)" for an invalid value.
std::string_view to_string(DType t) noexcept;

/// True for the enumerators above (e.g. false for a corrupted byte cast to DType).
constexpr bool is_valid(DType t) noexcept { return static_cast<int>(t) < dtype_count; }

namespace detail {
template <class T> struct DTypeOf;
template <> struct DTypeOf<Half> {
  static constexpr DType value = DType::float16;
};
template <> struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::bfloat16;
};
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::float32;
};
template <> struct DTypeOf<double> {
  static constexpr DType value = DType::float64;
};
template <> struct DTypeOf<std::int8_t> {
  static constexpr DType value = DType::int8;
};
template <> struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::int32;
};
template <> struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::int64;
};
template <> struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::uint8;
};
template <> struct DTypeOf<bool> {
  static constexpr DType value = DType::boolean;
};
} // namespace detail

/// The DType whose elements are T (Half, BFloat16, float, double, int8_t,
/// int32_t, int64_t, uint8_t, bool); other types do not compile.
template <class T> inline constexpr DType dtype_of = detail::DTypeOf<T>::value;

/// binary16 -> binary32: exact.
constexpr float to_float(Half h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (h.bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in a float
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  if (exponent == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13)); // inf, NaN
  return std::bit_cast<float>(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

/// binary32 -> binary16, rounding to nearest even; overflow gives infinity,
/// NaN stays a (quiet) NaN.
constexpr Half to_half(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) { // inf or NaN
    const std::uint32_t nan_bits =
        magnitude > 0x7f800000u ? 0x200u | ((magnitude >> 13) & 0x3ffu) : 0;
    return Half{static_cast<std::uint16_t>(sign | 0x7c00u | nan_bits)};
  }
  if (magnitude >= 0x477ff000u)
    return Half{static_cast<std::uint16_t>(sign | 0x7c00u)}; // >= 65520: inf
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a half subnormal (or zero), in units of 2^-24. Adding 0.5
    // leaves a float whose last mantissa bit is worth 2^-24, so the addition
    // itself rounds to nearest even; the low bits are then the half's.
    const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
    return Half{
        static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u))};
  }
  // Normal: rebias the exponent (127 -> 15), then round the 13 dropped bits to
  // nearest even; a carry out of the mantissa correctly bumps the exponent.
  const std::uint32_t odd = (magnitude >> 13) & 1u;
  magnitude = magnitude - ((127u - 15u) << 23) + 0xfffu + odd;
  return Half{static_cast<std::uint16_t>(sign | (magnitude >> 13))};
}

/// bfloat16 -> binary32: exact.
constexpr float to_float(BFloat16 b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16);
}

/// binary32 -> bfloat16, rounding to nearest even; NaN stays a (quiet) NaN.
constexpr BFloat16 to_bfloat16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return BFloat16{static_cast<std::uint16_t>((x >> 16) | 0x40u)};
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return BFloat16{static_cast<std::uint16_t>(rounded >> 16)};
}

} // namespace cg
