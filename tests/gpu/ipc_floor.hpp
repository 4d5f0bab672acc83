// ipc_floor.hpp - the floor of a GPU hop between processes: a bare two-process CUDA IPC hop.
//
// gpu_bench's baseline for the runtime's CUDA IPC hops (target gpu_ipc_hop),
// written in plain CUDA with nothing of the runtime: process A sets 16 bytes
// of its buffer (cudaMemsetAsync) and records an interprocess event; process
// B, which opened the buffer and the event once, waits for the event on its
// stream (cudaStreamWaitEvent), copies the 16 bytes device to device out of
// A's buffer, synchronises, and acknowledges through shared memory; then A
// goes again. A hop is A's memset to B's acknowledgement. B is gpu_bench
// itself, started again with --ipc-floor-peer (a fork of a process that
// has used CUDA must not use CUDA: exec gives B a CUDA of its own).
#pragma once

#include <string>

namespace gpu_bench {

struct IpcFloor {
  double p50_micros = 0;
  double p99_micros = 0;
  std::string error; // why it could not be measured; empty when it was
};

/// Measures `hops` hops (after a tenth as many untimed ones) with B started
/// as `self --ipc-floor-peer <fd>`, and checks that B's last copy holds the
/// bytes A set last.
IpcFloor measure_ipc_floor(const std::string& self, int hops);

/// B's side, the whole of `gpu_bench --ipc-floor-peer <fd>`: its exit status.
int ipc_floor_peer(int fd);

} // namespace gpu_bench
