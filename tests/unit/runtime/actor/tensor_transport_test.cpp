// tensor_transport_test.cpp - the header an NCCL edge sends through its channel.
#include <cg/actor.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
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

namespace {

template <class T> std::vector<std::byte> wire(const T& value) {
  std::vector<std::byte> bytes(cg::encoded_size(value));
  cg::Encoder encoder(bytes);
  cg::encode(encoder, value);
  EXPECT_EQ(encoder.written(), bytes.size());
  return bytes;
}

// What DeviceOutputPort writes is what readers decode as a host cg::Tensor.
TEST(TensorToHost, AHostTensorIsWrittenAsCodecTensorWritesIt) {
  cg::Tensor t = cg::Tensor::empty(cg::DType::int32, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.data<std::int32_t>()[i] = i * 7;
  EXPECT_EQ(wire(cg::detail::TensorToHost{t}), wire(t));
  EXPECT_EQ(wire(cg::detail::TensorToHost{cg::Tensor{}}), wire(cg::Tensor{}));
  cg::Tensor back = cg::decode_all<cg::Tensor>(wire(cg::detail::TensorToHost{t}));
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.data<std::int32_t>()[5], 35);
}

TEST(TensorToHost, AStridedCudaTensorIsRefusedBeforeAnyByteIsWritten) {
  float fake[4] = {};
  cg::Tensor strided = cg::Tensor::from_blob(fake, cg::DType::float32, {2}, {2}, cg::device::cuda);
  try {
    (void)cg::encoded_size(cg::detail::TensorToHost{strided});
    FAIL() << "expected cg::TensorError";
  } catch (const cg::TensorError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cg: float32[2] on cuda:0 is not contiguous; make it so on its device before it "
              "is written");
  }
}

} // namespace
