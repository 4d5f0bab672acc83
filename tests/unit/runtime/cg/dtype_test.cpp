// dtype_test.cpp - tests of the tensor element types (cg/dtype.hpp).
//
// The 16-bit float conversions are what HostCommunicator reduces float16 and
// bfloat16 with, so they are checked bit for bit: exact values, rounding ties
// to even, overflow, subnormals, and a round trip of every 16-bit pattern.
#include <cg/dtype.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace {

TEST(DType, SizesAndNamesAreTheDocumentedOnes) {
  struct Expected {
    cg::DType dtype;
    std::size_t size;
    const char* name;
  };
  const Expected all[] = {
      {cg::DType::float16, 2, "float16"}, {cg::DType::bfloat16, 2, "bfloat16"},
      {cg::DType::float32, 4, "float32"}, {cg::DType::float64, 8, "float64"},
      {cg::DType::int8, 1, "int8"},       {cg::DType::int32, 4, "int32"},
      {cg::DType::int64, 8, "int64"},     {cg::DType::uint8, 1, "uint8"},
      {cg::DType::boolean, 1, "bool"},
  };
  ASSERT_EQ(std::size(all), static_cast<std::size_t>(cg::dtype_count));
  for (const Expected& e : all) {
    EXPECT_EQ(cg::dtype_size(e.dtype), e.size) << e.name;
    EXPECT_EQ(cg::to_string(e.dtype), e.name);
    EXPECT_TRUE(cg::is_valid(e.dtype)) << e.name;
  }
  EXPECT_FALSE(cg::is_valid(static_cast<cg::DType>(cg::dtype_count)));
  EXPECT_EQ(cg::to_string(static_cast<cg::DType>(200)), "dtype(invalid)");
}

TEST(DType, DtypeOfMapsTheCxxElementTypes) {
  static_assert(cg::dtype_of<cg::Half> == cg::DType::float16);
  static_assert(cg::dtype_of<cg::BFloat16> == cg::DType::bfloat16);
  static_assert(cg::dtype_of<float> == cg::DType::float32);
  static_assert(cg::dtype_of<double> == cg::DType::float64);
  static_assert(cg::dtype_of<std::int8_t> == cg::DType::int8);
  static_assert(cg::dtype_of<std::int32_t> == cg::DType::int32);
  static_assert(cg::dtype_of<std::int64_t> == cg::DType::int64);
  static_assert(cg::dtype_of<std::uint8_t> == cg::DType::uint8);
  static_assert(cg::dtype_of<bool> == cg::DType::boolean);
  SUCCEED();
}

TEST(DType, HalfConversionIsExactWhereItCanBeAndRoundsTiesToEven) {
  EXPECT_EQ(cg::to_half(1.0f).bits, 0x3c00);
  EXPECT_EQ(cg::to_half(-2.0f).bits, 0xc000);
  EXPECT_EQ(cg::to_half(1.5f).bits, 0x3e00);
  EXPECT_EQ(cg::to_half(0.0f).bits, 0x0000);
  EXPECT_EQ(cg::to_half(-0.0f).bits, 0x8000);
  EXPECT_EQ(cg::to_half(65504.0f).bits, 0x7bff) << "the largest half";
  EXPECT_EQ(cg::to_half(65519.0f).bits, 0x7bff) << "below the halfway point to 65536";
  EXPECT_EQ(cg::to_half(65520.0f).bits, 0x7c00) << "the tie rounds to even: infinity";
  EXPECT_EQ(cg::to_half(1e10f).bits, 0x7c00);
  EXPECT_EQ(cg::to_half(std::ldexp(1.0f, -14)).bits, 0x0400) << "the smallest normal";
  EXPECT_EQ(cg::to_half(std::ldexp(1.0f, -24)).bits, 0x0001) << "the smallest subnormal";
  EXPECT_EQ(cg::to_half(std::ldexp(1.0f, -25)).bits, 0x0000) << "half of it: a tie, to even (zero)";
  EXPECT_EQ(cg::to_half(std::ldexp(3.0f, -25)).bits, 0x0002) << "1.5 units: a tie, to even (2)";
  EXPECT_EQ(cg::to_half(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00)
      << "tie between 1 and its successor";
  EXPECT_EQ(cg::to_half(1.0f + std::ldexp(3.0f, -11)).bits, 0x3c02)
      << "tie between odd and even: to even";
  EXPECT_EQ(cg::to_half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  const cg::Half nan = cg::to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan.bits & 0x7c00, 0x7c00);
  EXPECT_NE(nan.bits & 0x03ff, 0);
  EXPECT_EQ(cg::to_float(cg::Half{0x3555}), 0.333251953125f);
  EXPECT_EQ(cg::to_float(cg::Half{0x0001}), std::ldexp(1.0f, -24));
  EXPECT_EQ(cg::to_float(cg::Half{0xfc00}), -std::numeric_limits<float>::infinity());
}

TEST(DType, EveryHalfSurvivesARoundTripThroughFloat) {
  int mismatches = 0;
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const cg::Half h{static_cast<std::uint16_t>(bits)};
    const float f = cg::to_float(h);
    if (std::isnan(f)) {
      if (!std::isnan(cg::to_float(cg::to_half(f))))
        ++mismatches;
      continue;
    }
    if (cg::to_half(f).bits != h.bits)
      ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(DType, BFloat16ConversionRoundsTiesToEvenAndEverySurvivesARoundTrip) {
  EXPECT_EQ(cg::to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(cg::to_bfloat16(-3.0f).bits, 0xc040);
  EXPECT_EQ(cg::to_bfloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80) << "tie: to even";
  EXPECT_EQ(cg::to_bfloat16(1.0f + std::ldexp(3.0f, -8)).bits, 0x3f82) << "tie: to even";
  EXPECT_EQ(cg::to_bfloat16(1.0f + std::ldexp(1.0f, -7)).bits, 0x3f81) << "exact";
  EXPECT_EQ(cg::to_bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80)
      << "rounds up to infinity";
  EXPECT_TRUE(std::isnan(cg::to_float(cg::to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  int mismatches = 0;
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const cg::BFloat16 b{static_cast<std::uint16_t>(bits)};
    const float f = cg::to_float(b);
    if (std::isnan(f))
      continue;
    if (cg::to_bfloat16(f).bits != b.bits)
      ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

} // namespace
