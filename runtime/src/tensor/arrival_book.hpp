// tensor/arrival_book.hpp - which tensors are still arriving on a communication
// stream, and what a use of each must wait for (internal).
//
// With cgc --overlap-gpu-communication a receive (an NCCL recv, a CUDA IPC
// copy) is queued on the communication stream and its port returns at once;
// the schedule reads early, ahead of computes that do not need the value, so
// that the transfer runs beside them. The compute that does need it must wait
// for it on the GPU, and only that one: were the wait queued when the port
// returns, every compute queued after the early read (the ones it was moved
// ahead of) would wait for the transfer too, and nothing would overlap.
//
// So a port books the tensor it returns with the event recorded after its
// transfer, and the wait is queued when a task takes the tensor as an input
// (tensors/arrivals.hpp carries that out on CUDA). This file is the
// bookkeeping alone, free of CUDA, so that unit tests hold its rules:
//   - a tensor is known by its storage (views of it share that);
//   - a use takes every arrival booked for that storage, oldest first, and
//     each is waited for once: a second use waits for nothing more;
//   - the end of an execution takes all that is left (a value whose task was
//     skipped for an upstream error is still waited for before its memory
//     goes back to the pool, in the compute stream's order).
// A send is the other way round: its tensor must outlive it, and the
// sender's kernels go on beside it. SendHolds keeps each sent tensor until
// the event recorded after its send has completed, then lets it go (its
// memory then goes back to the pool after the send, never during it).
// transfer_order() states, per mode, how a transfer is ordered with the
// actor's compute and its host thread.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace cg::detail {

/// How a transfer on the communication stream is ordered with the actor's
/// compute (its kernels on the legacy default stream) and its host thread.
struct TransferOrder {
  bool host_waits;                 // the port returns only once the transfer is done
  bool compute_waits_on_gpu;       // the compute using the tensor waits on an event
  bool transfer_waits_for_compute; // the transfer waits for all compute queued before it
};

/// Without overlap a port waits for its transfer on the host, after the
/// compute queued before it (its buffer may come from that compute's memory).
/// With overlap the host never waits: a receive goes into a buffer made in
/// the communication stream's order, so it need not wait for the compute
/// queued before it, and the compute using it waits for its event. (A send
/// still waits for the compute that made its tensor: it reads it.)
constexpr TransferOrder transfer_order(bool overlap) noexcept {
  return overlap ? TransferOrder{false, true, false} : TransferOrder{true, false, true};
}

/// A CUDA event of cuda:`device` (cudaEvent_t), recorded after a transfer.
struct Arrival {
  void* event = nullptr;
  int device = 0;
  bool operator==(const Arrival&) const = default;
};

/// The tensors still arriving, by storage, oldest first.
class ArrivalBook {
public:
  /// The tensor whose storage is `storage` is complete once `arrival` is.
  void expect(const void* storage, Arrival arrival);
  /// What a use of `storage` must wait for (possibly nothing); forgotten here.
  std::vector<Arrival> take(const void* storage);
  /// Everything still booked, oldest first; the book is empty after.
  std::vector<Arrival> take_all();
  bool empty() const noexcept { return pending_.empty(); }
  std::size_t size() const noexcept { return pending_.size(); }

private:
  struct Pending {
    const void* storage;
    Arrival arrival;
  };
  std::vector<Pending> pending_; // a handful at most: one per value read ahead
};

/// Sent tensors (`Held`: cg::Tensor; anything in tests), each kept until
/// the arrival recorded after its send is done.
template <class Held> class SendHolds {
public:
  void hold(Held held, Arrival sent) { held_.push_back({std::move(held), sent}); }

  /// Lets go of every tensor whose send `done(arrival)` says has finished
  /// (sends on different streams finish in any order), and returns their
  /// arrivals, oldest first, for their events to be used again.
  template <class Done> std::vector<Arrival> release_done(Done&& done) {
    std::vector<Arrival> released;
    for (auto it = held_.begin(); it != held_.end();) {
      if (done(it->second)) {
        released.push_back(it->second);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
    return released;
  }

  bool empty() const noexcept { return held_.empty(); }
  std::size_t size() const noexcept { return held_.size(); }

private:
  std::vector<std::pair<Held, Arrival>> held_; // at most the sends a channel's slots let through
};

} // namespace cg::detail
