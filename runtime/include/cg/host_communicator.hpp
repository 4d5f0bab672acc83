// cg/host_communicator.hpp - A Communicator over shared memory, for host tensors.
//
//   // The creator (the driver, or a test before fork()):
//   cg::HostGroupConfig config{.ranks = 2, .max_message_bytes = 1 << 20};
//   cg::SharedSegment area =
//       cg::SharedSegment::create_anonymous("group", cg::host_group_footprint(config));
//   cg::HostGroup::create(area.data(), config);
//   // A fork()ed child keeps the mapping: cg::HostGroup::attach(area.data()).
//   // An exec()ed child inherits area.fd() (ChildProcess::spawn's `inherit`):
//   //   cg::SharedSegment mine = cg::SharedSegment::adopt(fd);
//   //   cg::HostGroup group = cg::HostGroup::attach(mine.data());  // check valid()
//   // Each rank, in its own process or thread:
//   cg::HostCommunicator comm(group, rank);
//   comm.allreduce(t, cg::ReduceOp::sum);
//   // Whoever notices a dead rank (the driver): group.abort("actor b died");
//
// The group lives in memory that every rank maps (a SharedSegment, or plain
// memory when the ranks are threads): a header, then one slot per rank with
// a data area of max_message_bytes. A rank only ever writes its own data area
// (a message it sends, or its input to a collective) and every call finishes
// before the rank's next call starts, so one area per rank suffices:
//   - send posts the message in the sender's area for one receiver, who
//     claims it, checks dtype and shape against its tensor, copies it and
//     answers; the sender returns with that answer;
//   - a collective publishes each rank's input, waits until every rank has
//     (barrier), computes its own result from all the areas, in rank order,
//     and waits again before returning, so that nobody overwrites an area
//     still being read. Every rank reduces in the same order, so all get
//     bitwise the same result; float16 and bfloat16 are reduced in float and
//     rounded once; integer sums and products wrap; integer avg truncates.
//     bool supports min (and), max (or) and product (and).
// Waiting spins briefly, yields, then sleeps on a futex in the area (shared
// between processes), capped at 100 ms per sleep.
//
// Failures (see cg/communicator.hpp for the contract) are CommunicatorErrors
// naming the rank and the call. A recv that times out leaves the group usable;
// so does a send whose message was not claimed yet (it is withdrawn) and a
// mismatch (both sides, or every rank of a collective, report it). A
// collective that times out aborts the group: its barrier is broken for good.
//
// Limits: a message or collective input of at most max_message_bytes;
// tensors of at most 16 dimensions; host tensors only. One HostCommunicator
// per rank at a time; the memory must outlive every HostGroup and
// HostCommunicator on it.
#pragma once

#include <cg/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cg {

namespace detail {
struct HostGroupHeader;
}

struct HostGroupConfig {
  int ranks = 2;                            // >= 1
  std::size_t max_message_bytes = 1u << 20; // per message or collective input
};

/// Bytes a group occupies (a multiple of 64), or 0 for an invalid config
/// (ranks < 1, or a size that does not fit).
std::size_t host_group_footprint(const HostGroupConfig& config) noexcept;

/// A non-owning view of a group living in shared (or plain) memory.
class HostGroup {
public:
  HostGroup() = default;

  /// Initialises a new group in `memory` (64-byte aligned, at least
  /// host_group_footprint(config) bytes, zero-filled as a new SharedSegment
  /// is). Returns an invalid group for null or misaligned memory or an
  /// invalid config.
  static HostGroup create(void* memory, const HostGroupConfig& config) noexcept;

  /// A view of a group that create() initialised, possibly in another
  /// process; check valid() before trusting memory you did not initialise.
  static HostGroup attach(void* memory) noexcept;

  /// The memory carries a group of this layout version.
  bool valid() const noexcept;
  HostGroupConfig config() const noexcept; // precondition: valid()

  /// Marks the group failed and wakes every waiting rank in every process;
  /// their calls, and every later one, throw CommunicatorError{aborted} with
  /// `reason` (the first one given; at most 255 bytes are kept). Idempotent;
  /// a no-op on an invalid group.
  void abort(std::string_view reason) noexcept;
  bool aborted() const noexcept;
  std::string abort_reason() const; // empty unless aborted()

private:
  friend class HostCommunicator;
  explicit HostGroup(detail::HostGroupHeader* header) noexcept : header_(header) {}
  detail::HostGroupHeader* header_ = nullptr;
};

class HostCommunicator final : public Communicator {
public:
  /// Rank `rank` (0 <= rank < ranks) of `group`. Throws
  /// CommunicatorError{invalid} for an invalid group or rank.
  HostCommunicator(HostGroup group, int rank);

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }

  void send(const Tensor& t, int peer) override;
  void recv(Tensor& t, int peer) override;
  void allreduce(Tensor& t, ReduceOp op) override;
  void allgather(const Tensor& in, Tensor& out) override;
  void reducescatter(const Tensor& in, Tensor& out, ReduceOp op) override;
  void synchronize() override {}
  void abort(std::string_view reason) noexcept override { group_.abort(reason); }

  HostGroup group() const noexcept { return group_; }

private:
  struct Collective;
  void run_collective(Collective& c);

  HostGroup group_;
  int rank_ = 0;
  int size_ = 0;
};

} // namespace cg
