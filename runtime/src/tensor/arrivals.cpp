// arrivals.cpp - booked arrivals waited for on the legacy default stream (see tensor/arrivals.hpp).
#include "tensor/arrivals.hpp"

#include "tensor/arrival_book.hpp"

#include <cstdio>
#include <string>
#include <vector>

#if defined(CG_HAVE_CUDA)
#include "tensor/cuda_device_guard.hpp"

#include <cuda_runtime_api.h>
#endif

namespace cg::detail {
namespace {

// This thread's book, and the events it is done with, for reuse (a wait
// holds the record it saw, so an event may be recorded again once waited on).
struct ThreadArrivals {
  ArrivalBook book;
  SendHolds<Tensor> sends;
  std::vector<Arrival> free;
  ~ThreadArrivals();
};

ThreadArrivals& mine() {
  thread_local ThreadArrivals arrivals;
  return arrivals;
}

#if defined(CG_HAVE_CUDA)

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess)
    throw TensorError(std::string("cg: overlapped transfer: ") + what +
                      " failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
}

CudaDeviceGuard on_device(int index) {
  return CudaDeviceGuard(
      index, [](cudaError_t error, const std::string& what) { check(error, what.c_str()); });
}

// An event of the current device `device`, from the free list or new.
Arrival event_on(ThreadArrivals& arrivals, int device) {
  for (auto it = arrivals.free.begin(); it != arrivals.free.end(); ++it)
    if (it->device == device) {
      const Arrival found = *it;
      arrivals.free.erase(it);
      return found;
    }
  cudaEvent_t made = nullptr;
  check(cudaEventCreateWithFlags(&made, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return {made, device};
}

// The legacy default stream waits for each of `due`; every event goes back
// to the free list, and the first failure is thrown once all are queued.
void wait_for(ThreadArrivals& arrivals, const std::vector<Arrival>& due) {
  cudaError_t failed = cudaSuccess;
  for (const Arrival& arrival : due) {
    int previous = 0;
    cudaError_t error = cudaGetDevice(&previous);
    if (error == cudaSuccess && previous != arrival.device)
      error = cudaSetDevice(arrival.device);
    if (error == cudaSuccess)
      error = cudaStreamWaitEvent(cudaStreamLegacy, static_cast<cudaEvent_t>(arrival.event), 0);
    if (previous != arrival.device)
      (void)cudaSetDevice(previous);
    if (failed == cudaSuccess)
      failed = error;
    arrivals.free.push_back(arrival);
  }
  check(failed, "cudaStreamWaitEvent on the legacy default stream");
}

// Lets go of the sent tensors whose sends are done (an event that is not
// ready, or that fails, keeps its tensor: better kept than reused early).
void release_sent(ThreadArrivals& arrivals) {
  if (arrivals.sends.empty())
    return;
  for (const Arrival& arrival : arrivals.sends.release_done([](const Arrival& sent) {
         const CudaDeviceGuard guard(sent.device, [](cudaError_t, const std::string&) {});
         return cudaEventQuery(static_cast<cudaEvent_t>(sent.event)) == cudaSuccess;
       }))
    arrivals.free.push_back(arrival);
  (void)cudaGetLastError(); // a failed query is not sticky: no later call should see it
}

// An event recorded after the work queued so far on `stream` of the
// current device `device`.
Arrival record_on(ThreadArrivals& arrivals, void* stream, int device) {
  const Arrival arrival = event_on(arrivals, device);
  if (const cudaError_t error = cudaEventRecord(static_cast<cudaEvent_t>(arrival.event),
                                                static_cast<cudaStream_t>(stream));
      error != cudaSuccess) {
    arrivals.free.push_back(arrival);
    check(error, "cudaEventRecord after the transfer");
  }
  return arrival;
}

#endif

ThreadArrivals::~ThreadArrivals() {
#if defined(CG_HAVE_CUDA)
  // Errors ignored: at a process's exit CUDA may already be gone.
  for (const Arrival& arrival : book.take_all())
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(arrival.event));
  for (const Arrival& arrival : sends.release_done([](const Arrival&) { return true; }))
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(arrival.event));
  for (const Arrival& arrival : free)
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(arrival.event));
#endif
}

} // namespace

#if defined(CG_HAVE_CUDA)

void expect_arrival(const Tensor& t, void* stream) {
  ThreadArrivals& arrivals = mine();
  const int device = t.device().index;
  const CudaDeviceGuard guard = on_device(device);
  arrivals.book.expect(t.storage(), record_on(arrivals, stream, device));
}

void hold_until_sent(const Tensor& t, void* stream) {
  ThreadArrivals& arrivals = mine();
  release_sent(arrivals);
  const int device = t.device().index;
  const CudaDeviceGuard guard = on_device(device);
  arrivals.sends.hold(t, record_on(arrivals, stream, device));
}

void await_arrival(const Tensor& t) {
  ThreadArrivals& arrivals = mine();
  if (arrivals.book.empty() || !t.defined())
    return;
  const std::vector<Arrival> due = arrivals.book.take(t.storage());
  if (!due.empty())
    wait_for(arrivals, due);
}

void await_all_arrivals() noexcept {
  ThreadArrivals& arrivals = mine();
  if (arrivals.book.empty() && arrivals.sends.empty())
    return;
  try {
    release_sent(arrivals);
    wait_for(arrivals, arrivals.book.take_all());
  } catch (const std::exception& e) {
    static bool said = false; // once: the next CUDA call of a method reports it too
    if (!said)
      std::fprintf(stderr, "cg: %s\n", e.what());
    said = true;
  }
}

#else // !CG_HAVE_CUDA

namespace {
[[noreturn]] void throw_no_cuda() {
  throw TensorError("cg: overlapped transfer: this build of the runtime has no CUDA support "
                    "(configure with -DCG_WITH_CUDA=ON on a machine with the CUDA toolkit)");
}
} // namespace

void expect_arrival(const Tensor&, void*) { throw_no_cuda(); }
void hold_until_sent(const Tensor&, void*) { throw_no_cuda(); }
void await_arrival(const Tensor&) {} // nothing is ever booked
void await_all_arrivals() noexcept {}

#endif

std::size_t arrivals_pending() noexcept { return mine().book.size(); }

std::size_t sends_held() noexcept { return mine().sends.size(); }

} // namespace cg::detail
