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
  shm = 0, // shared memory (host), the default
  // A communicator edge: the tensor goes through the communicator group of
  // its writer and readers, a point-to-point send that waits for every
  // receive. What carries the group is picked at launch for the whole graph
  // (LaunchOptions::communicator): NCCL, GPU to GPU, or the host
  // communicator in the graph's shared memory.
  nccl = 1,
  // CUDA IPC between actors of one host: the tensor is copied into a device
  // buffer of the channel slot it is written to (allocated on the slot's
  // first tensor, reused after) and each reader copies it out on its GPU
  // after a CUDA event, with no host copy. Asynchronous like shm (the writer
  // goes on while up to max_in_flight tensors wait); a reader must see the
  // writer's GPU. In threads mode the same buffers, by plain pointer.
  cuda_ipc = 2,
};
namespace transport {
inline constexpr TensorTransport shm = TensorTransport::shm;
inline constexpr TensorTransport nccl = TensorTransport::nccl;
inline constexpr TensorTransport cuda_ipc = TensorTransport::cuda_ipc;
} // namespace transport

} // namespace cg
