// cuda_ipc.cpp - slot buffers shared over CUDA IPC (see tensor/cuda_ipc.hpp for the protocol).
#include "tensor/cuda_ipc.hpp"

#include <string>

#if defined(CG_HAVE_CUDA)
#include "tensor/arrivals.hpp"
#include "tensor/cuda_device_guard.hpp"
#include "tensor/cuda_memory.hpp"

#include <cuda_runtime_api.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#endif

namespace cg::detail {

#if defined(CG_HAVE_CUDA)
namespace {

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CudaIpcBlock::memory_handle));
static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CudaIpcBlock::event_handle));

void check(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess)
    throw TensorError("cg: cuda_ipc: " + what + " failed: " + cudaGetErrorName(error) + ": " +
                      cudaGetErrorString(error));
}

CudaDeviceGuard on_device(int index) {
  return CudaDeviceGuard(index,
                         [](cudaError_t error, const std::string& what) { check(error, what); });
}

// A stream made on first use on the current device, with `flags`.
cudaStream_t stream_of(void*& stream, unsigned flags) {
  if (stream == nullptr) {
    cudaStream_t made = nullptr;
    check(cudaStreamCreateWithFlags(&made, flags), "cudaStreamCreateWithFlags");
    stream = made;
  }
  return static_cast<cudaStream_t>(stream);
}

// Buffers grow in powers of two from 4 KiB, so a slot whose tensors vary a
// little in size is reallocated a few times at most.
std::size_t capacity_for(std::size_t bytes) {
  std::size_t capacity = 4096;
  while (capacity < bytes)
    capacity *= 2;
  return capacity;
}

// Whether CUDA knows `host` as page-locked memory (cudaHostRegister,
// cudaMallocHost), which it reads after cudaMemcpyAsync returns.
bool pinned(const void* host) {
  cudaPointerAttributes where{};
  if (cudaPointerGetAttributes(&where, host) != cudaSuccess) {
    (void)cudaGetLastError(); // not sticky: no later call should see it
    return false;
  }
  return where.type == cudaMemoryTypeHost;
}

// The shape must say exactly the bytes the writer copied: never read past
// the end of its buffer or message, whatever the message holds. Then a tensor
// of that shape on `device`, from its memory pool in `stream`'s order (memory
// the legacy default stream's kernels gave back is reused only after them),
// given back in the legacy stream's order when its last copy goes.
Tensor device_tensor(DType dtype, const std::vector<std::int64_t>& shape, std::uint64_t copied,
                     int device, cudaStream_t stream) {
  std::uint64_t count = 1;
  std::uint64_t bytes = 0;
  bool overflow = false;
  for (const std::int64_t extent : shape)
    overflow |=
        extent < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(extent), &count);
  overflow |= __builtin_mul_overflow(count, std::uint64_t{dtype_size(dtype)}, &bytes);
  if (overflow || bytes != copied)
    throw TensorError("cg: cuda_ipc: the message's shape does not hold the " +
                      std::to_string(copied) + " bytes its writer copied");
  return Tensor::adopt(
      cuda_allocate(bytes, device, stream), [device](void* storage) { cuda_free(storage, device); },
      dtype, shape, {}, Device{DeviceKind::cuda, device});
}

} // namespace

struct CudaIpcSender::Slot {
  void* buffer = nullptr;
  std::size_t capacity = 0;
  std::uint64_t generation = 0;
  cudaEvent_t event = nullptr;
  cudaIpcMemHandle_t memory_handle{};
  cudaIpcEventHandle_t event_handle{};
  Tensor source; // what the last copy into `buffer` read: alive until it is done
};

CudaIpcSender::CudaIpcSender(std::uint32_t max_in_flight, int device)
    : device_(device), pid_(static_cast<std::uint32_t>(::getpid())) {
  slots_.resize(max_in_flight);
}

CudaIpcSender::~CudaIpcSender() {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess)
    return; // the CUDA runtime is gone (process exit)
  (void)cudaSetDevice(device_);
  if (stream_ != nullptr)
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& slot : slots_) {
    if (!slot)
      continue;
    (void)cudaFree(slot->buffer);
    (void)cudaEventDestroy(slot->event);
  }
  if (stream_ != nullptr)
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  (void)cudaSetDevice(current);
}

CudaIpcBlock CudaIpcSender::stage(std::uint32_t index, const Tensor& tensor,
                                  const TimedWork& timed) {
  const CudaDeviceGuard guard = on_device(device_);
  // A blocking stream: its copy waits for the work queued on the legacy
  // default stream, where a method that names no stream ran the kernels
  // producing the tensor.
  const cudaStream_t stream = stream_of(stream_, cudaStreamDefault);
  std::unique_ptr<Slot>& slot = slots_.at(index);
  if (!slot) {
    slot = std::make_unique<Slot>();
    check(cudaEventCreateWithFlags(&slot->event, cudaEventDisableTiming | cudaEventInterprocess),
          "cudaEventCreateWithFlags");
    check(cudaIpcGetEventHandle(&slot->event_handle, slot->event), "cudaIpcGetEventHandle");
  }
  const std::size_t bytes = tensor.nbytes();
  if (slot->buffer == nullptr || slot->capacity < bytes) {
    // Every reader released this slot before the writer got it again, so
    // nobody reads the old buffer any more (readers close it on the new
    // generation).
    if (slot->buffer != nullptr) {
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      (void)cudaFree(slot->buffer);
      slot->buffer = nullptr;
    }
    const std::size_t capacity = capacity_for(bytes);
    check(cudaMalloc(&slot->buffer, capacity), "cudaMalloc of " + std::to_string(capacity) +
                                                   " bytes on cuda:" + std::to_string(device_));
    slot->capacity = capacity;
    ++slot->generation;
    check(cudaIpcGetMemHandle(&slot->memory_handle, slot->buffer), "cudaIpcGetMemHandle");
  }
  TimedSpan copy(timed, stream);
  if (bytes != 0)
    check(cudaMemcpyAsync(slot->buffer, tensor.data_ptr(), bytes, cudaMemcpyDefault, stream),
          "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes into the slot");
  copy.queued();
  check(cudaEventRecord(slot->event, stream), "cudaEventRecord");
  slot->source = tensor;

  CudaIpcBlock block;
  block.writer_pid = pid_;
  block.device = device_;
  block.generation = slot->generation;
  block.bytes = bytes;
  block.pointer = reinterpret_cast<std::uintptr_t>(slot->buffer);
  block.event = reinterpret_cast<std::uintptr_t>(slot->event);
  std::memcpy(block.memory_handle.data(), &slot->memory_handle, sizeof slot->memory_handle);
  std::memcpy(block.event_handle.data(), &slot->event_handle, sizeof slot->event_handle);
  return block;
}

void CudaIpcSender::copy_out(const Tensor& tensor, std::span<std::byte> to,
                             const TimedWork& timed) {
  if (to.size() != tensor.nbytes())
    throw TensorError("cg: cuda_ipc: " + std::to_string(to.size()) + " bytes cannot hold " +
                      tensor.describe());
  if (to.empty())
    return;
  if (tensor.device().kind == DeviceKind::cpu) {
    std::memcpy(to.data(), tensor.data_ptr(), to.size());
    return;
  }
  const CudaDeviceGuard guard = on_device(device_);
  // On the legacy default stream, after the kernels that made the tensor,
  // and waited for: one call where a copy on a stream of our own and its
  // synchronisation were two (the hop measured the same within the noise).
  TimedSpan copy(timed, cudaStreamLegacy);
  check(cudaMemcpy(to.data(), tensor.data_ptr(), to.size(), cudaMemcpyDefault),
        "cudaMemcpy of " + std::to_string(to.size()) + " bytes into the message");
  copy.queued();
}

struct CudaIpcReceiver::Slot {
  std::uint32_t writer_pid = 0;
  std::uint64_t generation = 0;
  bool opened = false;     // the handles below were opened here (another process)
  bool shared_gpu = false; // opened, and on this reader's own GPU
  void* buffer = nullptr;  // the writer's buffer as this process sees it
  cudaEvent_t event = nullptr;
};

CudaIpcReceiver::CudaIpcReceiver(std::uint32_t max_in_flight, int device) : device_(device) {
  slots_.resize(max_in_flight);
}

namespace {
void close_opened(void* buffer, cudaEvent_t event) noexcept {
  (void)cudaIpcCloseMemHandle(buffer);
  (void)cudaEventDestroy(event);
}
} // namespace

CudaIpcReceiver::~CudaIpcReceiver() {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess)
    return;
  (void)cudaSetDevice(device_);
  if (stream_ != nullptr)
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  if (copied_ != nullptr)
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(copied_));
  for (auto& slot : slots_)
    if (slot && slot->opened)
      close_opened(slot->buffer, slot->event);
  if (stream_ != nullptr)
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  (void)cudaSetDevice(current);
}

Tensor CudaIpcReceiver::receive(std::uint32_t index, const CudaIpcBlock& block, DType dtype,
                                const std::vector<std::int64_t>& shape, bool overlap,
                                const TimedWork& timed) {
  const CudaDeviceGuard guard = on_device(device_);
  // A non-blocking stream: the copy waits for the writer's event only, not
  // for the kernels queued on the legacy default stream, so with overlap it
  // runs while they compute.
  const cudaStream_t stream = stream_of(stream_, cudaStreamNonBlocking);
  std::unique_ptr<Slot>& slot = slots_.at(index);
  if (!slot)
    slot = std::make_unique<Slot>();
  if (slot->buffer == nullptr || slot->writer_pid != block.writer_pid ||
      slot->generation != block.generation) {
    if (slot->opened)
      close_opened(slot->buffer, slot->event);
    *slot = Slot{};
    if (block.writer_pid == static_cast<std::uint32_t>(::getpid())) {
      // A thread of this process wrote it: its own pointer and event.
      slot->buffer = reinterpret_cast<void*>(static_cast<std::uintptr_t>(block.pointer));
      slot->event = reinterpret_cast<cudaEvent_t>(static_cast<std::uintptr_t>(block.event));
    } else {
      cudaIpcMemHandle_t memory{};
      cudaIpcEventHandle_t event{};
      std::memcpy(&memory, block.memory_handle.data(), sizeof memory);
      std::memcpy(&event, block.event_handle.data(), sizeof event);
      check(cudaIpcOpenMemHandle(&slot->buffer, memory, cudaIpcMemLazyEnablePeerAccess),
            "cudaIpcOpenMemHandle (the writer's buffer on its cuda:" +
                std::to_string(block.device) + "; a reader must see the writer's GPU)");
      const cudaError_t opened = cudaIpcOpenEventHandle(&slot->event, event);
      if (opened != cudaSuccess) {
        (void)cudaIpcCloseMemHandle(slot->buffer);
        *slot = Slot{};
        check(opened, "cudaIpcOpenEventHandle");
      }
      slot->opened = true;
      cudaPointerAttributes where{};
      slot->shared_gpu =
          cudaPointerGetAttributes(&where, slot->buffer) == cudaSuccess && where.device == device_;
      (void)cudaGetLastError(); // not sticky: no later call should see it
    }
    slot->writer_pid = block.writer_pid;
    slot->generation = block.generation;
  }

  const std::uint64_t bytes = block.bytes;
  Tensor out = device_tensor(dtype, shape, bytes, device_, stream);
  // Processes sharing a GPU without MPS take turns on it, and a wait for
  // another process's event queued on this one's stream made the overlap
  // example slower overlapped than not (on an H200; not under MPS). There,
  // with overlap, the host waits for the writer's copy instead, and the
  // reader's own copy still runs beside the compute. Without overlap the host
  // waits for the copy anyway, and queuing the wait is as fast or faster
  // (gpu_bench's cuda_ipc rows, docs/performance.md).
  if (overlap && slot->shared_gpu)
    check(cudaEventSynchronize(slot->event), "cudaEventSynchronize");
  else
    check(cudaStreamWaitEvent(stream, slot->event, 0), "cudaStreamWaitEvent");
  TimedSpan copy(timed, stream); // from when the writer's elements are there
  if (bytes != 0)
    check(cudaMemcpyAsync(out.data_ptr(), slot->buffer, bytes, cudaMemcpyDefault, stream),
          "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes from the slot");
  copy.queued();
  if (!overlap) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return out;
  }
  // The compute needing `out` waits on the GPU, when its task takes it as
  // an input; the host goes on. copied_ is for finish().
  if (copied_ == nullptr) {
    cudaEvent_t made = nullptr;
    check(cudaEventCreateWithFlags(&made, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    copied_ = made;
  }
  const auto copied = static_cast<cudaEvent_t>(copied_);
  check(cudaEventRecord(copied, stream), "cudaEventRecord");
  expect_arrival(out, stream);
  return out;
}

Tensor CudaIpcReceiver::copy_in(std::span<const std::byte> from, DType dtype,
                                const std::vector<std::int64_t>& shape, const TimedWork& timed) {
  const CudaDeviceGuard guard = on_device(device_);
  // Allocated and copied in the order of the legacy default stream, where
  // the method's kernels run: they follow the copy on the GPU, and nothing
  // here waits for it or for kernels queued before it. From pageable memory
  // (a slot: the CUDA IPC ports never pin one) cudaMemcpyAsync stages the
  // bytes before it returns, so the message may go back to the writer at
  // once; from pinned memory the copy engines would read them later, so
  // there the copy is waited for. A small hop is faster so than with the
  // copy on the reader's own stream, waited for (gpu_bench's cuda_ipc rows on
  // an H200, docs/performance.md).
  Tensor out = device_tensor(dtype, shape, from.size(), device_, cudaStreamLegacy);
  if (from.empty())
    return out;
  TimedSpan copy(timed, cudaStreamLegacy);
  check(cudaMemcpyAsync(out.data_ptr(), from.data(), from.size(), cudaMemcpyHostToDevice,
                        cudaStreamLegacy),
        "cudaMemcpyAsync of " + std::to_string(from.size()) + " bytes from the message");
  copy.queued();
  if (pinned(from.data()))
    check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  return out;
}

void CudaIpcReceiver::finish() {
  if (copied_ == nullptr)
    return;
  const CudaDeviceGuard guard = on_device(device_);
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(copied_)), "cudaEventSynchronize");
}

#else // !CG_HAVE_CUDA

namespace {
[[noreturn]] void throw_no_cuda() {
  throw TensorError("cg: cuda_ipc: this build of the runtime has no CUDA support (configure with "
                    "-DCG_WITH_CUDA=ON on a machine with the CUDA toolkit)");
}
} // namespace

struct CudaIpcSender::Slot {};
struct CudaIpcReceiver::Slot {};

CudaIpcSender::CudaIpcSender(std::uint32_t, int device) : device_(device), pid_(0) {}
CudaIpcSender::~CudaIpcSender() = default;
CudaIpcBlock CudaIpcSender::stage(std::uint32_t, const Tensor&, const TimedWork&) {
  throw_no_cuda();
}

CudaIpcReceiver::CudaIpcReceiver(std::uint32_t, int device) : device_(device) {}
CudaIpcReceiver::~CudaIpcReceiver() = default;
Tensor CudaIpcReceiver::receive(std::uint32_t, const CudaIpcBlock&, DType,
                                const std::vector<std::int64_t>&, bool, const TimedWork&) {
  throw_no_cuda();
}
void CudaIpcSender::copy_out(const Tensor&, std::span<std::byte>, const TimedWork&) {
  throw_no_cuda();
}
Tensor CudaIpcReceiver::copy_in(std::span<const std::byte>, DType, const std::vector<std::int64_t>&,
                                const TimedWork&) {
  throw_no_cuda();
}
void CudaIpcReceiver::finish() {}

#endif

} // namespace cg::detail
