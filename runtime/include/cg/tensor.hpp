// cg/tensor.hpp - cg::Tensor: a typed, strided view of host or CUDA memory.
//
//   cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {2, 3});   // owned, host
//   float* p = t.data<float>();                                      // checks the dtype
//   cg::Tensor row = cg::Tensor::from_blob(p + 3, cg::DType::float32, {3});  // borrowed
//   cg::Tensor col = cg::Tensor::from_blob(p, cg::DType::float32, {2}, {3}); // strided
//   col.is_contiguous();                                             // false
//
//   DLManagedTensor* m = t.to_dlpack();          // zero copy: hand to PyTorch, CuPy, ...
//   cg::Tensor back = cg::Tensor::from_dlpack(m);  // zero copy: the same data_ptr()
//
// A Tensor is a handle, like a shared_ptr: copies share the memory (and
// writes through one are seen by all). Its memory is either
//   - owned: shared by every Tensor (and every DLPack export) made from it;
//     the deleter runs once, when the last of them goes away; or
//   - borrowed (from_blob): a raw pointer the caller keeps alive for as long
//     as any Tensor or export refers to it.
// The element (i0, i1, ...) is at byte
//   storage + byte_offset + (i0 * strides[0] + i1 * strides[1] + ...) * dtype_size
// with strides in elements (as DLPack and PyTorch count them; they may be
// negative or zero). `data<T>()` is the address of element (0, 0, ...).
//
// Host tensors are read and written through data<T>(); CUDA tensors hold a
// device pointer and need CUDA calls (or to(device::cpu)) to be read. CUDA
// memory can only be allocated or copied (empty, zeros, to) when the runtime
// is built with CUDA (CG_WITH_CUDA); otherwise those calls throw
// cg::TensorError saying so. (from_blob merely describes memory, anywhere.)
//
// Values of type cg::Tensor travel through channels (cg::Codec<cg::Tensor>
// below) when they are on the host: dtype, shape, strides and the elements in
// one copy. A CUDA tensor must be given a tensor transport instead.
//
// DLPack types come from <dlpack/dlpack.h> (Debian: libdlpack-dev); include it
// to use to_dlpack() / from_dlpack(). Version 0.6 is assumed; bool tensors are
// exchanged with the type code of later versions (kDLBool = 6), 8 bits.
#pragma once

#include <cg/detail/in_place.hpp>
#include <cg/device.hpp>
#include <cg/dtype.hpp>
#include <cg/errors.hpp>
#include <cg/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct DLManagedTensor; // <dlpack/dlpack.h>

namespace cg {

/// A tensor operation's preconditions failed (wrong dtype, device, shape) or
/// CUDA is not available; what() says which and how.
class TensorError : public Error {
public:
  using Error::Error;
};

class Tensor {
public:
  /// Called once with the storage pointer when owned memory is released.
  using Deleter = std::function<void(void* storage)>;

  /// An undefined tensor: defined() is false, no dimensions, no elements.
  Tensor() = default;

  /// Owned, contiguous, uninitialised memory for `shape` on `device` (host:
  /// 256-byte aligned; cuda: cudaMalloc on that device). Throws TensorError
  /// for a negative extent, a size that overflows, or a CUDA device when the
  /// runtime is built without CUDA; std::bad_alloc when memory runs out.
  static Tensor empty(DType dtype, std::vector<std::int64_t> shape, Device device = device::cpu);

  /// As empty(), with every byte zero.
  static Tensor zeros(DType dtype, std::vector<std::int64_t> shape, Device device = device::cpu);

  /// Borrowed: a view of memory the caller owns and keeps alive. Empty
  /// `strides` means contiguous (row-major). Throws TensorError when strides
  /// and shape differ in length or an extent is negative.
  static Tensor from_blob(void* data, DType dtype, std::vector<std::int64_t> shape,
                          std::vector<std::int64_t> strides = {}, Device device = device::cpu,
                          std::uint64_t byte_offset = 0);

  /// Owned: takes `storage` and calls `deleter(storage)` when the last Tensor
  /// (or DLPack export) sharing it goes away, or right away if this throws.
  static Tensor adopt(void* storage, Deleter deleter, DType dtype, std::vector<std::int64_t> shape,
                      std::vector<std::int64_t> strides = {}, Device device = device::cpu,
                      std::uint64_t byte_offset = 0);

  /// A DLPack export sharing this tensor's memory (no copy): the managed
  /// tensor keeps owned memory alive until its deleter is called, which the
  /// consumer must do exactly once. Borrowed memory stays the caller's to keep
  /// alive. Throws TensorError for an undefined tensor.
  DLManagedTensor* to_dlpack() const;

  /// Takes ownership of `managed` (no copy): its deleter runs when the last
  /// Tensor made from it goes away, or before this throws TensorError for
  /// what cg::Tensor cannot represent (lanes != 1, an unsupported type code or
  /// width, a device other than CPU/CUDA/CUDA-host, a negative extent).
  /// A null pointer is an error too. CUDA-host (pinned) memory becomes `cpu`.
  static Tensor from_dlpack(DLManagedTensor* managed);

  bool defined() const noexcept { return defined_; }
  DType dtype() const noexcept { return dtype_; }
  Device device() const noexcept { return device_; }
  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  const std::vector<std::int64_t>& strides() const noexcept { return strides_; } // in elements
  std::int64_t dim() const noexcept { return static_cast<std::int64_t>(shape_.size()); }
  std::uint64_t byte_offset() const noexcept { return byte_offset_; }
  std::size_t element_size() const noexcept { return dtype_size(dtype_); }

  /// Product of the extents (1 for a 0-d tensor, 0 when any extent is 0 or
  /// the tensor is undefined).
  std::int64_t numel() const noexcept;

  /// Bytes of the elements: numel() * element_size() (not the span of a
  /// strided view in memory).
  std::size_t nbytes() const noexcept;

  /// Row-major with no gaps: strides are the contiguous strides of shape
  /// (the stride of an extent-1 dimension does not matter).
  bool is_contiguous() const noexcept;

  /// True for owned memory (Tensor::empty, adopt, from_dlpack, decoding).
  bool owns_memory() const noexcept { return owner_ != nullptr; }

  /// The start of the allocation or blob, before byte_offset.
  void* storage() const noexcept { return storage_; }

  /// The address of element (0, 0, ...): storage() + byte_offset().
  void* data_ptr() const noexcept { return static_cast<std::byte*>(storage_) + byte_offset_; }

  /// data_ptr() as T*, after checking that T is the element type (dtype_of<T>).
  /// Throws TensorError naming both types otherwise.
  template <class T> T* data() const {
    if (dtype_of<T> != dtype_)
      throw_dtype_mismatch(dtype_of<T>);
    return static_cast<T*>(data_ptr());
  }

  /// This tensor if it is contiguous, else a contiguous owned copy (host only;
  /// a non-contiguous CUDA tensor throws TensorError).
  Tensor contiguous() const;

  /// An owned contiguous copy on `device` (host <-> CUDA through cudaMemcpy);
  /// this tensor itself when it is already there. Throws TensorError without
  /// CUDA, or for a non-contiguous CUDA source.
  Tensor to(Device device) const;

  /// "float32[2, 3] on cpu", for messages.
  std::string describe() const;

  /// The contiguous (row-major) strides of `shape`.
  static std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);

private:
  [[noreturn]] void throw_dtype_mismatch(DType requested) const;

  std::shared_ptr<void> owner_; // owned memory: releases it; null when borrowed
  void* storage_ = nullptr;
  std::uint64_t byte_offset_ = 0;
  DType dtype_ = DType::float32;
  Device device_ = device::cpu;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> strides_;
  bool defined_ = false;
};

/// A tensor read where it arrived, for the length of one method call: a
/// method parameter of this type takes a cg::Value<cg::Tensor> and sees its
/// elements in the channel's memory, with no copy, as std::span<const E>
/// sees a std::vector<E> (cg/detail/in_place.hpp):
///
///   struct CG_ACTOR Sink {
///     double total(cg::TensorView t) {              // t: float32, any shape
///       const float* p = t.data<float>();           // in the channel's memory
///       return std::accumulate(p, p + t.numel(), 0.0);
///     }
///   };
///
/// The elements are read-only and valid until the method returns; clone()
/// keeps a copy. (A tensor delivered on a GPU, or one whose elements could
/// not be viewed where they are, is viewed in the copy made of it.)
class TensorView {
public:
  /// Views `t` (which must outlive the view): how a Tensor the actor holds
  /// is passed to a TensorView parameter.
  TensorView(const Tensor& t) : tensor_(t) {} // NOLINT(google-explicit-constructor)

  DType dtype() const noexcept { return tensor_.dtype(); }
  Device device() const noexcept { return tensor_.device(); }
  const std::vector<std::int64_t>& shape() const noexcept { return tensor_.shape(); }
  const std::vector<std::int64_t>& strides() const noexcept { return tensor_.strides(); }
  std::int64_t dim() const noexcept { return tensor_.dim(); }
  std::int64_t numel() const noexcept { return tensor_.numel(); }
  std::size_t nbytes() const noexcept { return tensor_.nbytes(); }
  bool is_contiguous() const noexcept { return tensor_.is_contiguous(); }
  const void* data_ptr() const noexcept { return tensor_.data_ptr(); }
  /// data_ptr() as const T*, after checking that T is the element type.
  template <class T> const T* data() const { return tensor_.data<T>(); }
  std::string describe() const { return tensor_.describe(); }

  /// An owned contiguous copy on the same device, to keep after the call.
  Tensor clone() const;

private:
  Tensor tensor_; // borrowed where it arrived, or the actor's own
};

namespace detail {
/// Reading a cg::Tensor in place (cg/detail/in_place.hpp): validated as
/// Codec<Tensor>::decode checks it, viewed where its elements are when they
/// are aligned for its dtype.
template <> struct InPlace<Tensor> {
  using view = TensorView;
  static void validate(std::span<const std::byte> bytes);
  static std::optional<TensorView> view_of(std::span<const std::byte> bytes);
};
template <> struct graph_value<TensorView> {
  using type = Tensor;
};
} // namespace detail

/// A host tensor on the wire: u8 1 (0 alone for an undefined Tensor), u8 dtype, u64 ndim, the shape
/// and the strides (i64 each; always the contiguous ones), u64 byte count, zero bytes up to
/// the next multiple of 64 from the encoding's start, then the elements row-major, a
/// non-contiguous tensor being made contiguous while it is copied into the buffer (a
/// contiguous one whose elements are already where they go, as a graph's input tensor made
/// in place is, is not copied at all). Decoding gives an owned contiguous host tensor and
/// checks everything (dtype, extents, strides, byte count, padding, bool bytes are 0 or 1).
/// A CUDA tensor throws TensorError: it needs a tensor transport.
template <> struct Codec<Tensor> {
  static std::size_t size(const Tensor& t);
  static void encode(Encoder& e, const Tensor& t);
  static Tensor decode(Decoder& d);
};

} // namespace cg
