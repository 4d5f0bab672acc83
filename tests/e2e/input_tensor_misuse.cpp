// input_tensor_misuse.cpp - does not compile, on purpose: graph 'tensors' has
// one input, #0, so input_tensor<1>() names no cg::Tensor input. The test
// cgc.InputTensorOfAnInputThatIsNoTensorDoesNotCompile (CMakeLists.txt)
// builds it and expects the generated static_assert's message.
#include "e2e_graphs.cg.hpp"

int main() {
  auto graph = cg::launch<&tensors>();
  (void)graph.input_tensor<1>(cg::DType::float32, {3});
}
