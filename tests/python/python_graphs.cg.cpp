// python_graphs.cg.cpp - graphs that only the Python driver's tests and its
// benchmark row use: numbers from a numpy array into a std::vector input,
// and the same bytes as a cg::Tensor.
//
// The vector and the tensor graphs read their input in place (a span, a
// tensor view), so that the two differ only in how the driver hands the
// array over.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#include <cstdint>
#include <span>
#include <vector>

struct CG_ACTOR Numbers {
  // Every element back, bit for bit.
  std::vector<float> same(std::vector<float> values) { return values; }
  std::vector<std::int64_t> same_ints(std::vector<std::int64_t> values) { return values; }
  // How many bytes arrived, read where they arrived.
  std::uint64_t float_bytes(std::span<const float> values) { return values.size() * sizeof(float); }
  std::uint64_t tensor_bytes(cg::TensorView values) { return values.nbytes(); }
};

// A numpy float32 array into a std::vector<float>, and back.
CG_GRAPH void floats(cg::GraphBuilder& g) {
  auto a = g.actor<Numbers>("a");
  g.output(a.bind<&Numbers::same>(g.input<std::vector<float>>()));
}

// A numpy int64 array into a std::vector<std::int64_t>, and back.
CG_GRAPH void ints(cg::GraphBuilder& g) {
  auto a = g.actor<Numbers>("a");
  g.output(a.bind<&Numbers::same_ints>(g.input<std::vector<std::int64_t>>()));
}

// The benchmark's two paths for one array: as a std::vector<float>...
CG_GRAPH void vector_bytes(cg::GraphBuilder& g) {
  auto a = g.actor<Numbers>("a");
  g.output(a.bind<&Numbers::float_bytes>(g.input<std::vector<float>>()));
}

// ... and as a cg::Tensor.
CG_GRAPH void tensor_bytes(cg::GraphBuilder& g) {
  auto a = g.actor<Numbers>("a");
  g.output(a.bind<&Numbers::tensor_bytes>(g.input<cg::Tensor>()));
}
