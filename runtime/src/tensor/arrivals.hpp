// tensor/arrivals.hpp - tensors arriving on a communication stream, waited for
// on the GPU by the compute that uses them (internal).
//
// The CUDA side of tensor/arrival_book.hpp, one book per thread (an actor's
// loop runs on one thread, in a process or beside others in threads mode):
// an overlapped receive books its tensor with an event recorded after the
// transfer; ActorProcess::call and the collectives wait for the booked
// inputs of the task they run, and ActorProcess::executed for the rest. The
// waits are queued on the legacy default stream, where methods' kernels run
// and where tensors' memory goes back to the pool (tensor/cuda_memory.hpp):
// a tensor dropped unused is therefore given back after its transfer too.
// An overlapped send keeps its tensor here until the send is done.
#pragma once

#include <cg/tensor.hpp>

#include <cstddef>

namespace cg::detail {

/// Records an event after the work queued so far on `stream` (a cudaStream_t
/// of `t`'s device) and books `t` with it. Throws TensorError with CUDA's
/// message (a build without CUDA: always).
void expect_arrival(const Tensor& t, void* stream);

/// Makes the legacy default stream wait, on the GPU, for what this thread
/// booked for `t`'s storage (nothing when none: without overlap, always).
/// Throws TensorError with CUDA's message.
void await_arrival(const Tensor& t);

/// The same for everything this thread still has booked, and lets go of
/// the sent tensors whose sends have finished. A CUDA failure is said once
/// on stderr; the remaining waits are still queued.
void await_all_arrivals() noexcept;

/// Keeps `t` until the work queued so far on `stream` (a cudaStream_t of
/// `t`'s device: its send) is done, so that its memory goes back to the pool
/// only then; the sender's kernels are not held back. Lets go of the tensors
/// whose sends have finished meanwhile. Throws TensorError with CUDA's
/// message (a build without CUDA: always).
void hold_until_sent(const Tensor& t, void* stream);

/// How many tensors this thread has booked and not yet waited for.
std::size_t arrivals_pending() noexcept;

/// How many sent tensors this thread still keeps (their sends not known done).
std::size_t sends_held() noexcept;

} // namespace cg::detail
