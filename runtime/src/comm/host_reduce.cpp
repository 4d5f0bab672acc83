// host_reduce.cpp - elementwise reductions over several host buffers.
//
// One loop per (element type, operation), chosen once per call: the element
// type says how an element is loaded into an accumulator and stored back,
// the operation how two accumulators combine. Integer sums and products are
// done in the unsigned type of the same width, so that overflow wraps instead
// of being undefined behaviour. bool elements are bytes 0 or 1, on which
// min, max and product are and, or, and: they reduce as uint8.
#include "comm/host_reduce.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cg::detail {
namespace {

template <class A> A add(A a, A b) noexcept {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class A> A multiply(A a, A b) noexcept {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

struct Sum {
  template <class A> A operator()(A a, A b) const noexcept { return add(a, b); }
};
struct Product {
  template <class A> A operator()(A a, A b) const noexcept { return multiply(a, b); }
};
struct Min {
  template <class A> A operator()(A a, A b) const noexcept { return b < a ? b : a; }
};
struct Max {
  template <class A> A operator()(A a, A b) const noexcept { return a < b ? b : a; }
};

// Reads element i of a byte buffer as a T (memcpy: the buffers hold bytes,
// not objects of type T, and need not be aligned for T).
template <class T> T read_at(const std::byte* p, std::size_t i) noexcept {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <class T> void write_at(std::byte* p, std::size_t i, T v) noexcept {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// How elements of type T are loaded into an accumulator and stored back.
template <class T> struct Element {
  using Acc = T;
  static Acc load(const std::byte* p, std::size_t i) noexcept { return read_at<T>(p, i); }
  static void store(std::byte* p, std::size_t i, Acc v) noexcept { write_at<T>(p, i, v); }
};

template <> struct Element<Half> {
  using Acc = float;
  static Acc load(const std::byte* p, std::size_t i) noexcept {
    return to_float(read_at<Half>(p, i));
  }
  static void store(std::byte* p, std::size_t i, Acc v) noexcept {
    write_at<Half>(p, i, to_half(v));
  }
};

template <> struct Element<BFloat16> {
  using Acc = float;
  static Acc load(const std::byte* p, std::size_t i) noexcept {
    return to_float(read_at<BFloat16>(p, i));
  }
  static void store(std::byte* p, std::size_t i, Acc v) noexcept {
    write_at<BFloat16>(p, i, to_bfloat16(v));
  }
};

template <class T, class Op>
void reduce_with(Op op, bool average, std::span<const std::byte* const> sources, std::byte* out,
                 std::size_t count) noexcept {
  using E = Element<T>;
  using Acc = typename E::Acc;
  for (std::size_t i = 0; i < count; ++i) {
    Acc acc = E::load(sources[0], i);
    for (std::size_t r = 1; r < sources.size(); ++r)
      acc = op(acc, E::load(sources[r], i));
    if (average) {
      if constexpr (std::is_integral_v<Acc>) {
        acc = static_cast<Acc>(static_cast<std::int64_t>(acc) /
                               static_cast<std::int64_t>(sources.size()));
      } else {
        acc = acc / static_cast<Acc>(sources.size());
      }
    }
    E::store(out, i, acc);
  }
}

template <class T>
void reduce_typed(ReduceOp op, std::span<const std::byte* const> sources, std::byte* out,
                  std::size_t count) noexcept {
  switch (op) {
  case ReduceOp::sum:
    return reduce_with<T>(Sum{}, false, sources, out, count);
  case ReduceOp::avg:
    return reduce_with<T>(Sum{}, true, sources, out, count);
  case ReduceOp::product:
    return reduce_with<T>(Product{}, false, sources, out, count);
  case ReduceOp::min:
    return reduce_with<T>(Min{}, false, sources, out, count);
  case ReduceOp::max:
    return reduce_with<T>(Max{}, false, sources, out, count);
  }
}

} // namespace

bool reduction_supported(DType dtype, ReduceOp op) noexcept {
  const int value = static_cast<int>(op);
  if (value < static_cast<int>(ReduceOp::sum) || value > static_cast<int>(ReduceOp::avg))
    return false;
  if (!is_valid(dtype))
    return false;
  return dtype != DType::boolean || op == ReduceOp::min || op == ReduceOp::max ||
         op == ReduceOp::product;
}

void reduce(DType dtype, ReduceOp op, std::span<const std::byte* const> sources, std::byte* out,
            std::size_t count) noexcept {
  switch (dtype) {
  case DType::float16:
    return reduce_typed<Half>(op, sources, out, count);
  case DType::bfloat16:
    return reduce_typed<BFloat16>(op, sources, out, count);
  case DType::float32:
    return reduce_typed<float>(op, sources, out, count);
  case DType::float64:
    return reduce_typed<double>(op, sources, out, count);
  case DType::int8:
    return reduce_typed<std::int8_t>(op, sources, out, count);
  case DType::int32:
    return reduce_typed<std::int32_t>(op, sources, out, count);
  case DType::int64:
    return reduce_typed<std::int64_t>(op, sources, out, count);
  case DType::uint8:
  case DType::boolean:
    return reduce_typed<std::uint8_t>(op, sources, out, count);
  }
}

} // namespace cg::detail
