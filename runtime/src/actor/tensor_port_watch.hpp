// actor/tensor_port_watch.hpp - how the tensor ports (device, CUDA IPC, NCCL) are watched: each
// read or write inside its NVTX range, recorded in the profile once done, its
// work on a CUDA stream timed by the actor's device timer (internal).
//
// A tensor port's read or write moves the elements too (a copy, an NCCL
// receive), so it is recorded after that, with the tensor's bytes: the
// trace's READ then covers the copy, not only the wait for the header.
#pragma once

#include "tensor/device_timer.hpp"
#include <cg/detail/nvtx.hpp>
#include <cg/detail/profile.hpp>
#include <cg/ports.hpp> // Result
#include <cg/tensor.hpp>

#include <cstddef>
#include <cstdint>

namespace cg::detail {

/// Runs `move` (a read or write of `channel`; true if it happened) inside
/// the NVTX range `nvtx` (null: none) and records it in `profile` (null:
/// none) with the bytes of `tensor`, as `move` left it.
template <class Move>
bool watched(ProfiledOp op, std::uint32_t channel, ActorProfile* profile, const char* nvtx,
             const Result<Tensor>& tensor, Move&& move) {
  const NvtxRange range(nvtx);
  const bool happened = move();
  if (happened && profile != nullptr) {
    const bool has_elements = tensor.ok() && tensor.value().defined();
    profile->record(op, channel, has_elements ? tensor.value().nbytes() : 0);
  }
  return happened;
}

/// A port's device work as its actor's timer times it (a read or write of
/// `channel` moving `bytes` on a CUDA stream); nobody's unless profiled and
/// the execution is one the profile records.
inline TimedWork device_work(ActorProfile* profile, ProfiledOp op, std::uint32_t channel,
                             std::uint64_t bytes) {
  return {profile != nullptr && profile->recording ? profile->device : nullptr,
          {op, channel, bytes}};
}

} // namespace cg::detail
