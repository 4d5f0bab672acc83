// gpu_work.hpp - GPU work a graph's method queues and does not wait for, as a
// kernel launch does: for the test of how far an actor may run ahead of its
// GPU (tests/gpu/device_graphs_test.cpp). A plain header, so that cgc reads
// the graph without CUDA's.
#pragma once

#include <cstdint>

namespace gpu_work {

/// Queues on this thread's current GPU, on the legacy default stream, a step
/// that takes `milliseconds` there (a host function, as a long kernel would)
/// and then counts itself done. Returns the steps this process had done
/// before, as the GPU has them now; -1 without CUDA.
std::int64_t queue_step(int milliseconds);

} // namespace gpu_work
