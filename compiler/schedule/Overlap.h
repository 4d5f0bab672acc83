//===- Overlap.h - NCCL receives hoisted ahead of unrelated work -*- C++ -*-===//
//
// `--overlap-gpu-communication`: an actor that receives GPU data just before
// the compute needing it leaves the GPU idle while the transfer runs. Moving
// the receive earlier, ahead of computes it does not depend on, lets the
// runtime start it on a communication stream while those computes run.
//
// CUDA IPC READs (channels flagged in `cudaIpc`) are hoisted by the same
// rule: the runtime starts their copies on the communication stream too.
//
// The rule, per actor, for each NCCL READ in order: move it up past the
// operations just before it that are
//   - not blocking: a plain COMPUTE (not a collective) or a shared-memory
//     WRITE; it never passes a READ, an NCCL WRITE or a collective, so the
//     order of blocking operations on every actor stays as GlobalOrder made
//     it;
//   - not something the receive depends on: the send it pairs with (with
//     everything every member of its group waits for) must not wait for them,
//     directly or through other actors. Otherwise the receive would wait for
//     a send that waits for work queued behind the receive.
// Moved READs are marked. A dependency search that runs past its budget
// leaves that READ where it is: hoisting is an optimisation, never a risk.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "schedule/OperationGraph.h"

#include <cstddef>
#include <vector>

namespace cg::schedule {

/// Hoists NCCL READs, and READs of the channels `cudaIpc` flags (indexed by
/// channel; shorter means none), within `perActor` (each actor's op ids, in
/// order) as described above. Returns, per op id, whether it moved.
std::vector<bool> hoistReceives(const OperationGraph& g,
                                std::vector<std::vector<unsigned>>& perActor,
                                const std::vector<bool>& cudaIpc = {},
                                std::size_t searchBudget = 1u << 20);

} // namespace cg::schedule
