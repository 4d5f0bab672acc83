// tensor/cuda_ipc.hpp - device buffers one process fills and another reads in place over CUDA IPC
// (internal; the ports of `cg::transport::cuda_ipc` use it, actor/cuda_ipc_ports.cpp).
//
// The writer of a channel owns one device buffer and one interprocess CUDA
// event per slot of the channel's ring, made on the slot's first tensor and
// replaced only by a larger one: the rule of the ring's overflow buffers
// (cg/detail/channel.hpp), for the same reason: sizes are known only when a
// tensor arrives, and after the first executions nothing is allocated. A
// tensor is copied into its slot's buffer on the writer's stream, the slot's
// event is recorded after the copy, and the message the reader gets names
// both (CudaIpcBlock) beside the tensor's dtype and shape: metadata and data
// of one execution are one message, so a reader cannot pair them wrongly.
//
// A reader opens each buffer and event once (cudaIpcOpenMemHandle,
// cudaIpcOpenEventHandle) and keeps them while the slot's buffer stays the
// same. It makes its stream wait for the event (no host round trip to the
// writer), copies the elements into a tensor of its own (from the device's
// memory pool: no cudaMalloc once warm), waits for that copy, and only then releases the
// slot: the writer reuses a slot's buffer only after every reader released
// it, so nobody reads a buffer while it is overwritten.
//
// With overlap (cgc --overlap-gpu-communication) a reader does not wait for
// its copy: receive(..., overlap = true) leaves it running on the reader's
// communication stream and books the tensor with an event recorded after the
// copy (tensor/arrivals.hpp): the task that takes it as an input makes the
// legacy default stream (where a method that names no stream runs its
// kernels) wait for that event, so the compute that needs the tensor waits on
// the GPU, not on the host, and the computes the read was moved ahead of, and
// work already queued, keep the GPU busy meanwhile. finish() waits for the copy;
// the port calls it, and releases the slot, at its next read. Where the
// writer is another process on the reader's own GPU, the reader's host waits
// for the writer's event before it queues its copy (measured in
// CudaIpcReceiver::receive: without MPS such a GPU takes turns between the
// processes, and a queued wait for another's event stalled it).
//
// A received tensor's memory goes back to the pool in the legacy default
// stream's order when its last copy goes, so kernels still reading it finish
// before the memory is reused (tensor/cuda_memory.cpp).
//
// Small tensors ride in the message itself: the writer copies the elements
// of a tensor of at most kInMessageBytes from its GPU into the channel slot
// (waiting for the copy), the reader queues their copy from there to its GPU
// on the legacy default stream, ahead of its method's kernels (CUDA has read
// the pageable slot when the call returns). At this size two short copies beat
// the device buffer's copy, event and wait, most of all where
// processes share a GPU without MPS and it switches between their contexts.
// On an H200 (gpu_bench's cuda_ipc rows, docs/performance.md) a 16-byte hop
// between two processes is about twenty times faster in the message than
// through the device buffer without MPS, and still faster under MPS; at
// 16 KiB the two are alike under MPS or in one process (threads mode), so the
// message stops at 4 KiB. The byte after the tensor's header says which way the elements went
// (CudaIpcCarrier).
//
// Actors that are threads of one process (threads mode) cannot open their own
// process's IPC handles; the block carries the writer's pid and its plain
// pointer and event, which a reader in the same process uses directly.
//
// Without CUDA (CG_WITH_CUDA off) the classes exist and throw TensorError.
#pragma once

#include "tensor/device_timer.hpp"
#include <cg/dtype.hpp>
#include <cg/serialize.hpp>
#include <cg/tensor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace cg::detail {

/// Tensors of at most this many bytes travel in the message (see above).
inline constexpr std::size_t kInMessageBytes = 4 * 1024;

/// Where a defined tensor's elements are: the byte after its header.
enum class CudaIpcCarrier : std::uint8_t {
  device_buffer = 0, // a CudaIpcBlock follows
  in_message = 1,    // the elements follow, contiguous
};

/// Where a reader finds one message's elements: the writer's slot buffer and
/// the event recorded after the elements were copied there.
struct CudaIpcBlock {
  std::uint32_t writer_pid = 0;
  std::int32_t device = 0;      // the buffer's device, as the writer numbers it
  std::uint64_t generation = 0; // changes whenever the slot's buffer is replaced
  std::uint64_t bytes = 0;      // of the tensor's elements in the buffer
  std::uint64_t pointer = 0;    // the buffer in the writer's address space
  std::uint64_t event = 0;      // the writer's cudaEvent_t
  std::array<std::byte, 64> memory_handle{};
  std::array<std::byte, 64> event_handle{};
};

/// The writer's side: one buffer and event per slot.
class CudaIpcSender {
public:
  /// Buffers go on `device` (this process's ordinal) as slots first need them.
  CudaIpcSender(std::uint32_t max_in_flight, int device);
  ~CudaIpcSender();
  CudaIpcSender(const CudaIpcSender&) = delete;
  CudaIpcSender& operator=(const CudaIpcSender&) = delete;

  /// Copies the elements of `tensor` (contiguous; host or device) into slot
  /// `slot`'s buffer, growing it when too small, records the slot's event
  /// after the copy and says where a reader finds them. The tensor is kept
  /// until the slot is staged again, so the copy never outlives its source.
  /// Throws TensorError (CUDA's message) when CUDA refuses. The copy is
  /// timed by `timed`'s timer, if any (tensor/device_timer.hpp).
  CudaIpcBlock stage(std::uint32_t slot, const Tensor& tensor, const TimedWork& timed = {});

  /// Copies the elements of `tensor` (contiguous; host or device) into
  /// `to` (host memory of exactly its bytes) and waits for the copy: a
  /// small tensor's way into the message (CudaIpcCarrier::in_message).
  void copy_out(const Tensor& tensor, std::span<std::byte> to, const TimedWork& timed = {});

private:
  struct Slot;
  int device_;
  std::uint32_t pid_;      // this process's, once (getpid() is a system call)
  void* stream_ = nullptr; // cudaStream_t, made on first use
  std::vector<std::unique_ptr<Slot>> slots_;
};

/// A reader's side: the buffers and events it opened, one per slot.
class CudaIpcReceiver {
public:
  /// Copies arrive on `device` (this process's ordinal).
  CudaIpcReceiver(std::uint32_t max_in_flight, int device);
  ~CudaIpcReceiver();
  CudaIpcReceiver(const CudaIpcReceiver&) = delete;
  CudaIpcReceiver& operator=(const CudaIpcReceiver&) = delete;

  /// A contiguous tensor of `dtype` and `shape` on this reader's device
  /// holding the elements `block` names (in slot `slot`), copied once the
  /// writer's event completed; the copy is finished when this returns.
  /// Throws TensorError (CUDA's message) when a handle cannot be opened
  /// (the reader cannot see the writer's device) or CUDA refuses. With
  /// `overlap`, the copy may still run when this returns (see above): call
  /// finish() before the slot is released. The copy is timed by
  /// `timed`'s timer, if any (tensor/device_timer.hpp).
  Tensor receive(std::uint32_t slot, const CudaIpcBlock& block, DType dtype,
                 const std::vector<std::int64_t>& shape, bool overlap = false,
                 const TimedWork& timed = {});

  /// A contiguous tensor of `dtype` and `shape` on this reader's device
  /// holding the elements in `from` (host memory: the message), their copy
  /// queued on the legacy default stream: work queued there after this
  /// returns sees them, and `from` may be reused at once. Throws TensorError
  /// when `from` does not hold exactly the shape's bytes or CUDA refuses.
  Tensor copy_in(std::span<const std::byte> from, DType dtype,
                 const std::vector<std::int64_t>& shape, const TimedWork& timed = {});

  /// Waits for the last copy receive() left running.
  void finish();

private:
  struct Slot;
  int device_;
  void* stream_ = nullptr; // cudaStream_t, made on first use
  void* copied_ = nullptr; // cudaEvent_t: the last copy, for overlap
  std::vector<std::unique_ptr<Slot>> slots_;
};

} // namespace cg::detail

namespace cg {

/// u32 pid, i32 device, u64 generation, bytes, pointer and event, then both
/// handles' 64 bytes.
template <> struct Codec<detail::CudaIpcBlock> {
  static constexpr std::size_t kBytes = 4 + 4 + 8 * 4 + 64 + 64;
  static std::size_t size(const detail::CudaIpcBlock&) { return kBytes; }
  static void encode(Encoder& e, const detail::CudaIpcBlock& b) {
    cg::encode(e, b.writer_pid);
    cg::encode(e, b.device);
    cg::encode(e, b.generation);
    cg::encode(e, b.bytes);
    cg::encode(e, b.pointer);
    cg::encode(e, b.event);
    e.write(b.memory_handle.data(), b.memory_handle.size());
    e.write(b.event_handle.data(), b.event_handle.size());
  }
  static detail::CudaIpcBlock decode(Decoder& d) {
    detail::CudaIpcBlock b;
    b.writer_pid = cg::decode<std::uint32_t>(d);
    b.device = cg::decode<std::int32_t>(d);
    b.generation = cg::decode<std::uint64_t>(d);
    b.bytes = cg::decode<std::uint64_t>(d);
    b.pointer = cg::decode<std::uint64_t>(d);
    b.event = cg::decode<std::uint64_t>(d);
    d.read(b.memory_handle.data(), b.memory_handle.size());
    d.read(b.event_handle.data(), b.event_handle.size());
    return b;
  }
};

} // namespace cg
