// tensor_copy.cpp - strided host tensors to and from packed row-major bytes.
//
// A tensor is walked as contiguous runs: the innermost dimensions laid out
// contiguously collapse into one run, the outer ones are counted like an
// odometer, keeping the element offset of the current index up to date.
// Dimensions of extent 1 are left out first, as they never move the pointer.
#include "tensor/tensor_copy.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace cg::detail {

void for_each_run(const Tensor& t,
                  const std::function<void(std::byte* run, std::size_t bytes)>& fn) {
  if (t.numel() == 0)
    return;
  const std::size_t item = t.element_size();
  auto* base = static_cast<std::byte*>(t.data_ptr());
  // Dimensions of extent 1 never move the pointer: leave them out.
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  for (std::size_t i = 0; i < t.shape().size(); ++i) {
    if (t.shape()[i] != 1) {
      shape.push_back(t.shape()[i]);
      strides.push_back(t.strides()[i]);
    }
  }
  // The innermost dimensions that are contiguous form one run.
  std::size_t outer = shape.size();
  std::int64_t run = 1;
  while (outer > 0 && strides[outer - 1] == run) {
    run *= shape[outer - 1];
    --outer;
  }
  const std::size_t run_bytes = static_cast<std::size_t>(run) * item;
  if (outer == 0) {
    fn(base, run_bytes);
    return;
  }
  std::vector<std::int64_t> index(outer, 0);
  std::int64_t offset = 0; // in elements, of the current index
  for (;;) {
    fn(base + offset * static_cast<std::int64_t>(item), run_bytes);
    std::size_t d = outer;
    for (; d > 0; --d) { // odometer increment, innermost outer dimension first
      const std::size_t k = d - 1;
      if (++index[k] < shape[k]) {
        offset += strides[k];
        break;
      }
      offset -= strides[k] * (shape[k] - 1);
      index[k] = 0;
    }
    if (d == 0)
      return;
  }
}

void gather(const Tensor& t, std::byte* out) {
  for_each_run(t, [&out](std::byte* run, std::size_t bytes) {
    std::memcpy(out, run, bytes);
    out += bytes;
  });
}

void scatter(const std::byte* in, const Tensor& t) {
  for_each_run(t, [&in](std::byte* run, std::size_t bytes) {
    std::memcpy(run, in, bytes);
    in += bytes;
  });
}

} // namespace cg::detail
