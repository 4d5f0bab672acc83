// cg/communicator.hpp - The interface actors use to move tensors between ranks.
//
//   void step(cg::Communicator& comm, cg::Tensor& grads) {
//     comm.allreduce(grads, cg::ReduceOp::sum);               // every rank calls it
//     if (comm.rank() == 0) comm.send(grads, 1);               // rank 1 calls recv
//     else if (comm.rank() == 1) comm.recv(grads, 0);          // into a pre-shaped tensor
//     comm.synchronize();                                      // NCCL: wait for the GPU
//   }
//
// A group of `size()` ranks (one per actor, each in its own process or
// thread) runs the same sequence of collectives; point-to-point transfers
// pair one send with one recv. Implementations:
//   - cg::HostCommunicator (cg/host_communicator.hpp): host tensors through
//     shared memory, across processes or threads; what runs on machines
//     without GPUs, and in the tests;
//   - cg::NcclCommunicator (cg/nccl_communicator.hpp, CUDA builds only):
//     CUDA tensors through NCCL.
//
// Contract, for every implementation:
//   - send/recv rendezvous: send returns once the receiver has the data;
//     recv fills a tensor that already has the sender's dtype and shape (a
//     difference is an error on both sides, never a truncation);
//   - collectives are barriers: every rank must call the same collective
//     with matching tensors; none returns before all have arrived;
//   - allreduce(t, op): every rank's t becomes the elementwise reduction of
//     all ranks' t; allgather(in, out): out (numel = size * in.numel) is the
//     ranks' inputs concatenated in rank order; reducescatter(in, out, op):
//     in (numel = size * out.numel) is reduced elementwise and rank r gets
//     the r-th of `size` equal consecutive pieces. Pieces are taken in
//     row-major element order (as NCCL counts), whatever the shapes;
//   - nothing waits forever: a call waits at most timeout() (and
//     synchronize() likewise), then throws CommunicatorError{timeout}; a
//     group that was aborted (abort(), an actor died) makes every waiting
//     and later call throw CommunicatorError{aborted} promptly.
// Completion: HostCommunicator's calls return when done. NcclCommunicator's
// calls return once the work is enqueued on its CUDA stream (ordered with the
// other work there); synchronize() waits for it.
// A Communicator is used by one thread at a time.
#pragma once

#include <cg/errors.hpp>
#include <cg/reduce_op.hpp>
#include <cg/tensor.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace cg {

/// Why a communicator call failed.
enum class CommErrorKind {
  timeout,  // a peer did not arrive (or the device did not finish) in time
  aborted,  // the group was aborted (abort(), a dead actor, a failed rank)
  mismatch, // ranks disagree: dtype, shape, collective or reduction
  invalid,  // this call's own arguments are wrong (device, size, peer, ...)
  backend,  // NCCL or CUDA reported an error, or NCCL could not be loaded
};

std::string_view to_string(CommErrorKind kind) noexcept;

/// A failed communicator call; what() says which rank, which call and why.
class CommunicatorError : public Error {
public:
  CommunicatorError(CommErrorKind kind, const std::string& what) : Error(what), kind_(kind) {}
  CommErrorKind kind() const noexcept { return kind_; }

private:
  CommErrorKind kind_;
};

class Communicator {
public:
  virtual ~Communicator() = default;

  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;

  /// Sends `t` to rank `peer`; returns once peer's matching recv has it.
  virtual void send(const Tensor& t, int peer) = 0;
  /// Receives from rank `peer` into `t`, whose dtype and shape must be the sent ones.
  virtual void recv(Tensor& t, int peer) = 0;

  /// In place: t becomes the reduction over all ranks.
  virtual void allreduce(Tensor& t, ReduceOp op) = 0;
  /// out.numel() == size() * in.numel(), same dtype.
  virtual void allgather(const Tensor& in, Tensor& out) = 0;
  /// in.numel() == size() * out.numel(), same dtype.
  virtual void reducescatter(const Tensor& in, Tensor& out, ReduceOp op) = 0;

  /// Waits for the calls made so far to finish (a no-op where they finish before returning).
  virtual void synchronize() = 0;
  /// The CUDA stream the operations run on (a cudaStream_t), for a profile
  /// to time them on; null for a communicator that runs on none.
  virtual void* cuda_stream() const noexcept { return nullptr; }

  /// Marks the whole group failed: wakes every rank's waiting call, in every
  /// process, and makes later calls fail. `reason` appears in their errors.
  /// Safe from any thread; idempotent (the first reason is kept).
  virtual void abort(std::string_view reason) noexcept = 0;

  /// The longest any one call (or synchronize) waits; 30 s unless set.
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }

protected:
  Communicator() = default;
  Communicator(const Communicator&) = default;
  Communicator& operator=(const Communicator&) = default;

private:
  std::chrono::milliseconds timeout_{30'000};
};

} // namespace cg
