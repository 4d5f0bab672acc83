// tensor_transport_test.cpp - the header an NCCL edge sends through its channel.
#include <cg/actor.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

std::vector<std::byte> encoded(const cg::detail::TensorHeader& header) {
  std::vector<std::byte> bytes(cg::encoded_size(header));
  cg::Encoder encoder(bytes);
  cg::encode(encoder, header);
  EXPECT_EQ(encoder.written(), bytes.size());
  return bytes;
}

TEST(TensorHeader, RoundTripsDtypeAndShape) {
  cg::detail::TensorHeader header{true, cg::DType::bfloat16, {2, 0, 7}};
  cg::detail::TensorHeader back = cg::decode_all<cg::detail::TensorHeader>(encoded(header));
  EXPECT_TRUE(back.defined);
  EXPECT_EQ(back.dtype, cg::DType::bfloat16);
  EXPECT_EQ(back.shape, (std::vector<std::int64_t>{2, 0, 7}));
}

TEST(TensorHeader, AnUndefinedTensorHasAHeaderToo) {
  cg::detail::TensorHeader back =
      cg::decode_all<cg::detail::TensorHeader>(encoded(cg::detail::TensorHeader{}));
  EXPECT_FALSE(back.defined);
  EXPECT_TRUE(back.shape.empty());
}

TEST(TensorHeader, AnImpossibleDtypeOrExtentDoesNotDecode) {
  std::vector<std::byte> bad_dtype = encoded({true, cg::DType::float32, {3}});
  bad_dtype[1] = std::byte{200};
  EXPECT_THROW(cg::decode_all<cg::detail::TensorHeader>(bad_dtype), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<cg::detail::TensorHeader>(encoded({true, cg::DType::int8, {-1}})),
               cg::DecodeError);
}

} // namespace
