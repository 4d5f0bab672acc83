// nccl_communicator.cpp - NcclCommunicator: NCCL loaded at run time, driven on a CUDA stream.
//
// NCCL is not linked: the GPU machines have it only inside Python wheels, so
// the library is dlopen()ed on first use and the dozen entry points are looked
// up by name. The declarations below are NCCL's C ABI, which has been stable
// across 2.x: opaque communicator pointers, a 128-byte unique id passed by
// value, and int enums whose values are written out here (they are part of
// that ABI), so building needs no nccl.h either.
#include <cg/nccl_communicator.hpp>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "comm/host_reduce.hpp"
#include "tensor/cuda_device_guard.hpp"
#include "tensor/cuda_memory.hpp"

namespace cg {
namespace {

// --- NCCL's C ABI (nccl.h, 2.x) ---
using nccl_result = int; // ncclResult_t
constexpr nccl_result nccl_success = 0;
constexpr nccl_result nccl_invalid_usage = 5;
constexpr nccl_result nccl_in_progress = 7;
using nccl_comm = void*; // ncclComm_t
struct NcclRawId {       // ncclUniqueId
  char internal[128];
};
enum NcclType : int { // ncclDataType_t
  nccl_int8 = 0,
  nccl_uint8 = 1,
  nccl_int32 = 2,
  nccl_int64 = 4,
  nccl_float16 = 6,
  nccl_float32 = 7,
  nccl_float64 = 8,
  nccl_bfloat16 = 9,
};
enum NcclOp : int {
  nccl_sum = 0,
  nccl_prod = 1,
  nccl_max = 2,
  nccl_min = 3,
  nccl_avg = 4
}; // ncclRedOp_t

struct NcclApi {
  nccl_result (*get_version)(int*);
  nccl_result (*get_unique_id)(NcclRawId*);
  nccl_result (*comm_init_rank)(nccl_comm*, int, NcclRawId, int);
  nccl_result (*comm_abort)(nccl_comm);
  nccl_result (*comm_get_async_error)(nccl_comm, nccl_result*);
  const char* (*get_error_string)(nccl_result);
  const char* (*get_last_error)(nccl_comm); // NCCL 2.13 on; null before
  nccl_result (*send)(const void*, std::size_t, int, int, nccl_comm, cudaStream_t);
  nccl_result (*recv)(void*, std::size_t, int, int, nccl_comm, cudaStream_t);
  nccl_result (*all_reduce)(const void*, void*, std::size_t, int, int, nccl_comm, cudaStream_t);
  nccl_result (*all_gather)(const void*, void*, std::size_t, int, nccl_comm, cudaStream_t);
  nccl_result (*reduce_scatter)(const void*, void*, std::size_t, int, int, nccl_comm, cudaStream_t);
};

[[noreturn]] void throw_backend(const std::string& what) {
  throw CommunicatorError(CommErrorKind::backend, what);
}

NcclApi load_nccl() {
  const char* configured = std::getenv("CG_NCCL_LIBRARY");
  const std::string name =
      configured != nullptr && *configured != '\0' ? configured : "libnccl.so.2";
  // RTLD_LOCAL: NCCL's symbols stay out of the global namespace; never
  // dlclose()d, as NCCL keeps threads running.
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw_backend(
        "cg: NCCL could not be loaded (" + std::string(why != nullptr ? why : name) +
        "): install NCCL, or set CG_NCCL_LIBRARY to the path of libnccl.so.2 (e.g. the one in "
        "site-packages/nvidia/nccl/lib)");
  }
  NcclApi api{};
  auto bind = [&](auto& fn, const char* symbol) {
    void* address = ::dlsym(handle, symbol);
    if (address == nullptr)
      throw_backend("cg: " + name + " has no symbol " + symbol + ": NCCL 2.x is required");
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(address);
  };
  bind(api.get_version, "ncclGetVersion");
  bind(api.get_unique_id, "ncclGetUniqueId");
  bind(api.comm_init_rank, "ncclCommInitRank");
  bind(api.comm_abort, "ncclCommAbort");
  bind(api.comm_get_async_error, "ncclCommGetAsyncError");
  bind(api.get_error_string, "ncclGetErrorString");
  bind(api.send, "ncclSend");
  bind(api.recv, "ncclRecv");
  bind(api.all_reduce, "ncclAllReduce");
  bind(api.all_gather, "ncclAllGather");
  bind(api.reduce_scatter, "ncclReduceScatter");
  api.get_last_error =
      reinterpret_cast<decltype(api.get_last_error)>(::dlsym(handle, "ncclGetLastError"));
  return api;
}

// Loaded once per process; a failed load throws here and is retried next time.
const NcclApi& nccl() {
  static const NcclApi api = load_nccl();
  return api;
}

std::string nccl_error(nccl_result result) {
  const char* text = nccl().get_error_string(result);
  return "NCCL error " + std::to_string(result) + " (" + (text != nullptr ? text : "?") + ")";
}

// Why ncclCommInitRank failed. NCCL's return code says only "invalid usage"
// when two ranks are on one GPU (the reason is in its log, with NCCL_DEBUG,
// and in its last error): the refusal is named, and the last error quoted.
// Short: an actor's last words hold 500 bytes.
std::string join_error(const NcclApi& api, nccl_result result) {
  std::string why = nccl_error(result);
  if (result == nccl_invalid_usage) {
    why += "; NCCL refuses two ranks on one GPU (\"Duplicate GPU detected\"), its usual invalid "
           "usage here: give each rank a GPU of its own, or each rank's process a host identity "
           "of its own (NCCL_HOSTID; cg::LaunchOptions::nccl_ranks_share_gpus)";
  }
  if (const char* last = api.get_last_error != nullptr ? api.get_last_error(nullptr) : nullptr;
      last != nullptr && *last != '\0') {
    std::string text(last);
    text.erase(text.find_last_not_of(" \n") + 1);
    why += "; NCCL says: " + text;
  }
  return why;
}

std::string cuda_error(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

int nccl_type(DType t) noexcept {
  switch (t) {
  case DType::float16:
    return nccl_float16;
  case DType::bfloat16:
    return nccl_bfloat16;
  case DType::float32:
    return nccl_float32;
  case DType::float64:
    return nccl_float64;
  case DType::int8:
    return nccl_int8;
  case DType::int32:
    return nccl_int32;
  case DType::int64:
    return nccl_int64;
  case DType::uint8:
  case DType::boolean:
    return nccl_uint8;
  }
  return -1;
}

int nccl_op(ReduceOp op) noexcept {
  switch (op) {
  case ReduceOp::sum:
    return nccl_sum;
  case ReduceOp::product:
    return nccl_prod;
  case ReduceOp::min:
    return nccl_min;
  case ReduceOp::max:
    return nccl_max;
  case ReduceOp::avg:
    return nccl_avg;
  }
  return -1;
}

// cuda:`index` current until the guard goes (tensor/cuda_device_guard.hpp).
detail::CudaDeviceGuard on_device(int index) {
  return detail::CudaDeviceGuard(index, [](cudaError_t error, const std::string& what) {
    throw_backend("cg: NcclCommunicator: " + what + ": " + cuda_error(error));
  });
}

} // namespace

NcclUniqueId NcclCommunicator::make_unique_id() {
  NcclRawId raw{};
  const nccl_result result = nccl().get_unique_id(&raw);
  if (result != nccl_success)
    throw_backend("cg: ncclGetUniqueId failed: " + nccl_error(result));
  NcclUniqueId id;
  static_assert(sizeof id.bytes == sizeof raw.internal);
  std::memcpy(id.bytes.data(), raw.internal, sizeof raw.internal);
  return id;
}

int NcclCommunicator::version() {
  int v = 0;
  const nccl_result result = nccl().get_version(&v);
  if (result != nccl_success)
    throw_backend("cg: ncclGetVersion failed: " + nccl_error(result));
  return v;
}

std::string NcclCommunicator::load_error() {
  try {
    (void)nccl();
    return "";
  } catch (const CommunicatorError& e) { // what load_nccl() throws, and nothing else here
    return e.what();
  }
}

bool NcclCommunicator::available() noexcept {
  try {
    return load_error().empty();
  } catch (const std::bad_alloc&) { // no memory for the message: no NCCL either
    return false;
  }
}

NcclCommunicator::NcclCommunicator(const NcclUniqueId& id, int size, int rank, int cuda_device,
                                   CUstream_st* stream)
    : stream_(stream), size_(size), rank_(rank), device_(cuda_device) {
  const std::string call = "joining the group";
  if (size < 1 || rank < 0 || rank >= size) {
    throw CommunicatorError(CommErrorKind::invalid,
                            "cg: NcclCommunicator: rank " + std::to_string(rank) +
                                " is not in a group of " + std::to_string(size));
  }
  const NcclApi& api = nccl();
  const detail::CudaDeviceGuard guard = on_device(device_);
  if (stream_ == nullptr) {
    cudaStream_t own = nullptr;
    const cudaError_t error = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    if (error != cudaSuccess)
      fail(CommErrorKind::backend, call, "cudaStreamCreateWithFlags: " + cuda_error(error));
    stream_ = own;
    own_stream_ = true;
  }
  if (const cudaError_t error =
          cudaEventCreateWithFlags(&default_stream_done_, cudaEventDisableTiming);
      error != cudaSuccess) {
    if (own_stream_)
      (void)cudaStreamDestroy(stream_);
    fail(CommErrorKind::backend, call, "cudaEventCreateWithFlags: " + cuda_error(error));
  }
  NcclRawId raw{};
  std::memcpy(raw.internal, id.bytes.data(), sizeof raw.internal);
  nccl_comm comm = nullptr;
  const nccl_result result = api.comm_init_rank(&comm, size, raw, rank);
  if (result != nccl_success) {
    if (own_stream_)
      (void)cudaStreamDestroy(stream_);
    (void)cudaEventDestroy(default_stream_done_);
    fail(CommErrorKind::backend, call, "ncclCommInitRank: " + join_error(api, result));
  }
  comm_ = comm;
}

NcclCommunicator::~NcclCommunicator() {
  try {
    const detail::CudaDeviceGuard guard = on_device(device_);
    // Abort frees what destroy would without waiting for the peers: at
    // teardown one of them may be dead (destroy would wait for it), and nothing
    // is in flight.
    abort("the communicator is destroyed"); // bounded, and nothing if aborted before
    // An abort still waiting for the stream holds CUDA's locks on it: its
    // stream and event are left to the process's end rather than waited for.
    if (comm_ != nullptr && !abort_finished_->load(std::memory_order_acquire))
      return;
    (void)cudaEventDestroy(default_stream_done_);
    if (own_stream_)
      (void)cudaStreamDestroy(stream_);
  } catch (...) {
    // Destructors do not throw; the process is likely going down anyway.
  }
}

void NcclCommunicator::fail(CommErrorKind kind, const std::string& call,
                            const std::string& detail) const {
  throw CommunicatorError(kind, "cg: NcclCommunicator rank " + std::to_string(rank_) + " of " +
                                    std::to_string(size_) + ": " + call + ": " + detail);
}

void NcclCommunicator::check_alive(const std::string& call) const {
  if (!aborted_.load(std::memory_order_acquire))
    return;
  std::string reason;
  {
    const std::lock_guard<std::mutex> lock(abort_mutex_);
    reason = abort_reason_;
  }
  fail(CommErrorKind::aborted, call, "the communicator was aborted: " + reason);
}

void NcclCommunicator::check(const Tensor& t, const char* role, const std::string& call) const {
  const std::string what(role);
  if (!t.defined())
    fail(CommErrorKind::invalid, call, what + " is an undefined tensor");
  if (t.device() != Device{DeviceKind::cuda, device_}) {
    fail(
        CommErrorKind::invalid, call,
        what + " is on " + to_string(t.device()) +
            ", the communicator on cuda:" + std::to_string(device_) +
            (t.device().kind == DeviceKind::cpu ? " (use HostCommunicator for host tensors)" : ""));
  }
  if (!t.is_contiguous())
    fail(CommErrorKind::invalid, call, what + " " + t.describe() + " is not contiguous");
}

void NcclCommunicator::after_default_stream(const std::string& call) {
  cudaError_t error = cudaEventRecord(default_stream_done_, cudaStreamLegacy);
  if (error == cudaSuccess)
    error = cudaStreamWaitEvent(stream_, default_stream_done_, 0);
  if (error != cudaSuccess)
    fail(CommErrorKind::backend, call, "ordering after the default stream: " + cuda_error(error));
}

void NcclCommunicator::enqueued(int result, const std::string& call) {
  if (result != nccl_success && result != nccl_in_progress)
    fail(CommErrorKind::backend, call, nccl_error(result));
}

void NcclCommunicator::send(const Tensor& t, int peer) {
  const std::string call = "send to rank " + std::to_string(peer);
  check_alive(call);
  check(t, "the tensor", call);
  if (peer < 0 || peer >= size_ || peer == rank_)
    fail(CommErrorKind::invalid, call, "no such peer");
  const detail::CudaDeviceGuard guard = on_device(device_);
  after_default_stream(call);
  enqueued(nccl().send(t.data_ptr(), static_cast<std::size_t>(t.numel()), nccl_type(t.dtype()),
                       peer, comm_, stream_),
           call);
}

void NcclCommunicator::recv(Tensor& t, int peer) {
  const std::string call = "recv from rank " + std::to_string(peer);
  check_alive(call);
  check(t, "the tensor", call);
  if (peer < 0 || peer >= size_ || peer == rank_)
    fail(CommErrorKind::invalid, call, "no such peer");
  const detail::CudaDeviceGuard guard = on_device(device_);
  after_default_stream(call);
  enqueued(nccl().recv(t.data_ptr(), static_cast<std::size_t>(t.numel()), nccl_type(t.dtype()),
                       peer, comm_, stream_),
           call);
}

Tensor NcclCommunicator::recv_new(DType dtype, const std::vector<std::int64_t>& shape, int peer) {
  const std::string call = "recv from rank " + std::to_string(peer);
  check_alive(call);
  if (peer < 0 || peer >= size_ || peer == rank_)
    fail(CommErrorKind::invalid, call, "no such peer");
  std::uint64_t count = 1;
  bool overflow = false;
  for (const std::int64_t extent : shape)
    overflow |=
        extent < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(extent), &count);
  std::uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(count, std::uint64_t{dtype_size(dtype)}, &bytes);
  if (overflow)
    fail(CommErrorKind::invalid, call, "the shape's byte count overflows");
  const detail::CudaDeviceGuard guard = on_device(device_);
  // Made in stream()'s order: memory the legacy default stream's kernels
  // gave back is reused only after them, without this stream waiting for the
  // rest of that stream's work.
  const int device = device_;
  Tensor t = Tensor::adopt(
      detail::cuda_allocate(std::max<std::uint64_t>(bytes, 1), device, stream_),
      [device](void* storage) { detail::cuda_free(storage, device); }, dtype, shape, {},
      Device{DeviceKind::cuda, device});
  enqueued(nccl().recv(t.data_ptr(), static_cast<std::size_t>(count), nccl_type(dtype), peer, comm_,
                       stream_),
           call);
  return t;
}

void NcclCommunicator::allreduce(Tensor& t, ReduceOp op) {
  const std::string call = "allreduce(" + std::string(to_string(op)) + ")";
  check_alive(call);
  check(t, "the tensor", call);
  if (!detail::reduction_supported(t.dtype(), op)) {
    fail(CommErrorKind::invalid, call,
         std::string(to_string(op)) + " of " + std::string(to_string(t.dtype())) +
             " tensors is not supported");
  }
  const detail::CudaDeviceGuard guard = on_device(device_);
  after_default_stream(call);
  enqueued(nccl().all_reduce(t.data_ptr(), t.data_ptr(), static_cast<std::size_t>(t.numel()),
                             nccl_type(t.dtype()), nccl_op(op), comm_, stream_),
           call);
}

void NcclCommunicator::allgather(const Tensor& in, Tensor& out) {
  const std::string call = "allgather";
  check_alive(call);
  check(in, "the input", call);
  check(out, "the output", call);
  if (in.dtype() != out.dtype() || out.numel() != in.numel() * size_) {
    fail(CommErrorKind::invalid, call,
         "the output " + out.describe() + " must have the dtype and " + std::to_string(size_) +
             " times the elements of the input " + in.describe());
  }
  const detail::CudaDeviceGuard guard = on_device(device_);
  after_default_stream(call);
  enqueued(nccl().all_gather(in.data_ptr(), out.data_ptr(), static_cast<std::size_t>(in.numel()),
                             nccl_type(in.dtype()), comm_, stream_),
           call);
}

void NcclCommunicator::reducescatter(const Tensor& in, Tensor& out, ReduceOp op) {
  const std::string call = "reducescatter(" + std::string(to_string(op)) + ")";
  check_alive(call);
  check(in, "the input", call);
  check(out, "the output", call);
  if (in.dtype() != out.dtype() || in.numel() != out.numel() * size_) {
    fail(CommErrorKind::invalid, call,
         "the input " + in.describe() + " must have the dtype and " + std::to_string(size_) +
             " times the elements of the output " + out.describe());
  }
  if (!detail::reduction_supported(in.dtype(), op)) {
    fail(CommErrorKind::invalid, call,
         std::string(to_string(op)) + " of " + std::string(to_string(in.dtype())) +
             " tensors is not supported");
  }
  const detail::CudaDeviceGuard guard = on_device(device_);
  after_default_stream(call);
  enqueued(nccl().reduce_scatter(in.data_ptr(), out.data_ptr(),
                                 static_cast<std::size_t>(out.numel()), nccl_type(in.dtype()),
                                 nccl_op(op), comm_, stream_),
           call);
}

void NcclCommunicator::synchronize() {
  const std::string call = "synchronize";
  check_alive(call);
  const detail::CudaDeviceGuard guard = on_device(device_);
  // Small operations finish within microseconds: the first 100 us poll
  // without sleeping (a sleep is 50 us or more of the scheduler's), then
  // the pauses grow to 1 ms.
  const auto start = std::chrono::steady_clock::now();
  const auto spin_until = start + std::chrono::microseconds(100);
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream_);
    if (state == cudaSuccess)
      return;
    if (state != cudaErrorNotReady) {
      abort("synchronize: " + cuda_error(state));
      fail(CommErrorKind::backend, call, "the stream failed: " + cuda_error(state));
    }
    nccl_result async = nccl_success;
    if (nccl().comm_get_async_error(comm_, &async) == nccl_success && async != nccl_success &&
        async != nccl_in_progress) {
      abort("synchronize: " + nccl_error(async));
      fail(CommErrorKind::backend, call, nccl_error(async));
    }
    if (std::chrono::steady_clock::now() - start >= timeout()) {
      const std::string reason =
          "the GPU work did not finish within " + std::to_string(timeout().count()) + " ms";
      abort(reason);
      fail(CommErrorKind::timeout, call, reason);
    }
    check_alive(call); // aborted from another thread meanwhile
    if (std::chrono::steady_clock::now() < spin_until)
      continue;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
}

void NcclCommunicator::abort(std::string_view reason) noexcept {
  {
    const std::lock_guard<std::mutex> lock(abort_mutex_);
    if (aborted_.load(std::memory_order_relaxed))
      return;
    try {
      abort_reason_ = reason;
    } catch (...) {
      // Out of memory: abort without the reason.
    }
    aborted_.store(true, std::memory_order_release);
  }
  if (comm_ == nullptr)
    return;
  // ncclCommAbort stops NCCL's kernels, then waits for the communicator's
  // stream: a stream held by other work (a kernel queued before that never
  // ends) would hold the caller as long. It runs on a thread of its own,
  // waited for at most kAbortWait, then left to finish: whoever aborts (a
  // deadline passed, a peer died) returns in bounded time.
  try {
    auto finished = std::make_shared<std::promise<void>>();
    std::future<void> done = finished->get_future();
    std::thread([comm = comm_, finished, aborted = abort_finished_] {
      (void)nccl().comm_abort(comm); // the library is loaded: comm exists
      aborted->store(true, std::memory_order_release);
      finished->set_value();
    }).detach();
    (void)done.wait_for(kAbortWait);
  } catch (...) { // no thread to be had: abort here
    (void)nccl().comm_abort(comm_);
    abort_finished_->store(true, std::memory_order_release);
  }
}

void NcclCommunicator::warm_up() {
  Tensor one = Tensor::zeros(DType::float32, {1}, Device{DeviceKind::cuda, device_});
  allreduce(one, ReduceOp::sum);
  synchronize();
}

} // namespace cg
