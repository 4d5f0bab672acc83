// cg/transport.hpp - How a value travels from its producer to tasks on other actors.
//
//   auto h = a.bind<&Stage::forward>(x).with_tensor_transport(cg::transport::nccl);
//
// Part of the graph language (cg/builder.hpp); cgc reads the enumerators'
// values from a graph's records (cg/detail/graph_records.hpp).
#pragma once

namespace cg {

/// How a value travels from its producer to tasks on other actors.
enum class TensorTransport : int {
  shm = 0,  // shared memory (host), the default
  nccl = 1, // NCCL point-to-point, GPU to GPU: the send waits for every receive
};
namespace transport {
inline constexpr TensorTransport shm = TensorTransport::shm;
inline constexpr TensorTransport nccl = TensorTransport::nccl;
} // namespace transport

} // namespace cg
