// tensor_test.cpp - tests of cg::Tensor (cg/tensor.hpp): layout, ownership, DLPack, the codec.
//
// Ownership is what DLPack and the channels rely on, so deleters are counted:
// each must run exactly once, after the last reference. The codec must carry
// every dtype, make strided views contiguous on the way, and refuse corrupted
// input and device memory with a message that says what to do instead.
#include "tensor/host_memory.hpp"
#include "tensor/tensor_copy.hpp"
#include <cg/tensor.hpp>

#include "../../../gpu/gpu_skip.hpp"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Shape = std::vector<std::int64_t>;

// Encodes one tensor into a buffer of exactly encoded_size() bytes.
std::vector<std::byte> encode_tensor(const cg::Tensor& t) {
  std::vector<std::byte> buffer(cg::encoded_size(t));
  cg::Encoder e(buffer);
  cg::encode(e, t);
  EXPECT_EQ(e.written(), buffer.size()) << "size() must be exact";
  return buffer;
}

std::vector<float> floats_of(const cg::Tensor& t) {
  const cg::Tensor c = t.contiguous();
  const float* p = c.data<float>();
  return std::vector<float>(p, p + c.numel());
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Tensor, EmptyIsOwnedContiguousRowMajorWithExactSizes) {
  const cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {2, 3, 4});
  EXPECT_TRUE(t.defined());
  EXPECT_TRUE(t.owns_memory());
  EXPECT_EQ(t.device(), cg::device::cpu);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.byte_offset(), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 256, 0u);
  EXPECT_EQ(t.describe(), "float32[2, 3, 4] on cpu");
}

TEST(Tensor, ZeroDimensionalHasOneElementAndZeroExtentHasNone) {
  const cg::Tensor scalar = cg::Tensor::zeros(cg::DType::float64, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8u);
  EXPECT_EQ(*scalar.data<double>(), 0.0);
  const cg::Tensor none = cg::Tensor::empty(cg::DType::int64, {3, 0, 2});
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.nbytes(), 0u);
  EXPECT_TRUE(none.is_contiguous());
  const cg::Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.numel(), 0);
  EXPECT_EQ(undefined.describe(), "undefined tensor");
}

TEST(Tensor, TransposedViewIsNotContiguousAndContiguousCopiesItRowMajor) {
  float matrix[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const cg::Tensor t = cg::Tensor::from_blob(matrix, cg::DType::float32, {3, 2}, {1, 3});
  EXPECT_FALSE(t.owns_memory());
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.nbytes(), 24u);
  const cg::Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TRUE(c.owns_memory());
  EXPECT_EQ(floats_of(c), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const cg::Tensor row = cg::Tensor::from_blob(matrix, cg::DType::float32, {3}, {}, cg::device::cpu,
                                               3 * sizeof(float));
  EXPECT_EQ(row.data<float>(), &matrix[1][0]);
  EXPECT_EQ(row.contiguous().data_ptr(), row.data_ptr()) << "already contiguous: no copy";
}

TEST(Tensor, NegativeStridesAndExtentOneDimensionsAreHandled) {
  float v[4] = {1, 2, 3, 4};
  const cg::Tensor reversed = cg::Tensor::from_blob(v + 3, cg::DType::float32, {4}, {-1});
  EXPECT_FALSE(reversed.is_contiguous());
  EXPECT_EQ(floats_of(reversed), (std::vector<float>{4, 3, 2, 1}));
  const cg::Tensor padded = cg::Tensor::from_blob(v, cg::DType::float32, {2, 1, 2}, {2, 99, 1});
  EXPECT_TRUE(padded.is_contiguous()) << "the stride of an extent-1 dimension does not matter";
  float grid[3][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  const cg::Tensor corner = cg::Tensor::from_blob(&grid[1][1], cg::DType::float32, {2, 2}, {4, 1});
  EXPECT_EQ(floats_of(corner), (std::vector<float>{5, 6, 9, 10}));
}

TEST(Tensor, DataChecksTheElementType) {
  const cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {2});
  EXPECT_NE(t.data<float>(), nullptr);
  EXPECT_EQ(message_of([&] { (void)t.data<double>(); }),
            "cg: Tensor::data<float64>() on a float32 tensor");
  EXPECT_THROW((void)t.data<std::int32_t>(), cg::TensorError);
}

TEST(Tensor, InvalidShapesAreRejectedWithAMessage) {
  EXPECT_EQ(message_of([] {
              cg::Tensor::empty(cg::DType::int8, {2, -1});
            }),
            "cg: Tensor::empty: negative extent in shape [2, -1]");
  float v[2];
  EXPECT_EQ(message_of([&] {
              cg::Tensor::from_blob(v, cg::DType::float32, {2}, {1, 1});
            }),
            "cg: Tensor::from_blob: 2 strides for shape [2]");
  EXPECT_EQ(message_of([] {
              cg::Tensor::empty(cg::DType::int64, {INT64_MAX, 2});
            }),
            "cg: Tensor::empty: int64[9223372036854775807, 2] is too large");
}

TEST(Tensor, AdoptRunsTheDeleterOnceAfterTheLastCopy) {
  int deleted = 0;
  auto* storage = new float[6]{};
  {
    cg::Tensor a = cg::Tensor::adopt(storage,
                                     [&deleted](void* p) {
                                       ++deleted;
                                       delete[] static_cast<float*>(p);
                                     },
                                     cg::DType::float32, {2, 3});
    EXPECT_TRUE(a.owns_memory());
    cg::Tensor b = a;
    a = cg::Tensor();
    EXPECT_EQ(deleted, 0);
    EXPECT_EQ(b.data<float>(), storage);
  }
  EXPECT_EQ(deleted, 1);
}

// A fresh block faults on every page it is first written to (38 ms for
// 64 MiB on the test VM against 7.4 written before), so large blocks are kept.
TEST(TensorHostMemory, ALargeBlockFreedIsGivenToTheNextTensorItFitsZeroedWhenAskedTo) {
  const std::int64_t floats = 2 << 20; // 8 MiB
  void* block = nullptr;
  {
    cg::Tensor a = cg::Tensor::empty(cg::DType::float32, {floats});
    block = a.data_ptr();
    std::memset(block, 0x5a, a.nbytes());
  }
  cg::Tensor b = cg::Tensor::zeros(cg::DType::float32, {floats - 1000});
  EXPECT_EQ(b.data_ptr(), block) << "the block just freed fits and is reused";
  const float* values = b.data<float>();
  EXPECT_TRUE(std::all_of(values, values + b.numel(), [](float v) { return v == 0.0f; }));

  const cg::detail::KeptHostMemory before = cg::detail::kept_host_memory();
  { cg::Tensor small = cg::Tensor::empty(cg::DType::uint8, {1000}); }
  EXPECT_EQ(cg::detail::kept_host_memory().blocks, before.blocks) << "small blocks are freed";

  b = cg::Tensor();
  cg::Tensor quarter = cg::Tensor::empty(cg::DType::float32, {floats / 4});
  EXPECT_NE(quarter.data_ptr(), block) << "a block is not spent on less than half of it";
  cg::Tensor same = cg::Tensor::empty(cg::DType::float32, {floats});
  EXPECT_EQ(same.data_ptr(), block);
}

TEST(TensorHostMemory, FewBlocksAreKeptAndTheOldestGoFirst) {
  std::vector<cg::Tensor> live;
  for (std::size_t i = 0; i < cg::detail::kKeptBlocks + 4; ++i)
    live.push_back(cg::Tensor::empty(cg::DType::uint8, {std::int64_t{2} << 20}));
  void* newest = live.back().data_ptr();
  live.clear();
  const cg::detail::KeptHostMemory kept = cg::detail::kept_host_memory();
  EXPECT_EQ(kept.blocks, cg::detail::kKeptBlocks);
  EXPECT_LE(kept.bytes, cg::detail::kKeptBytes);
  // The newest block kept is the one freed last (clear() destroys in order).
  EXPECT_EQ(cg::Tensor::empty(cg::DType::uint8, {std::int64_t{2} << 20}).data_ptr(), newest);
}

TEST(Tensor, CudaMemoryWithoutCudaIsAClearError) {
  CG_SKIP_WITH_GPU();
  if (cg::built_with_cuda()) {
    // CUDA's own words for "no device" differ by machine (no driver, no
    // device, only the toolkit's stub): the runtime names the step and quotes them.
    EXPECT_THROW(cg::Tensor::empty(cg::DType::float32, {4}, cg::device::cuda), cg::TensorError);
    const std::string message =
        message_of([] { cg::Tensor::empty(cg::DType::float32, {4}, cg::device::cuda); });
    EXPECT_EQ(message.rfind("cg: selecting cuda:0 failed: cudaError", 0), 0u) << message;
    return;
  }
  EXPECT_EQ(message_of([] { cg::Tensor::empty(cg::DType::float32, {4}, cg::device::cuda); }),
            "cg: allocating 16 bytes on cuda:0: this build of the runtime has no CUDA support "
            "(configure with "
            "-DCG_WITH_CUDA=ON on a machine with the CUDA toolkit)");
  const cg::Tensor host = cg::Tensor::zeros(cg::DType::float32, {4});
  EXPECT_THROW(host.to(cg::device::cuda), cg::TensorError);
}

TEST(Tensor, CudaTensorRoundTripsThroughDeviceMemory) {
  CG_SKIP_WITHOUT_GPU();
  float v[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const cg::Tensor host = cg::Tensor::from_blob(v, cg::DType::float32, {3, 2}, {1, 3});
  const cg::Tensor gpu = host.to(cg::device::cuda);
  EXPECT_EQ(gpu.device(), cg::device::cuda);
  EXPECT_TRUE(gpu.is_contiguous());
  EXPECT_EQ(gpu.shape(), (Shape{3, 2}));
  EXPECT_EQ(floats_of(gpu.to(cg::device::cpu)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const cg::Tensor zeros = cg::Tensor::zeros(cg::DType::float32, {5}, cg::device::cuda);
  EXPECT_EQ(floats_of(zeros.to(cg::device::cpu)), (std::vector<float>(5, 0.0f)));
  DLManagedTensor* m = gpu.to_dlpack();
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  const cg::Tensor back = cg::Tensor::from_dlpack(m);
  EXPECT_EQ(back.data_ptr(), gpu.data_ptr());
  EXPECT_EQ(back.device(), cg::device::cuda);
}

// --- DLPack ---

TEST(TensorDlpack, ExportThenImportSharesTheDataAndRunsTheDeleterExactlyOnce) {
  int deleted = 0;
  auto* storage = new std::int32_t[6]{1, 2, 3, 4, 5, 6};
  cg::Tensor original = cg::Tensor::adopt(storage,
                                          [&deleted](void* p) {
                                            ++deleted;
                                            delete[] static_cast<std::int32_t*>(p);
                                          },
                                          cg::DType::int32, {2, 3});
  DLManagedTensor* managed = original.to_dlpack();
  original = cg::Tensor();
  EXPECT_EQ(deleted, 0) << "the export keeps the memory alive";
  {
    cg::Tensor imported = cg::Tensor::from_dlpack(managed);
    EXPECT_EQ(imported.data_ptr(), storage) << "zero copy";
    EXPECT_EQ(imported.dtype(), cg::DType::int32);
    EXPECT_EQ(imported.shape(), (Shape{2, 3}));
    EXPECT_EQ(imported.strides(), (Shape{3, 1}));
    EXPECT_TRUE(imported.owns_memory());
    cg::Tensor copy = imported;
    imported = cg::Tensor();
    EXPECT_EQ(deleted, 0);
    EXPECT_EQ(copy.data<std::int32_t>()[5], 6);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(TensorDlpack, ExportDescribesDtypeShapeStridesAndDevice) {
  bool flags[2][2] = {{true, false}, {false, true}};
  const cg::Tensor t =
      cg::Tensor::from_blob(flags, cg::DType::boolean, {2, 2}, {1, 2}, cg::device::cpu, 0);
  DLManagedTensor* m = t.to_dlpack();
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.data, static_cast<void*>(flags));
  EXPECT_EQ(dl.byte_offset, 0u);
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.device.device_id, 0);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, 6) << "kDLBool";
  EXPECT_EQ(dl.dtype.bits, 8);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(std::vector<std::int64_t>(dl.shape, dl.shape + 2), (Shape{2, 2}));
  EXPECT_EQ(std::vector<std::int64_t>(dl.strides, dl.strides + 2), (Shape{1, 2}));
  m->deleter(m);

  const struct {
    cg::DType dtype;
    std::uint8_t code;
    std::uint8_t bits;
  } expected[] = {{cg::DType::float16, kDLFloat, 16}, {cg::DType::bfloat16, kDLBfloat, 16},
                  {cg::DType::float32, kDLFloat, 32}, {cg::DType::float64, kDLFloat, 64},
                  {cg::DType::int8, kDLInt, 8},       {cg::DType::int32, kDLInt, 32},
                  {cg::DType::int64, kDLInt, 64},     {cg::DType::uint8, kDLUInt, 8}};
  for (const auto& e : expected) {
    DLManagedTensor* each = cg::Tensor::empty(e.dtype, {1}).to_dlpack();
    EXPECT_EQ(each->dl_tensor.dtype.code, e.code) << cg::to_string(e.dtype);
    EXPECT_EQ(each->dl_tensor.dtype.bits, e.bits) << cg::to_string(e.dtype);
    EXPECT_EQ(cg::Tensor::from_dlpack(each).dtype(), e.dtype) << "and back";
  }
}

// A DLManagedTensor as another framework would make it, with a counted deleter.
struct Foreign {
  std::vector<std::byte> bytes = std::vector<std::byte>(64);
  std::vector<std::int64_t> shape;
  DLManagedTensor managed{};
  int* deleted = nullptr;

  static DLManagedTensor* make(int* deleted, DLDataType dtype, std::vector<std::int64_t> shape,
                               DLDevice device, std::uint64_t byte_offset) {
    auto* f = new Foreign;
    f->deleted = deleted;
    f->shape = std::move(shape);
    f->managed.dl_tensor = DLTensor{
        f->bytes.data(), device,     static_cast<int>(f->shape.size()), dtype, f->shape.data(),
        nullptr,         byte_offset};
    f->managed.manager_ctx = f;
    f->managed.deleter = [](DLManagedTensor* self) {
      auto* owner = static_cast<Foreign*>(self->manager_ctx);
      ++*owner->deleted;
      delete owner;
    };
    return &f->managed;
  }
};

TEST(TensorDlpack, ImportOfAForeignTensorHonoursByteOffsetAndNullStrides) {
  int deleted = 0;
  DLManagedTensor* m =
      Foreign::make(&deleted, DLDataType{kDLFloat, 32, 1}, {2, 4}, DLDevice{kDLCPU, 0}, 16);
  auto* bytes = static_cast<std::byte*>(m->dl_tensor.data);
  {
    const cg::Tensor t = cg::Tensor::from_dlpack(m);
    EXPECT_EQ(t.data_ptr(), bytes + 16);
    EXPECT_EQ(t.storage(), bytes);
    EXPECT_EQ(t.strides(), (Shape{4, 1})) << "null strides mean contiguous";
    EXPECT_EQ(t.dtype(), cg::DType::float32);
  }
  EXPECT_EQ(deleted, 1);

  DLManagedTensor* pinned =
      Foreign::make(&deleted, DLDataType{kDLInt, 64, 1}, {1}, DLDevice{kDLCUDAHost, 0}, 0);
  EXPECT_EQ(cg::Tensor::from_dlpack(pinned).device(), cg::device::cpu);
  DLManagedTensor* gpu =
      Foreign::make(&deleted, DLDataType{kDLBfloat, 16, 1}, {1}, DLDevice{kDLCUDA, 1}, 0);
  EXPECT_EQ(cg::Tensor::from_dlpack(gpu).device(), (cg::Device{cg::DeviceKind::cuda, 1}));
  EXPECT_EQ(deleted, 3);
}

TEST(TensorDlpack, ImportRejectsWhatATensorCannotHoldAndStillRunsTheDeleter) {
  int deleted = 0;
  EXPECT_EQ(message_of([&] {
              cg::Tensor::from_dlpack(Foreign::make(&deleted, DLDataType{kDLFloat, 32, 4}, {2},
                                                    DLDevice{kDLCPU, 0}, 0));
            }),
            "cg: Tensor::from_dlpack: unsupported DLPack dtype (code 2, 32 bits, 4 lanes)");
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(message_of([&] {
              cg::Tensor::from_dlpack(
                  Foreign::make(&deleted, DLDataType{kDLInt, 16, 1}, {2}, DLDevice{kDLCPU, 0}, 0));
            }),
            "cg: Tensor::from_dlpack: unsupported DLPack dtype (code 0, 16 bits, 1 lanes)");
  EXPECT_EQ(deleted, 2);
  EXPECT_EQ(message_of([&] {
              cg::Tensor::from_dlpack(Foreign::make(&deleted, DLDataType{kDLFloat, 32, 1}, {2},
                                                    DLDevice{kDLVulkan, 0}, 0));
            }),
            "cg: Tensor::from_dlpack: unsupported DLPack device type 7");
  EXPECT_EQ(deleted, 3);
  EXPECT_EQ(message_of([] { cg::Tensor::from_dlpack(nullptr); }),
            "cg: Tensor::from_dlpack of a null DLManagedTensor");
}

// --- the codec ---

// A tensor of `dtype` and `shape` whose bytes are all valid for the dtype and
// distinct from element to element.
cg::Tensor patterned(cg::DType dtype, const Shape& shape) {
  cg::Tensor t = cg::Tensor::empty(dtype, shape);
  auto* bytes = static_cast<std::uint8_t*>(t.data_ptr());
  for (std::size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = dtype == cg::DType::boolean ? static_cast<std::uint8_t>(i % 3 == 0)
                                           : static_cast<std::uint8_t>(i * 7 + 1);
  }
  return t;
}

TEST(TensorCodec, RoundTripsEveryDtypeIntoAnOwnedContiguousTensor) {
  for (int d = 0; d < cg::dtype_count; ++d) {
    const auto dtype = static_cast<cg::DType>(d);
    const cg::Tensor t = patterned(dtype, {2, 3});
    const std::vector<std::byte> wire = encode_tensor(t);
    // The fields (2 + 8 + 2 * 16 + 8 bytes), padded to 64, then the elements.
    EXPECT_EQ(wire.size(), 64 + t.nbytes()) << cg::to_string(dtype);
    const cg::Tensor back = cg::decode_all<cg::Tensor>(wire);
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), (Shape{2, 3}));
    EXPECT_EQ(back.strides(), (Shape{3, 1}));
    EXPECT_TRUE(back.owns_memory());
    EXPECT_NE(back.data_ptr(), t.data_ptr());
    ASSERT_EQ(back.nbytes(), t.nbytes());
    EXPECT_EQ(std::memcmp(back.data_ptr(), t.data_ptr(), t.nbytes()), 0) << cg::to_string(dtype);
  }
}

TEST(TensorCodec, MakesANonContiguousTensorContiguousWhileCopying) {
  std::int64_t grid[3][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  // Columns 3, 1 of every row, transposed: shape [2, 3], strides [-2, 4].
  const cg::Tensor view = cg::Tensor::from_blob(&grid[0][3], cg::DType::int64, {2, 3}, {-2, 4});
  ASSERT_FALSE(view.is_contiguous());
  const cg::Tensor back = cg::decode_all<cg::Tensor>(encode_tensor(view));
  EXPECT_EQ(back.shape(), (Shape{2, 3}));
  EXPECT_TRUE(back.is_contiguous());
  const std::int64_t* p = back.data<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(p, p + 6), (std::vector<std::int64_t>{3, 7, 11, 1, 5, 9}));
}

TEST(TensorCodec, CarriesScalarsEmptyAndUndefinedTensors) {
  cg::Tensor scalar = cg::Tensor::empty(cg::DType::float64, {});
  *scalar.data<double>() = 2.5;
  const cg::Tensor s = cg::decode_all<cg::Tensor>(encode_tensor(scalar));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(*s.data<double>(), 2.5);
  const cg::Tensor e =
      cg::decode_all<cg::Tensor>(encode_tensor(cg::Tensor::empty(cg::DType::int8, {4, 0})));
  EXPECT_EQ(e.shape(), (Shape{4, 0}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(encode_tensor(cg::Tensor()).size(), 1u);
  EXPECT_FALSE(cg::decode_all<cg::Tensor>(encode_tensor(cg::Tensor())).defined());
  static_assert(cg::is_serializable_v<cg::Tensor>);
  static_assert(cg::is_serializable_v<std::vector<cg::Tensor>>);
}

TEST(TensorCodec, CorruptedInputIsRejectedNotRead) {
  const std::vector<std::byte> good = encode_tensor(patterned(cg::DType::boolean, {4}));
  auto corrupt = [&](std::size_t at, std::uint8_t value) {
    std::vector<std::byte> bad = good;
    bad[at] = std::byte{value};
    return message_of([&] { cg::decode_all<cg::Tensor>(bad); });
  };
  EXPECT_EQ(corrupt(0, 9), "cg: corrupted tensor: kind byte 9");
  EXPECT_EQ(corrupt(1, 42), "cg: corrupted tensor: dtype byte 42");
  EXPECT_EQ(corrupt(2 + 8 + 8, 2),
            "cg: corrupted tensor: strides [2] are not the contiguous strides of [4]");
  EXPECT_EQ(corrupt(2 + 8 + 16, 5),
            "cg: corrupted tensor: 5 bytes for bool[4] (4 expected, 4 remain)");
  EXPECT_EQ(corrupt(2 + 8 + 16 + 8, 1),
            "cg: corrupted tensor: a byte of the header's padding is not zero");
  EXPECT_EQ(corrupt(63, 1), "cg: corrupted tensor: a byte of the header's padding is not zero");
  EXPECT_EQ(corrupt(good.size() - 1, 2), "cg: corrupted tensor: invalid bool byte 2");
  std::vector<std::byte> truncated(good.begin(), good.end() - 1);
  EXPECT_EQ(message_of([&] { cg::decode_all<cg::Tensor>(truncated); }),
            "cg: corrupted tensor: 4 bytes for bool[4] (4 expected, 3 remain)");
  EXPECT_THROW(cg::decode_all<cg::Tensor>(std::span(good.data(), 5)), cg::DecodeError);
}

TEST(TensorCodec, AViewOfAnEncodedTensorBorrowsItsElementsWhereTheyAre) {
  const cg::Tensor t = patterned(cg::DType::float32, {2, 3});
  const std::vector<std::byte> encoded = encode_tensor(t);
  const cg::Tensor view = cg::detail::decode_tensor_view(encoded);
  EXPECT_EQ(view.shape(), (Shape{2, 3}));
  EXPECT_EQ(view.device(), cg::device::cpu);
  EXPECT_EQ(static_cast<const std::byte*>(view.data_ptr()), encoded.data() + 64);
  EXPECT_EQ(encoded.size(), 64u + 24u);
  EXPECT_EQ(floats_of(view), floats_of(t));
  EXPECT_FALSE(cg::detail::decode_tensor_view(encode_tensor(cg::Tensor())).defined());
  std::vector<std::byte> longer = encoded;
  longer.push_back(std::byte{0});
  EXPECT_EQ(message_of([&] { cg::detail::decode_tensor_view(longer); }),
            "cg: 1 trailing bytes after a tensor");
  std::vector<std::byte> bad = encoded;
  bad[1] = std::byte{42};
  EXPECT_EQ(message_of([&] { cg::detail::decode_tensor_view(bad); }),
            "cg: corrupted tensor: dtype byte 42");
}

TEST(TensorCodec, ElementsStartOnACacheLineOfTheEncodingWhateverTheRank) {
  for (const Shape& shape :
       {Shape{}, Shape{3}, Shape{2, 3}, Shape{1, 2, 3}, Shape{1, 1, 1, 1, 2}}) {
    const cg::Tensor t = patterned(cg::DType::float16, shape);
    const std::vector<std::byte> wire = encode_tensor(t);
    const std::size_t header = wire.size() - t.nbytes();
    EXPECT_EQ(header % 64, 0u) << shape.size() << " dimensions";
    EXPECT_GE(header, 2 + 8 + 16 * shape.size() + 8) << shape.size() << " dimensions";
    EXPECT_LT(header, 2 + 8 + 16 * shape.size() + 8 + 64) << shape.size() << " dimensions";
    EXPECT_EQ(cg::decode_all<cg::Tensor>(wire).shape(), shape);
  }
}

// A tensor whose elements already sit where its encoding puts them (a
// graph's input tensor made in place) is encoded without copying them: the
// copy would be a memcpy onto itself, which AddressSanitizer reports.
TEST(TensorCodec, ElementsAlreadyWhereTheyGoAreNotCopied) {
  alignas(64) std::array<std::byte, 64 + 6 * 4> buffer{};
  const cg::Tensor in_place = cg::Tensor::from_blob(buffer.data() + 64, cg::DType::float32, {2, 3});
  for (int i = 0; i < 6; ++i)
    in_place.data<float>()[i] = static_cast<float>(i) + 0.5f;
  cg::Encoder e(buffer);
  cg::encode(e, in_place);
  EXPECT_EQ(e.written(), buffer.size());
  const cg::Tensor back = cg::decode_all<cg::Tensor>(buffer);
  EXPECT_EQ(floats_of(back), (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}));
}

// A method parameter cg::TensorView reads an encoded tensor in place
// (cg/detail/in_place.hpp): checked as decoding checks it, then viewed
// where its elements are, when they are aligned for the dtype.
TEST(TensorInPlace, AnEncodedTensorIsViewedWhereItsElementsAreAndCheckedAsDecodingChecksIt) {
  static_assert(cg::detail::readable_in_place_v<cg::Tensor>);
  static_assert(std::is_same_v<cg::detail::graph_value_t<cg::TensorView>, cg::Tensor>);
  const cg::Tensor t = patterned(cg::DType::float32, {2, 3});
  alignas(64) std::array<std::byte, 64 + 24 + 4> buffer{};
  const std::vector<std::byte> encoded = encode_tensor(t);
  std::memcpy(buffer.data(), encoded.data(), encoded.size());
  const std::span<const std::byte> message(buffer.data(), encoded.size());
  cg::detail::validate_in_place<cg::Tensor>(message);
  const std::optional<cg::TensorView> view = cg::detail::view_in_place<cg::Tensor>(message);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(static_cast<const std::byte*>(view->data_ptr()), buffer.data() + 64);
  EXPECT_EQ(view->shape(), (Shape{2, 3}));
  EXPECT_EQ(view->describe(), "float32[2, 3] on cpu");
  const cg::Tensor kept = view->clone();
  EXPECT_TRUE(kept.owns_memory());
  EXPECT_NE(kept.data_ptr(), view->data_ptr());
  EXPECT_EQ(floats_of(kept), floats_of(t));

  // Shifted by 2 bytes: the floats are misaligned, so a copy is decoded instead.
  std::memmove(buffer.data() + 2, buffer.data(), encoded.size());
  EXPECT_FALSE(cg::detail::view_in_place<cg::Tensor>({buffer.data() + 2, encoded.size()}));

  std::vector<std::byte> bools = encode_tensor(patterned(cg::DType::boolean, {4}));
  bools.back() = std::byte{7};
  EXPECT_EQ(message_of([&] { cg::detail::validate_in_place<cg::Tensor>(bools); }),
            "cg: corrupted tensor: invalid bool byte 7");
  std::vector<std::byte> longer = encoded;
  longer.push_back(std::byte{0});
  EXPECT_EQ(message_of([&] { cg::detail::validate_in_place<cg::Tensor>(longer); }),
            "cg: 1 trailing bytes after a tensor");
}

TEST(TensorInPlace, AViewOfAStridedTensorClonesContiguous) {
  std::int64_t grid[2][3] = {{0, 1, 2}, {3, 4, 5}};
  const cg::TensorView columns(
      cg::Tensor::from_blob(&grid[0][0], cg::DType::int64, {3, 2}, {1, 3}));
  EXPECT_FALSE(columns.is_contiguous());
  const cg::Tensor copy = columns.clone();
  EXPECT_TRUE(copy.is_contiguous());
  const std::int64_t* p = copy.data<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(p, p + 6), (std::vector<std::int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorCodec, CudaTensorIsAnErrorThatNamesTensorTransports) {
  alignas(16) static float device_address_stand_in[4]; // never dereferenced
  const cg::Tensor gpu = cg::Tensor::from_blob(device_address_stand_in, cg::DType::float32, {4}, {},
                                               cg::Device{cg::DeviceKind::cuda, 1});
  const std::string expected = "cg: a tensor on cuda:1 cannot be serialized through shared memory: "
                               "give the edge a tensor transport "
                               "(v.with_tensor_transport(cg::transport::nccl)) or copy it to the "
                               "host first (t.to(cg::device::cpu))";
  EXPECT_EQ(message_of([&] { (void)cg::encoded_size(gpu); }), expected);
  std::vector<std::byte> buffer(256);
  cg::Encoder e(buffer);
  EXPECT_EQ(message_of([&] { cg::encode(e, gpu); }), expected);
  EXPECT_EQ(e.written(), 0u);
}

} // namespace
