// ipc_floor.cpp - a bare two-process CUDA IPC hop in plain CUDA (tests/gpu/ipc_floor.hpp).
//
// The two processes share one page (a memfd B inherits): A's handles, then
// a counter each way. Both spin on the counters, as the runtime's actors do
// when they have CPUs to spare, so that the hop measures CUDA and not a
// wake-up.
#include "ipc_floor.hpp"

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>
#endif

namespace gpu_bench {

#if defined(CG_HAVE_CUDA)
namespace {

using Clock = std::chrono::steady_clock;

struct Shared {
  cudaIpcMemHandle_t memory;
  cudaIpcEventHandle_t event;
  std::atomic<std::uint32_t> ready{0}; // B: 1 when it opened both, 2 when it failed
  std::atomic<std::uint32_t> sent{0};  // A: the hop whose bytes it set and recorded
  std::atomic<std::uint32_t> done{0};  // B: the hop it copied
  std::atomic<std::uint32_t> stop{0};  // A: no more hops
  unsigned char last[16] = {};         // B: its copy of the last hop, read back
  char error[256] = {};                // B: why it failed
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
}

// Waits until `done` says so, giving up after `limit` (a peer that died).
template <class Done> bool spin_until(Done done, std::chrono::seconds limit) {
  const Clock::time_point deadline = Clock::now() + limit;
  for (std::uint32_t spins = 0;; ++spins) {
    if (done())
      return true;
    if ((spins & 0xfff) == 0 && Clock::now() > deadline)
      return false;
  }
}

} // namespace

IpcFloor measure_ipc_floor(const std::string& self, int hops) {
  IpcFloor floor;
  const int fd = ::memfd_create("cg-ipc-floor", 0); // inherited by B
  if (fd < 0 || ::ftruncate(fd, sizeof(Shared)) != 0) {
    floor.error = std::string("memfd: ") + std::strerror(errno);
    return floor;
  }
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) {
    ::close(fd);
    floor.error = std::string("mmap: ") + std::strerror(errno);
    return floor;
  }
  Shared* shared = new (page) Shared;
  void* buffer = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  pid_t peer = -1;
  try {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaMalloc(&buffer, 16), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming),
          "cudaEventCreate");
    check(cudaIpcGetMemHandle(&shared->memory, buffer), "cudaIpcGetMemHandle");
    check(cudaIpcGetEventHandle(&shared->event, event), "cudaIpcGetEventHandle");
    const std::string fd_text = std::to_string(fd);
    peer = ::fork();
    if (peer == 0) {
      ::execl(self.c_str(), self.c_str(), "--ipc-floor-peer", fd_text.c_str(), nullptr);
      _exit(127);
    }
    if (peer < 0)
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (!spin_until([&] { return shared->ready.load(std::memory_order_acquire) != 0; },
                    std::chrono::seconds(60)) ||
        shared->ready.load() != 1)
      throw std::runtime_error(std::string("process B did not open A's buffer and event: ") +
                               (shared->error[0] ? shared->error : "it gave no answer in 60 s"));
    const int untimed = std::max(10, hops / 10);
    std::vector<double> samples;
    for (int hop = 1; hop <= untimed + hops; ++hop) {
      const auto n = static_cast<std::uint32_t>(hop);
      const Clock::time_point start = Clock::now();
      check(cudaMemsetAsync(buffer, hop & 0xff, 16, stream), "cudaMemsetAsync");
      check(cudaEventRecord(event, stream), "cudaEventRecord");
      shared->sent.store(n, std::memory_order_release);
      if (!spin_until([&] { return shared->done.load(std::memory_order_acquire) >= n; },
                      std::chrono::seconds(10)))
        throw std::runtime_error("process B did not acknowledge hop " + std::to_string(hop) +
                                 " within 10 s" +
                                 (shared->error[0] ? std::string(": ") + shared->error : ""));
      if (hop > untimed)
        samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    shared->stop.store(1, std::memory_order_release);
    int status = 0;
    ::waitpid(peer, &status, 0);
    peer = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error(std::string("process B failed: ") +
                               (shared->error[0] ? shared->error : "no reason given"));
    // B's last copy holds what A set last: the hops moved the bytes.
    const auto expected = static_cast<unsigned char>((untimed + hops) & 0xff);
    for (unsigned char byte : shared->last)
      if (byte != expected)
        throw std::runtime_error("process B's last copy holds " + std::to_string(byte) +
                                 ", not the " + std::to_string(expected) + " A set");
    std::sort(samples.begin(), samples.end());
    floor.p50_micros = samples[samples.size() / 2];
    floor.p99_micros = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  } catch (const std::exception& e) {
    floor.error = e.what();
  }
  if (peer > 0) {
    ::kill(peer, SIGKILL);
    ::waitpid(peer, nullptr, 0);
  }
  if (event)
    (void)cudaEventDestroy(event);
  if (stream)
    (void)cudaStreamDestroy(stream);
  if (buffer)
    (void)cudaFree(buffer);
  shared->~Shared();
  ::munmap(page, sizeof(Shared));
  ::close(fd);
  return floor;
}

int ipc_floor_peer(int fd) {
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED)
    return 2;
  auto* shared = static_cast<Shared*>(page);
  void* from = nullptr;
  void* to = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  try {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaIpcOpenMemHandle(&from, shared->memory, cudaIpcMemLazyEnablePeerAccess),
          "cudaIpcOpenMemHandle");
    check(cudaIpcOpenEventHandle(&event, shared->event), "cudaIpcOpenEventHandle");
    check(cudaMalloc(&to, 16), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    shared->ready.store(1, std::memory_order_release);
    for (std::uint32_t hop = 1;; ++hop) {
      if (!spin_until(
              [&] {
                return shared->sent.load(std::memory_order_acquire) >= hop ||
                       shared->stop.load(std::memory_order_acquire) != 0;
              },
              std::chrono::seconds(60)))
        throw std::runtime_error("process A sent nothing for 60 s");
      if (shared->sent.load(std::memory_order_acquire) < hop)
        break; // stopped
      check(cudaStreamWaitEvent(stream, event, 0), "cudaStreamWaitEvent");
      check(cudaMemcpyAsync(to, from, 16, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      shared->done.store(hop, std::memory_order_release);
    }
    check(cudaMemcpy(shared->last, to, 16, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    check(cudaIpcCloseMemHandle(from), "cudaIpcCloseMemHandle");
  } catch (const std::exception& e) {
    std::snprintf(shared->error, sizeof shared->error, "%s", e.what());
    shared->ready.store(2, std::memory_order_release);
    return 1;
  }
  return 0;
}

#else

IpcFloor measure_ipc_floor(const std::string&, int) {
  return {0, 0, "the runtime was built without CUDA"};
}

int ipc_floor_peer(int) { return 1; }

#endif

} // namespace gpu_bench
