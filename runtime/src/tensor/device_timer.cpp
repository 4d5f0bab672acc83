// device_timer.cpp - CUDA events around the ports' device work
// (tensor/device_timer.hpp). Without CUDA nothing runs on a stream: the
// timer records nothing.
#include "tensor/device_timer.hpp"

#if defined(CG_HAVE_CUDA)
#include "tensor/cuda_device_guard.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#endif

#include <utility>

namespace cg::detail {

DeviceTimer::DeviceTimer(ActorProfile& profile, std::string actor, int device) noexcept
    : profile_(profile), actor_(std::move(actor)), device_(device) {}

#if defined(CG_HAVE_CUDA)
namespace {

cudaEvent_t as_event(void* event) { return static_cast<cudaEvent_t>(event); }
cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// The anchor is renewed after this long, when nothing is pending.
constexpr std::int64_t kAnchorLifeNs = 1'000'000'000;

// cuda:`device` current for a scope; `error` says whether CUDA refused.
struct OnDevice {
  cudaError_t error = cudaSuccess;
  CudaDeviceGuard guard;
  explicit OnDevice(int device)
      : guard(device, [this](cudaError_t e, const std::string&) { error = e; }) {}
};

} // namespace

DeviceTimer::~DeviceTimer() {
  if (anchor_stream_ == nullptr)
    return; // never timed anything
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess)
    return; // the runtime is gone (process exit)
  (void)cudaSetDevice(device_);
  // What finishes within 100 ms; the rest (a stream that never finishes) is
  // left, events and all, to the process's end.
  for (int i = 0; i < 100 && !pending_.empty() && !stopped_; ++i) {
    collect();
    if (!pending_.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (pending_.empty()) {
    for (void* event : free_)
      (void)cudaEventDestroy(as_event(event));
    if (anchor_ != nullptr)
      (void)cudaEventDestroy(as_event(anchor_));
    if (open_ != nullptr)
      (void)cudaEventDestroy(as_event(open_));
    if (anchor_stream_ != nullptr)
      (void)cudaStreamDestroy(as_stream(anchor_stream_));
  }
  (void)cudaSetDevice(previous);
}

void DeviceTimer::stop(const char* call, int error) noexcept {
  if (stopped_)
    return;
  stopped_ = true;
  const auto e = static_cast<cudaError_t>(error);
  std::fprintf(stderr,
               "cg: actor '%s': its device work is not timed from now on: %s on cuda:%d "
               "failed: %s: %s\n",
               actor_.c_str(), call, device_, cudaGetErrorName(e), cudaGetErrorString(e));
}

// An event back to the free list (destroyed when there is no room for it).
void DeviceTimer::give_back(void* event) noexcept {
  try {
    free_.push_back(event);
  } catch (...) {
    (void)cudaEventDestroy(as_event(event));
  }
}

void* DeviceTimer::event() noexcept {
  if (!free_.empty()) {
    void* event = free_.back();
    free_.pop_back();
    return event;
  }
  cudaEvent_t made = nullptr;
  if (const cudaError_t e = cudaEventCreate(&made); e != cudaSuccess) {
    stop("cudaEventCreate", e);
    return nullptr;
  }
  return made;
}

// A fresh anchor when there is none, or when it is old and nothing pending
// was timed against it.
bool DeviceTimer::anchored() noexcept {
  if (anchor_ != nullptr &&
      (!pending_.empty() || open_ != nullptr || monotonic_ns() - anchor_ns_ < kAnchorLifeNs))
    return true;
  if (anchor_stream_ == nullptr) {
    cudaStream_t made = nullptr;
    if (const cudaError_t e = cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking);
        e != cudaSuccess) {
      stop("cudaStreamCreateWithFlags", e);
      return false;
    }
    anchor_stream_ = made;
  }
  if (anchor_ == nullptr && (anchor_ = event()) == nullptr)
    return false;
  cudaError_t e = cudaEventRecord(as_event(anchor_), as_stream(anchor_stream_));
  if (e == cudaSuccess)
    e = cudaEventSynchronize(as_event(anchor_));
  if (e != cudaSuccess) {
    stop("anchoring the GPU's clock", e);
    return false;
  }
  anchor_ns_ = monotonic_ns();
  return true;
}

void DeviceTimer::begin(void* stream, Start start) noexcept {
  if (stopped_ || open_ != nullptr)
    return;
  const OnDevice current(device_);
  if (current.error != cudaSuccess)
    return stop("selecting the device", current.error);
  collect();
  if (!anchored())
    return;
  if (start == Start::after_legacy_stream) {
    void* legacy_done = event();
    if (legacy_done == nullptr)
      return;
    cudaError_t e = cudaEventRecord(as_event(legacy_done), cudaStreamLegacy);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(as_stream(stream), as_event(legacy_done), 0);
    give_back(legacy_done); // the wait holds the record it saw; the event may be recorded again
    if (e != cudaSuccess)
      return stop("ordering after the legacy default stream", e);
  }
  void* first = event();
  if (first == nullptr)
    return;
  if (const cudaError_t e = cudaEventRecord(as_event(first), as_stream(stream)); e != cudaSuccess) {
    give_back(first);
    return stop("cudaEventRecord", e);
  }
  open_ = first;
}

void DeviceTimer::end(void* stream, const Work& work) noexcept {
  if (stopped_ || open_ == nullptr)
    return;
  const OnDevice current(device_);
  if (current.error != cudaSuccess)
    return stop("selecting the device", current.error);
  void* start = std::exchange(open_, nullptr);
  void* finish = event();
  if (finish == nullptr) {
    give_back(start);
    return;
  }
  if (const cudaError_t e = cudaEventRecord(as_event(finish), as_stream(stream));
      e != cudaSuccess) {
    give_back(start);
    give_back(finish);
    return stop("cudaEventRecord", e);
  }
  try {
    pending_.push_back({start, finish, work, profile_.execution});
  } catch (...) { // no memory for one more: this one goes untimed
    give_back(start);
    give_back(finish);
  }
}

void DeviceTimer::cancel() noexcept {
  if (open_ != nullptr)
    give_back(std::exchange(open_, nullptr));
}

void DeviceTimer::collect() noexcept {
  while (!stopped_ && !pending_.empty()) {
    const Pending& oldest = pending_.front();
    const cudaError_t done = cudaEventQuery(as_event(oldest.end));
    if (done == cudaErrorNotReady)
      return;
    float from_anchor_to_start = 0, from_anchor_to_end = 0;
    cudaError_t e = done;
    if (e == cudaSuccess)
      e = cudaEventElapsedTime(&from_anchor_to_start, as_event(anchor_), as_event(oldest.start));
    if (e == cudaSuccess)
      e = cudaEventElapsedTime(&from_anchor_to_end, as_event(anchor_), as_event(oldest.end));
    if (e != cudaSuccess)
      return stop("timing device work", e);
    auto ns = [&](float ms) { return anchor_ns_ + std::llround(double{ms} * 1e6); };
    profile_.recorder.record(oldest.work.op, oldest.work.channel, oldest.execution,
                             ns(from_anchor_to_start), ns(from_anchor_to_end), oldest.work.bytes);
    give_back(oldest.start);
    give_back(oldest.end);
    pending_.pop_front();
  }
}

#else

DeviceTimer::~DeviceTimer() = default;
void DeviceTimer::begin(void*, Start) noexcept {}
void DeviceTimer::end(void*, const Work&) noexcept {}
void DeviceTimer::cancel() noexcept {}
void DeviceTimer::collect() noexcept {}

#endif

} // namespace cg::detail
