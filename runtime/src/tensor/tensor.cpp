// tensor.cpp - cg::Tensor: construction, DLPack and the wire codec.
//
// Owned memory is a shared_ptr<void> whose deleter releases it (host_free,
// cudaFree, the user's deleter, or a DLPack producer's deleter), so copies of
// a Tensor, slices made by the user with from_blob over them and DLPack
// exports all share one reference count. Strided copies are in
// tensor_copy.cpp.
#include <cg/tensor.hpp>

#include <dlpack/dlpack.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "tensor/cuda_memory.hpp"
#include "tensor/host_memory.hpp"
#include "tensor/tensor_copy.hpp"
#include "tensor/tensor_wire.hpp"

namespace cg {
namespace {

// kDLBool arrived in DLPack 0.8; the installed header (0.6) does not have it.
constexpr std::uint8_t dl_bool_code = 6;

std::string shape_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 0)
      s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

void check_extents(const std::vector<std::int64_t>& shape, const char* who) {
  for (const std::int64_t extent : shape) {
    if (extent < 0) {
      throw TensorError(std::string("cg: ") + who + ": negative extent in shape " +
                        shape_text(shape));
    }
  }
}

// numel * element size, or throws when either overflows.
std::size_t checked_bytes(DType dtype, const std::vector<std::int64_t>& shape, const char* who) {
  std::uint64_t count = 1;
  for (const std::int64_t extent : shape) {
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(extent), &count))
      count = UINT64_MAX;
  }
  std::uint64_t bytes = 0;
  if (count > static_cast<std::uint64_t>(INT64_MAX) ||
      __builtin_mul_overflow(count, std::uint64_t{dtype_size(dtype)}, &bytes) ||
      bytes > static_cast<std::uint64_t>(PTRDIFF_MAX)) {
    throw TensorError(std::string("cg: ") + who + ": " + std::string(to_string(dtype)) +
                      shape_text(shape) + " is too large");
  }
  return static_cast<std::size_t>(bytes);
}

DLDataType to_dl(DType t) noexcept {
  const auto bits = static_cast<std::uint8_t>(dtype_size(t) * 8);
  switch (t) {
  case DType::float16:
  case DType::float32:
  case DType::float64:
    return DLDataType{kDLFloat, bits, 1};
  case DType::bfloat16:
    return DLDataType{kDLBfloat, bits, 1};
  case DType::int8:
  case DType::int32:
  case DType::int64:
    return DLDataType{kDLInt, bits, 1};
  case DType::uint8:
    return DLDataType{kDLUInt, bits, 1};
  case DType::boolean:
    return DLDataType{dl_bool_code, bits, 1};
  }
  return DLDataType{kDLOpaqueHandle, 0, 1};
}

bool from_dl(DLDataType t, DType& out) noexcept {
  if (t.lanes != 1)
    return false;
  const int code = t.code;
  const int bits = t.bits;
  if (code == kDLFloat && bits == 16)
    out = DType::float16;
  else if (code == kDLFloat && bits == 32)
    out = DType::float32;
  else if (code == kDLFloat && bits == 64)
    out = DType::float64;
  else if (code == kDLBfloat && bits == 16)
    out = DType::bfloat16;
  else if (code == kDLInt && bits == 8)
    out = DType::int8;
  else if (code == kDLInt && bits == 32)
    out = DType::int32;
  else if (code == kDLInt && bits == 64)
    out = DType::int64;
  else if (code == kDLUInt && bits == 8)
    out = DType::uint8;
  else if (code == dl_bool_code && bits == 8)
    out = DType::boolean;
  else
    return false;
  return true;
}

// What a DLPack export owns: the managed tensor handed out, the Tensor that
// keeps the memory alive and the arrays the DLTensor points into.
struct DlpackExport {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

void delete_export(DLManagedTensor* self) { delete static_cast<DlpackExport*>(self->manager_ctx); }

} // namespace

std::vector<std::int64_t> Tensor::contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

Tensor Tensor::empty(DType dtype, std::vector<std::int64_t> shape, Device device) {
  check_extents(shape, "Tensor::empty");
  const std::size_t bytes = checked_bytes(dtype, shape, "Tensor::empty");
  Tensor t;
  if (device.kind == DeviceKind::cuda) {
    t.storage_ = detail::cuda_allocate(bytes, device.index);
    const int index = device.index;
    t.owner_ = std::shared_ptr<void>(t.storage_, [index](void* p) { detail::cuda_free(p, index); });
  } else {
    device = device::cpu;
    const detail::HostBlock block = detail::host_allocate(bytes);
    t.storage_ = block.memory;
    t.owner_ = std::shared_ptr<void>(block.memory, [block](void*) { detail::host_free(block); });
  }
  t.dtype_ = dtype;
  t.device_ = device;
  t.strides_ = contiguous_strides(shape);
  t.shape_ = std::move(shape);
  t.defined_ = true;
  return t;
}

Tensor Tensor::zeros(DType dtype, std::vector<std::int64_t> shape, Device device) {
  Tensor t = empty(dtype, std::move(shape), device);
  if (t.device_.kind == DeviceKind::cuda) {
    detail::cuda_zero(t.storage_, t.nbytes(), t.device_.index);
  } else {
    std::memset(t.storage_, 0, t.nbytes());
  }
  return t;
}

Tensor Tensor::from_blob(void* data, DType dtype, std::vector<std::int64_t> shape,
                         std::vector<std::int64_t> strides, Device device,
                         std::uint64_t byte_offset) {
  check_extents(shape, "Tensor::from_blob");
  if (!strides.empty() && strides.size() != shape.size()) {
    throw TensorError("cg: Tensor::from_blob: " + std::to_string(strides.size()) +
                      " strides for shape " + shape_text(shape));
  }
  if (!is_valid(dtype))
    throw TensorError("cg: Tensor::from_blob: invalid dtype");
  Tensor t;
  t.storage_ = data;
  t.byte_offset_ = byte_offset;
  t.dtype_ = dtype;
  t.device_ = device.kind == DeviceKind::cpu ? device::cpu : device;
  t.strides_ = strides.empty() ? contiguous_strides(shape) : std::move(strides);
  t.shape_ = std::move(shape);
  t.defined_ = true;
  return t;
}

Tensor Tensor::adopt(void* storage, Deleter deleter, DType dtype, std::vector<std::int64_t> shape,
                     std::vector<std::int64_t> strides, Device device, std::uint64_t byte_offset) {
  if (!deleter)
    throw TensorError("cg: Tensor::adopt needs a deleter (use from_blob for borrowed memory)");
  // Own it first, so that the deleter runs (once) whatever throws below.
  std::shared_ptr<void> owner(storage, [d = std::move(deleter)](void* p) { d(p); });
  Tensor t = from_blob(storage, dtype, std::move(shape), std::move(strides), device, byte_offset);
  t.owner_ = std::move(owner);
  return t;
}

std::int64_t Tensor::numel() const noexcept {
  if (!defined_)
    return 0;
  std::int64_t n = 1;
  for (const std::int64_t extent : shape_)
    n *= extent;
  return n;
}

std::size_t Tensor::nbytes() const noexcept {
  return static_cast<std::size_t>(numel()) * element_size();
}

bool Tensor::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 0)
      return true; // no elements: any layout is contiguous
    if (shape_[i] != 1 && strides_[i] != expected)
      return false;
    expected *= shape_[i];
  }
  return true;
}

void Tensor::throw_dtype_mismatch(DType requested) const {
  throw TensorError("cg: Tensor::data<" + std::string(to_string(requested)) + ">() on a " +
                    std::string(to_string(dtype_)) + " tensor");
}

std::string Tensor::describe() const {
  if (!defined_)
    return "undefined tensor";
  return std::string(to_string(dtype_)) + shape_text(shape_) + " on " + to_string(device_);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous())
    return *this;
  if (device_.kind != DeviceKind::cpu) {
    throw TensorError("cg: Tensor::contiguous: copying a strided " + describe() +
                      " needs a GPU kernel");
  }
  Tensor out = empty(dtype_, shape_);
  detail::gather(*this, static_cast<std::byte*>(out.data_ptr()));
  return out;
}

Tensor Tensor::to(Device device) const {
  if (device.kind == DeviceKind::cpu)
    device = device::cpu;
  if (!defined_ || device == device_)
    return *this;
  if (device_.kind != DeviceKind::cpu && !is_contiguous()) {
    throw TensorError("cg: Tensor::to(" + to_string(device) + "): copying a strided " + describe() +
                      " needs a GPU kernel");
  }
  const Tensor source = contiguous();
  Tensor out = empty(dtype_, shape_, device);
  detail::cuda_copy(out.data_ptr(), source.data_ptr(), nbytes());
  return out;
}

DLManagedTensor* Tensor::to_dlpack() const {
  if (!defined_)
    throw TensorError("cg: Tensor::to_dlpack of an undefined tensor");
  auto holder = std::make_unique<DlpackExport>();
  holder->tensor = *this;
  holder->shape = shape_;
  holder->strides = strides_;
  DLTensor& dl = holder->managed.dl_tensor;
  // The element (0, ...) as the data pointer and no byte_offset: some
  // consumers ignore byte_offset.
  dl.data = data_ptr();
  dl.byte_offset = 0;
  dl.device = DLDevice{device_.kind == DeviceKind::cuda ? kDLCUDA : kDLCPU,
                       device_.kind == DeviceKind::cuda ? device_.index : 0};
  dl.ndim = static_cast<int>(shape_.size());
  dl.dtype = to_dl(dtype_);
  dl.shape = holder->shape.data();
  dl.strides = holder->strides.data();
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = delete_export;
  return &holder.release()->managed;
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr)
    throw TensorError("cg: Tensor::from_dlpack of a null DLManagedTensor");
  // Own it first: from here on, any throw runs the producer's deleter.
  std::shared_ptr<void> owner(static_cast<void*>(managed), [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter != nullptr)
      m->deleter(m);
  });
  const DLTensor& dl = managed->dl_tensor;
  DType dtype{};
  if (!from_dl(dl.dtype, dtype)) {
    throw TensorError("cg: Tensor::from_dlpack: unsupported DLPack dtype (code " +
                      std::to_string(dl.dtype.code) + ", " + std::to_string(dl.dtype.bits) +
                      " bits, " + std::to_string(dl.dtype.lanes) + " lanes)");
  }
  Device device;
  switch (dl.device.device_type) {
  case kDLCPU:
  case kDLCUDAHost:
    device = device::cpu;
    break;
  case kDLCUDA:
    device = Device{DeviceKind::cuda, dl.device.device_id};
    break;
  default:
    throw TensorError("cg: Tensor::from_dlpack: unsupported DLPack device type " +
                      std::to_string(static_cast<int>(dl.device.device_type)));
  }
  if (dl.ndim < 0 || (dl.ndim > 0 && dl.shape == nullptr)) {
    throw TensorError("cg: Tensor::from_dlpack: invalid ndim " + std::to_string(dl.ndim) +
                      " or shape");
  }
  std::vector<std::int64_t> shape(dl.shape, dl.shape + dl.ndim);
  std::vector<std::int64_t> strides;
  if (dl.strides != nullptr)
    strides.assign(dl.strides, dl.strides + dl.ndim);
  Tensor t =
      from_blob(dl.data, dtype, std::move(shape), std::move(strides), device, dl.byte_offset);
  t.owner_ = std::move(owner);
  return t;
}

namespace {

void check_host(const Tensor& t) {
  if (t.device().kind != DeviceKind::cpu) {
    throw TensorError(
        "cg: a tensor on " + to_string(t.device()) +
        " cannot be serialized through shared memory: give the edge a tensor transport "
        "(v.with_tensor_transport(cg::transport::nccl)) or copy it to the host first "
        "(t.to(cg::device::cpu))");
  }
}

constexpr std::uint8_t wire_undefined = 0;
constexpr std::uint8_t wire_host = 1;

} // namespace

namespace detail {

std::size_t wire_header_bytes(std::size_t ndim) {
  const std::size_t fields = wire_field_bytes(ndim);
  return (fields + wire_element_alignment - 1) / wire_element_alignment * wire_element_alignment;
}

std::size_t wire_header_bytes(const Tensor& t) { return wire_header_bytes(t.shape().size()); }

std::size_t wire_bytes(DType dtype, const std::vector<std::int64_t>& shape) {
  check_extents(shape, "an input tensor");
  const std::size_t elements = checked_bytes(dtype, shape, "an input tensor");
  const std::size_t header = wire_header_bytes(shape.size());
  if (elements > SIZE_MAX - header)
    throw TensorError("cg: an input tensor: " + std::string(to_string(dtype)) + shape_text(shape) +
                      " is too large");
  return header + elements;
}

void encode_wire_header(Encoder& e, const Tensor& t) {
  e.write(&wire_host, 1);
  const auto dtype = static_cast<std::uint8_t>(t.dtype());
  e.write(&dtype, 1);
  detail::encode_length(e, t.shape().size());
  e.write(t.shape().data(), t.shape().size() * sizeof(std::int64_t));
  const std::vector<std::int64_t> strides = Tensor::contiguous_strides(t.shape());
  e.write(strides.data(), strides.size() * sizeof(std::int64_t));
  const std::uint64_t bytes = t.nbytes();
  e.write(&bytes, sizeof bytes);
  static constexpr std::byte padding[wire_element_alignment] = {};
  e.write(padding, wire_header_bytes(t) - wire_field_bytes(t.shape().size()));
}

} // namespace detail

std::size_t Codec<Tensor>::size(const Tensor& t) {
  if (!t.defined())
    return 1;
  check_host(t);
  return detail::wire_header_bytes(t) + t.nbytes();
}

void Codec<Tensor>::encode(Encoder& e, const Tensor& t) {
  if (!t.defined()) {
    e.write(&wire_undefined, 1);
    return;
  }
  check_host(t);
  detail::encode_wire_header(e, t);
  detail::for_each_run(t, [&e](std::byte* run, std::size_t n) { e.write(run, n); });
}

namespace {

// A bool tensor's bytes are each 0 or 1 (any other is corrupted memory).
void check_bool_bytes(DType dtype, const void* elements, std::size_t bytes) {
  if (dtype != DType::boolean)
    return;
  const auto* p = static_cast<const std::uint8_t*>(elements);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (p[i] > 1)
      throw DecodeError("cg: corrupted tensor: invalid bool byte " + std::to_string(p[i]));
  }
}

// Decodes an encoded tensor up to its elements and checks it; the elements
// (`bytes` of them) are what `d` reads next. False for an undefined Tensor.
bool decode_tensor_header(Decoder& d, DType& dtype_out, std::vector<std::int64_t>& shape_out,
                          std::size_t& bytes_out) {
  std::uint8_t kind = 0;
  d.read(&kind, 1);
  if (kind == wire_undefined)
    return false;
  if (kind != wire_host)
    throw DecodeError("cg: corrupted tensor: kind byte " + std::to_string(kind));
  std::uint8_t dtype_byte = 0;
  d.read(&dtype_byte, 1);
  const auto dtype = static_cast<DType>(dtype_byte);
  if (!is_valid(dtype))
    throw DecodeError("cg: corrupted tensor: dtype byte " + std::to_string(dtype_byte));
  // Every dimension takes 16 bytes (extent and stride): bounds ndim by the input.
  const std::size_t ndim = detail::decode_length(d, 2 * sizeof(std::int64_t));
  std::vector<std::int64_t> shape(ndim);
  std::vector<std::int64_t> strides(ndim);
  d.read(shape.data(), ndim * sizeof(std::int64_t));
  d.read(strides.data(), ndim * sizeof(std::int64_t));
  std::uint64_t bytes = 0;
  d.read(&bytes, sizeof bytes);
  const std::span<const std::byte> padding =
      d.take(detail::wire_header_bytes(ndim) - detail::wire_field_bytes(ndim));
  for (const std::byte b : padding) {
    if (b != std::byte{0})
      throw DecodeError("cg: corrupted tensor: a byte of the header's padding is not zero");
  }
  for (const std::int64_t extent : shape) {
    if (extent < 0)
      throw DecodeError("cg: corrupted tensor: negative extent in shape " + shape_text(shape));
  }
  if (strides != Tensor::contiguous_strides(shape)) {
    throw DecodeError("cg: corrupted tensor: strides " + shape_text(strides) +
                      " are not the contiguous strides of " + shape_text(shape));
  }
  std::size_t expected = 0;
  try {
    expected = checked_bytes(dtype, shape, "decoding a tensor");
  } catch (const TensorError& e) {
    throw DecodeError(std::string("cg: corrupted tensor: ") + e.what());
  }
  if (bytes != expected || bytes > d.remaining()) {
    throw DecodeError("cg: corrupted tensor: " + std::to_string(bytes) + " bytes for " +
                      std::string(to_string(dtype)) + shape_text(shape) + " (" +
                      std::to_string(expected) + " expected, " + std::to_string(d.remaining()) +
                      " remain)");
  }
  dtype_out = dtype;
  shape_out = std::move(shape);
  bytes_out = expected;
  return true;
}

} // namespace

Tensor Codec<Tensor>::decode(Decoder& d) {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::size_t expected = 0;
  if (!decode_tensor_header(d, dtype, shape, expected))
    return Tensor();
  Tensor t = Tensor::empty(dtype, std::move(shape));
  d.read(t.data_ptr(), expected);
  check_bool_bytes(dtype, t.data_ptr(), expected);
  return t;
}

Tensor TensorView::clone() const {
  if (!tensor_.defined())
    return Tensor();
  if (tensor_.device().kind != DeviceKind::cpu)
    return tensor_.to(device::cpu).to(tensor_.device()); // a copy each way
  Tensor copy = Tensor::empty(tensor_.dtype(), tensor_.shape());
  auto* out = static_cast<std::byte*>(copy.data_ptr());
  detail::for_each_run(tensor_, [&out](std::byte* run, std::size_t n) {
    std::memcpy(out, run, n);
    out += n;
  });
  return copy;
}

namespace detail {

namespace {

// The elements of an encoded tensor where they are, its header checked;
// its bool bytes too, unless they were checked before.
Tensor view_elements(std::span<const std::byte> encoded, bool check_bools) {
  Decoder d(encoded);
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;
  if (!decode_tensor_header(d, dtype, shape, bytes))
    return Tensor();
  std::span<const std::byte> elements = d.take(bytes);
  if (d.remaining() != 0)
    throw DecodeError("cg: " + std::to_string(d.remaining()) + " trailing bytes after a tensor");
  if (check_bools)
    check_bool_bytes(dtype, elements.data(), bytes);
  return Tensor::from_blob(const_cast<std::byte*>(elements.data()), dtype, std::move(shape));
}

} // namespace

Tensor decode_tensor_view(std::span<const std::byte> encoded) {
  return view_elements(encoded, /*check_bools=*/true);
}

void InPlace<Tensor>::validate(std::span<const std::byte> bytes) {
  (void)decode_tensor_view(bytes);
}

std::optional<TensorView> InPlace<Tensor>::view_of(std::span<const std::byte> bytes) {
  Tensor view = view_elements(bytes, /*check_bools=*/false); // validate() checked them
  if (reinterpret_cast<std::uintptr_t>(view.data_ptr()) % view.element_size() != 0)
    return std::nullopt;
  return TensorView(view);
}

} // namespace detail
} // namespace cg
