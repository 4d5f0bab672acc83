// tensor/gpu_run_ahead.hpp - keeps an actor's loop at most a few executions
// ahead of its GPU (internal).
//
// A method that queues GPU work (a kernel, a cuBLAS call, a copy on a stream)
// returns before that work is done, and the actor's loop goes on: it writes
// the method's result, reads the next inputs and queues more. When what it
// writes does not wait for the GPU (a host value, a tensor its reader orders
// by an event), the driver keeps submitting, and the loop can run arbitrarily
// far ahead of its GPU: the queue of GPU work, and the memory of every tensor
// it still holds, grow without limit. So an actor with GPUs of its own ends
// each execution by recording an event on its GPU's legacy default stream
// (which orders itself after every blocking stream) and waiting for the one it
// recorded max_in_flight executions before: execution i's GPU work is done
// before execution i + max_in_flight begins. That is the graph's max_in_flight,
// the number of executions the channels hold anyway.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cg::detail {

class GpuRunAhead {
public:
  /// For cuda:`device` (this process's ordinal), at most `max_in_flight`
  /// (>= 1) executions ahead. Makes nothing until the first execution ends.
  GpuRunAhead(int device, std::uint32_t max_in_flight) noexcept;
  ~GpuRunAhead();
  GpuRunAhead(const GpuRunAhead&) = delete;
  GpuRunAhead& operator=(const GpuRunAhead&) = delete;

  /// The end of an execution: records its event, then waits until the GPU
  /// has done the work of the execution max_in_flight - 1 before it. False (and
  /// from then on nothing more is done) when CUDA fails; error() says why.
  /// A failure here is the context's, which the next CUDA call of a method
  /// reports too.
  bool executed() noexcept;

  /// Why executed() failed ("cudaEventSynchronize on cuda:0 failed: ...").
  const std::string& error() const noexcept { return error_; }

private:
  bool fail(const char* what, int code) noexcept;

  int device_;
  std::uint32_t max_in_flight_;
  std::vector<void*> events_; // cudaEvent_t, one per execution in flight
  std::uint64_t executions_ = 0;
  bool failed_ = false;
  std::string error_;
};

} // namespace cg::detail
