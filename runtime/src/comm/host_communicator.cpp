// host_communicator.cpp - HostGroup's layout and HostCommunicator's protocol.
//
// Layout: [HostGroupHeader][rank slot 0][rank slot 1]..., each slot a
// RankSlot followed by the rank's data area (max_message_bytes, rounded up
// to 64). Every field a peer reads is written before a release store that the
// peer acquires: a slot's p2p state word for messages, its arrival counter for
// collectives. The header's futex word wakes sleepers, all of them, whatever
// they wait for: groups are small, and a wake-up that was not for you costs
// one re-check.
//
// Point to point: the p2p word of the sender's slot is `phase | receiver << 2`
// (idle, posted, claimed, done), so a receiver claims with one compare and
// swap that also checks the message is for it. A sender that times out
// withdraws its message with the opposite swap; if the receiver claimed it
// first, the copy is under way and the sender waits for it (bounded by the
// abort a dead receiver will cause).
//
// Collectives: each slot counts the barriers its rank has arrived at; barrier
// k is passed when every counter is >= k. Between the two barriers of a call
// the slots are read-only, so every rank sees the same inputs and the same
// call records, and reaches the same verdict.
#include <cg/host_communicator.hpp>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "comm/host_reduce.hpp"
#include "shm/wait.hpp"
#include "support/deadline.hpp"
#include "tensor/tensor_copy.hpp"

namespace cg {
namespace detail {

inline constexpr std::size_t group_line = 64;
inline constexpr std::uint64_t host_group_magic =
    0x314d'4d4f'4348'4743ull; // "CGHCOMM1" little-endian
inline constexpr std::uint32_t host_group_version = 1;
inline constexpr int max_dims = 16;
inline constexpr std::size_t reason_bytes = 256;
inline constexpr std::size_t problem_bytes = 192;

static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

struct TensorMeta {
  std::uint32_t dtype;
  std::uint32_t ndim;
  std::int64_t shape[max_dims];
};

struct HostGroupHeader {
  // Line 0: identity and configuration, immutable after create().
  alignas(group_line) std::atomic<std::uint64_t> magic; // stored last by create()
  std::uint32_t version;
  std::uint32_t ranks;
  std::uint64_t max_message_bytes;
  std::uint64_t slot_stride;
  std::uint64_t footprint;
  // Line 1: sleepers.
  alignas(group_line) std::atomic<std::uint32_t> futex;
  std::atomic<std::uint32_t> waiters;
  // Line 2: 0 = running, 1 = the reason is being written, 2 = aborted.
  alignas(group_line) std::atomic<std::uint32_t> aborted;
  char reason[reason_bytes];
};

enum P2pPhase : std::uint32_t { idle = 0, posted = 1, claimed = 2, done = 3 };
enum Verdict : std::uint32_t { accepted = 0, refused = 1 };
enum class CollectiveOp : std::uint32_t { allreduce = 1, allgather = 2, reducescatter = 3 };

struct RankSlot {
  // This rank sending: p2p = phase | receiver << 2. verdict and expected are
  // the receiver's answer, written before it stores `done`.
  alignas(group_line) std::atomic<std::uint32_t> p2p;
  std::uint32_t verdict;
  TensorMeta sent;
  TensorMeta expected;
  // This rank in a collective: written before it arrives at the first barrier.
  alignas(group_line) std::atomic<std::uint64_t> arrivals;
  std::uint32_t op;      // CollectiveOp
  std::int32_t reduce;   // ReduceOp, -1 for allgather
  std::uint32_t invalid; // 1: this rank's arguments are wrong, `problem` says how
  TensorMeta input;
  char problem[problem_bytes];
};

constexpr std::uint64_t round_up(std::uint64_t n, std::uint64_t to) noexcept {
  return (n + to - 1) / to * to;
}

constexpr std::uint64_t header_bytes = round_up(sizeof(HostGroupHeader), group_line);
constexpr std::uint64_t slot_header_bytes = round_up(sizeof(RankSlot), group_line);

} // namespace detail

namespace {

using detail::Clock;
using detail::deadline_after;
using detail::HostGroupHeader;
using detail::RankSlot;
using detail::TensorMeta;

// Waits as the channels do (shm/wait.hpp) for ready() (it may act, e.g. claim
// a message), an abort of the group, or the deadline; an abort seen first wins.
enum class Outcome { ready, aborted, timeout };

detail::WaitWords words_of(HostGroupHeader& h) noexcept { return {h.futex, h.waiters}; }

// Called after progress was stored (release): wakes the sleepers, if any.
void wake(HostGroupHeader& h) noexcept { detail::wake(words_of(h)); }

template <class Ready>
Outcome wait_until(HostGroupHeader& h, Clock::time_point deadline, Ready ready) noexcept {
  switch (detail::wait_until(
      words_of(h), deadline, [&] { return h.aborted.load(std::memory_order_acquire) != 0; },
      ready)) {
  case detail::WaitOutcome::ready:
    return Outcome::ready;
  case detail::WaitOutcome::stopped:
    return Outcome::aborted;
  case detail::WaitOutcome::timeout:
    break;
  }
  return Outcome::timeout;
}

std::string ms_text(std::chrono::milliseconds timeout) {
  return std::to_string(timeout.count()) + " ms";
}

std::string meta_text(const TensorMeta& m) {
  std::string s(to_string(static_cast<DType>(m.dtype)));
  s += "[";
  for (std::uint32_t i = 0; i < m.ndim && i < detail::max_dims; ++i) {
    if (i != 0)
      s += ", ";
    s += std::to_string(m.shape[i]);
  }
  return s + "]";
}

TensorMeta meta_of(const Tensor& t) noexcept {
  TensorMeta m{};
  m.dtype = static_cast<std::uint32_t>(t.dtype());
  m.ndim = static_cast<std::uint32_t>(std::min<std::int64_t>(t.dim(), detail::max_dims));
  for (std::uint32_t i = 0; i < m.ndim; ++i)
    m.shape[i] = t.shape()[i];
  return m;
}

bool same_meta(const TensorMeta& a, const TensorMeta& b) noexcept {
  if (a.dtype != b.dtype || a.ndim != b.ndim || a.ndim > detail::max_dims)
    return false;
  return std::equal(a.shape, a.shape + a.ndim, b.shape);
}

void copy_text(char* out, std::size_t capacity, std::string_view text) noexcept {
  const std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

std::string read_text(const char* in, std::size_t capacity) {
  return std::string(in, ::strnlen(in, capacity));
}

std::string collective_text(std::uint32_t op, std::int32_t reduce) {
  std::string name;
  switch (static_cast<detail::CollectiveOp>(op)) {
  case detail::CollectiveOp::allreduce:
    name = "allreduce";
    break;
  case detail::CollectiveOp::allgather:
    name = "allgather";
    break;
  case detail::CollectiveOp::reducescatter:
    name = "reducescatter";
    break;
  default:
    name = "collective(" + std::to_string(op) + ")";
    break;
  }
  if (reduce >= 0)
    name += "(" + std::string(to_string(static_cast<ReduceOp>(reduce))) + ")";
  return name;
}

} // namespace

std::size_t host_group_footprint(const HostGroupConfig& config) noexcept {
  if (config.ranks < 1)
    return 0;
  const std::uint64_t area = config.max_message_bytes;
  if (area > (UINT64_MAX >> 2))
    return 0;
  const std::uint64_t stride =
      detail::slot_header_bytes + detail::round_up(area, detail::group_line);
  std::uint64_t slots = 0;
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(stride, static_cast<std::uint64_t>(config.ranks), &slots) ||
      __builtin_add_overflow(slots, detail::header_bytes, &total) || total > SIZE_MAX) {
    return 0;
  }
  return static_cast<std::size_t>(total);
}

HostGroup HostGroup::create(void* memory, const HostGroupConfig& config) noexcept {
  const std::size_t footprint = host_group_footprint(config);
  if (memory == nullptr || footprint == 0 ||
      reinterpret_cast<std::uintptr_t>(memory) % detail::group_line != 0) {
    return HostGroup();
  }
  auto* h = new (memory) HostGroupHeader{};
  h->version = detail::host_group_version;
  h->ranks = static_cast<std::uint32_t>(config.ranks);
  h->max_message_bytes = config.max_message_bytes;
  h->slot_stride =
      detail::slot_header_bytes + detail::round_up(config.max_message_bytes, detail::group_line);
  h->footprint = footprint;
  auto* base = static_cast<std::byte*>(memory) + detail::header_bytes;
  for (int r = 0; r < config.ranks; ++r)
    new (base + r * h->slot_stride) RankSlot{};
  h->magic.store(detail::host_group_magic, std::memory_order_release);
  return HostGroup(h);
}

HostGroup HostGroup::attach(void* memory) noexcept {
  return HostGroup(static_cast<HostGroupHeader*>(memory));
}

bool HostGroup::valid() const noexcept {
  if (header_ == nullptr ||
      header_->magic.load(std::memory_order_acquire) != detail::host_group_magic)
    return false;
  if (header_->version != detail::host_group_version || header_->ranks < 1 ||
      header_->ranks > INT_MAX)
    return false;
  const HostGroupConfig config{static_cast<int>(header_->ranks),
                               static_cast<std::size_t>(header_->max_message_bytes)};
  return header_->footprint == host_group_footprint(config) &&
         header_->slot_stride == detail::slot_header_bytes +
                                     detail::round_up(config.max_message_bytes, detail::group_line);
}

HostGroupConfig HostGroup::config() const noexcept {
  return HostGroupConfig{static_cast<int>(header_->ranks),
                         static_cast<std::size_t>(header_->max_message_bytes)};
}

void HostGroup::abort(std::string_view reason) noexcept {
  if (!valid())
    return;
  std::uint32_t expected = 0;
  if (header_->aborted.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    copy_text(header_->reason, detail::reason_bytes, reason);
    header_->aborted.store(2, std::memory_order_release);
  }
  // Wake unconditionally: aborting is rare and must reach every sleeper.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  header_->futex.fetch_add(1, std::memory_order_release);
  detail::futex_wake_all(header_->futex);
}

bool HostGroup::aborted() const noexcept {
  return header_ != nullptr && header_->aborted.load(std::memory_order_acquire) != 0;
}

std::string HostGroup::abort_reason() const {
  if (!aborted())
    return {};
  // The aborter is copying at most reason_bytes; give it a moment (it may
  // also have died half-way, hence the bound).
  for (int i = 0; i < 10'000 && header_->aborted.load(std::memory_order_acquire) != 2; ++i)
    sched_yield();
  if (header_->aborted.load(std::memory_order_acquire) != 2)
    return "(no reason recorded)";
  return read_text(header_->reason, detail::reason_bytes);
}

// One collective call of this rank: what it was asked, what it publishes.
struct HostCommunicator::Collective {
  detail::CollectiveOp op;
  std::int32_t reduce; // ReduceOp, or -1
  const Tensor* in;
  Tensor* out;
};

namespace {

// The calling rank's view of the group memory, and its error messages.
class Call {
public:
  Call(const HostCommunicator& comm, HostGroupHeader* h, std::string what)
      : comm_(comm), h_(*h), what_(std::move(what)), deadline_(deadline_after(comm.timeout())) {}

  HostGroupHeader& header() const noexcept { return h_; }
  Clock::time_point deadline() const noexcept { return deadline_; }
  const std::string& what() const noexcept { return what_; }

  RankSlot& slot(int rank) const noexcept {
    return *reinterpret_cast<RankSlot*>(base() + static_cast<std::uint64_t>(rank) * h_.slot_stride);
  }
  std::byte* area(int rank) const noexcept {
    return base() + static_cast<std::uint64_t>(rank) * h_.slot_stride + detail::slot_header_bytes;
  }

  std::string prefix() const {
    return "cg: HostCommunicator rank " + std::to_string(comm_.rank()) + " of " +
           std::to_string(comm_.size()) + ": " + what_ + ": ";
  }

  [[noreturn]] void fail(CommErrorKind kind, const std::string& detail) const {
    throw CommunicatorError(kind, prefix() + detail);
  }

  [[noreturn]] void fail_aborted() const {
    fail(CommErrorKind::aborted, "the group was aborted: " + HostGroup::attach(&h_).abort_reason());
  }

  // Why `t` cannot take part (as the tensor sent, received or an input), or "".
  std::string tensor_problem(const Tensor& t, const char* role, bool bounded) const {
    if (!t.defined())
      return std::string(role) + " is an undefined tensor";
    if (t.device().kind != DeviceKind::cpu) {
      return std::string(role) + " is on " + to_string(t.device()) +
             ": HostCommunicator moves host tensors (use NcclCommunicator for CUDA tensors)";
    }
    if (t.dim() > detail::max_dims) {
      return std::string(role) + " has " + std::to_string(t.dim()) + " dimensions, more than the " +
             std::to_string(detail::max_dims) + " HostCommunicator supports";
    }
    if (bounded && t.nbytes() > h_.max_message_bytes) {
      return std::string(role) + " " + t.describe() + " has " + std::to_string(t.nbytes()) +
             " bytes, more than the group's max_message_bytes (" +
             std::to_string(h_.max_message_bytes) + ")";
    }
    return {};
  }

  void check_peer(int peer) const {
    if (peer < 0 || peer >= comm_.size()) {
      fail(CommErrorKind::invalid,
           "no rank " + std::to_string(peer) + " in a group of " + std::to_string(comm_.size()));
    }
    if (peer == comm_.rank())
      fail(CommErrorKind::invalid, "a rank cannot send to or receive from itself");
  }

private:
  std::byte* base() const noexcept {
    return reinterpret_cast<std::byte*>(&h_) + detail::header_bytes;
  }

  const HostCommunicator& comm_;
  HostGroupHeader& h_;
  std::string what_;
  Clock::time_point deadline_;
};

constexpr std::uint32_t p2p_word(detail::P2pPhase phase, int receiver) noexcept {
  return static_cast<std::uint32_t>(phase) | static_cast<std::uint32_t>(receiver) << 2;
}

constexpr detail::P2pPhase phase_of(std::uint32_t word) noexcept {
  return static_cast<detail::P2pPhase>(word & 3u);
}

// Writes the elements of a host tensor to `out` (one memcpy when contiguous).
void copy_out(const Tensor& t, std::byte* out) {
  if (t.is_contiguous()) {
    std::memcpy(out, t.data_ptr(), t.nbytes());
  } else {
    detail::gather(t, out);
  }
}

// Reads a host tensor's elements from `in`.
void copy_in(const std::byte* in, const Tensor& t) {
  if (t.is_contiguous()) {
    std::memcpy(t.data_ptr(), in, t.nbytes());
  } else {
    detail::scatter(in, t);
  }
}

} // namespace

HostCommunicator::HostCommunicator(HostGroup group, int rank) : group_(group), rank_(rank) {
  if (!group_.valid()) {
    throw CommunicatorError(CommErrorKind::invalid,
                            "cg: HostCommunicator: the memory holds no valid HostGroup");
  }
  size_ = group_.config().ranks;
  if (rank < 0 || rank >= size_) {
    throw CommunicatorError(CommErrorKind::invalid,
                            "cg: HostCommunicator: rank " + std::to_string(rank) +
                                " is not in a group of " + std::to_string(size_));
  }
}

void HostCommunicator::send(const Tensor& t, int peer) {
  const Call call(*this, group_.header_, "send to rank " + std::to_string(peer));
  call.check_peer(peer);
  if (std::string problem = call.tensor_problem(t, "the tensor", true); !problem.empty()) {
    call.fail(CommErrorKind::invalid, problem);
  }
  if (group_.aborted())
    call.fail_aborted();
  RankSlot& mine = call.slot(rank_);
  mine.sent = meta_of(t);
  copy_out(t, call.area(rank_));
  const std::uint32_t posted = p2p_word(detail::posted, peer);
  mine.p2p.store(posted, std::memory_order_release);
  wake(call.header());

  Outcome outcome = wait_until(call.header(), call.deadline(), [&] {
    return phase_of(mine.p2p.load(std::memory_order_acquire)) == detail::done;
  });
  if (outcome != Outcome::ready) {
    std::uint32_t word = posted;
    if (mine.p2p.compare_exchange_strong(word, detail::idle,
                                         std::memory_order_acq_rel)) { // withdrawn
      if (outcome == Outcome::aborted)
        call.fail_aborted();
      call.fail(CommErrorKind::timeout,
                "rank " + std::to_string(peer) + " did not receive within " + ms_text(timeout()));
    }
    if (phase_of(word) != detail::done) { // claimed: the receiver is copying it
      if (outcome == Outcome::aborted)
        call.fail_aborted();
      const std::string reason = "rank " + std::to_string(peer) +
                                 " began receiving but did not finish within " + ms_text(timeout());
      group_.abort(call.prefix() + reason);
      call.fail(CommErrorKind::timeout, reason);
    }
  }
  const std::uint32_t verdict = mine.verdict;
  const TensorMeta expected = mine.expected;
  mine.p2p.store(detail::idle, std::memory_order_release);
  if (verdict != detail::accepted) {
    call.fail(CommErrorKind::mismatch, "rank " + std::to_string(peer) + " expected " +
                                           meta_text(expected) + ", got " + meta_text(meta_of(t)));
  }
}

void HostCommunicator::recv(Tensor& t, int peer) {
  const Call call(*this, group_.header_, "recv from rank " + std::to_string(peer));
  call.check_peer(peer);
  if (std::string problem = call.tensor_problem(t, "the tensor", false); !problem.empty()) {
    call.fail(CommErrorKind::invalid, problem);
  }
  RankSlot& from = call.slot(peer);
  const std::uint32_t posted = p2p_word(detail::posted, rank_);
  const Outcome outcome = wait_until(call.header(), call.deadline(), [&] {
    std::uint32_t word = posted;
    return from.p2p.compare_exchange_strong(word, p2p_word(detail::claimed, rank_),
                                            std::memory_order_acq_rel, std::memory_order_relaxed);
  });
  if (outcome == Outcome::aborted)
    call.fail_aborted();
  if (outcome == Outcome::timeout) {
    call.fail(CommErrorKind::timeout, "nothing arrived from rank " + std::to_string(peer) +
                                          " within " + ms_text(timeout()));
  }
  const TensorMeta mine = meta_of(t);
  const TensorMeta sent = from.sent;
  const bool match = same_meta(mine, sent);
  if (match)
    copy_in(call.area(peer), t);
  from.verdict = match ? detail::accepted : detail::refused;
  from.expected = mine;
  from.p2p.store(p2p_word(detail::done, rank_), std::memory_order_release);
  wake(call.header());
  // A sender that saw an abort while we copied may have moved on and reused
  // its area: what we copied is then not to be trusted.
  if (group_.aborted())
    call.fail_aborted();
  if (!match) {
    call.fail(CommErrorKind::mismatch, "expected " + meta_text(mine) + ", rank " +
                                           std::to_string(peer) + " sent " + meta_text(sent));
  }
}

void HostCommunicator::allreduce(Tensor& t, ReduceOp op) {
  Collective c{detail::CollectiveOp::allreduce, static_cast<std::int32_t>(op), &t, &t};
  run_collective(c);
}

void HostCommunicator::allgather(const Tensor& in, Tensor& out) {
  Collective c{detail::CollectiveOp::allgather, -1, &in, &out};
  run_collective(c);
}

void HostCommunicator::reducescatter(const Tensor& in, Tensor& out, ReduceOp op) {
  Collective c{detail::CollectiveOp::reducescatter, static_cast<std::int32_t>(op), &in, &out};
  run_collective(c);
}

void HostCommunicator::run_collective(Collective& c) {
  const Call call(*this, group_.header_,
                  collective_text(static_cast<std::uint32_t>(c.op), c.reduce));
  const Tensor& in = *c.in;
  Tensor& out = *c.out;

  // What is wrong with this rank's own arguments, published so that every
  // rank fails the call together instead of waiting for this one.
  std::string problem = call.tensor_problem(
      in, c.op == detail::CollectiveOp::allreduce ? "the tensor" : "the input", true);
  if (problem.empty() && c.op != detail::CollectiveOp::allreduce)
    problem = call.tensor_problem(out, "the output", false);
  if (problem.empty() && c.reduce >= 0 &&
      !detail::reduction_supported(in.dtype(), static_cast<ReduceOp>(c.reduce))) {
    problem = std::string(to_string(static_cast<ReduceOp>(c.reduce))) + " of " +
              std::string(to_string(in.dtype())) + " tensors is not supported";
    if (in.dtype() == DType::boolean)
      problem += " (use max for or, min for and)";
  }
  if (problem.empty() && c.op != detail::CollectiveOp::allreduce) {
    const bool gather = c.op == detail::CollectiveOp::allgather;
    const Tensor& whole = gather ? out : in;
    const Tensor& piece = gather ? in : out;
    if (whole.dtype() != piece.dtype() || whole.numel() != piece.numel() * size_) {
      problem = std::string("the ") + (gather ? "output " : "input ") + whole.describe() +
                " must have the dtype and " + std::to_string(size_) +
                " times the elements of the " + (gather ? "input " : "output ") + piece.describe();
    }
  }

  if (group_.aborted())
    call.fail_aborted(); // before touching our area: a recv may still read it
  RankSlot& mine = call.slot(rank_);
  mine.op = static_cast<std::uint32_t>(c.op);
  mine.reduce = c.reduce;
  mine.invalid = problem.empty() ? 0 : 1;
  copy_text(mine.problem, detail::problem_bytes, problem);
  if (problem.empty()) {
    mine.input = meta_of(in);
    copy_out(in, call.area(rank_));
  }

  const std::uint64_t first = mine.arrivals.load(std::memory_order_relaxed) + 1;
  auto barrier = [&](std::uint64_t target) {
    mine.arrivals.store(target, std::memory_order_release);
    wake(call.header());
    const Outcome outcome = wait_until(call.header(), call.deadline(), [&] {
      for (int r = 0; r < size_; ++r) {
        if (call.slot(r).arrivals.load(std::memory_order_acquire) < target)
          return false;
      }
      return true;
    });
    if (outcome == Outcome::aborted)
      call.fail_aborted();
    if (outcome == Outcome::timeout) {
      std::vector<int> missing;
      for (int r = 0; r < size_; ++r) {
        if (call.slot(r).arrivals.load(std::memory_order_acquire) < target)
          missing.push_back(r);
      }
      std::string who = missing.size() == 1 ? "rank " : "ranks ";
      for (std::size_t i = 0; i < missing.size(); ++i)
        who += (i == 0 ? "" : ", ") + std::to_string(missing[i]);
      const std::string reason =
          who + (missing.size() == 1 ? " did" : " do") + " not arrive within " + ms_text(timeout());
      group_.abort(call.prefix() + reason); // the barrier is broken for everyone
      call.fail(CommErrorKind::timeout, reason);
    }
  };
  barrier(first);

  // Every rank reads the same records here: the same verdict everywhere.
  std::optional<CommunicatorError> error;
  if (mine.invalid != 0)
    error.emplace(CommErrorKind::invalid, call.prefix() + problem);
  for (int r = 0; r < size_ && !error; ++r) {
    const RankSlot& other = call.slot(r);
    if (other.invalid != 0) {
      error.emplace(CommErrorKind::mismatch, call.prefix() + "rank " + std::to_string(r) + ": " +
                                                 read_text(other.problem, detail::problem_bytes));
    }
  }
  const RankSlot& root = call.slot(0);
  for (int r = 1; r < size_ && !error; ++r) {
    const RankSlot& other = call.slot(r);
    if (other.op != root.op || other.reduce != root.reduce) {
      error.emplace(CommErrorKind::mismatch, call.prefix() + "rank 0 called " +
                                                 collective_text(root.op, root.reduce) + ", rank " +
                                                 std::to_string(r) + " called " +
                                                 collective_text(other.op, other.reduce));
    } else if (!same_meta(other.input, root.input)) {
      error.emplace(CommErrorKind::mismatch,
                    call.prefix() + "rank 0's input is " + meta_text(root.input) + ", rank " +
                        std::to_string(r) + "'s is " + meta_text(other.input));
    }
  }

  if (!error) {
    try {
      std::vector<const std::byte*> sources(static_cast<std::size_t>(size_));
      const std::size_t item = in.element_size();
      const bool direct = out.is_contiguous();
      std::vector<std::byte> staging(direct ? 0 : out.nbytes());
      std::byte* result = direct ? static_cast<std::byte*>(out.data_ptr()) : staging.data();
      if (c.op == detail::CollectiveOp::allgather) {
        for (int r = 0; r < size_; ++r)
          std::memcpy(result + r * in.nbytes(), call.area(r), in.nbytes());
      } else {
        const auto count = static_cast<std::size_t>(out.numel());
        const std::size_t skip =
            c.op == detail::CollectiveOp::reducescatter ? rank_ * count * item : 0;
        for (int r = 0; r < size_; ++r)
          sources[r] = call.area(r) + skip;
        detail::reduce(in.dtype(), static_cast<ReduceOp>(c.reduce), sources, result, count);
      }
      if (!direct)
        detail::scatter(staging.data(), out);
    } catch (const std::exception& e) { // e.g. bad_alloc: the others must not wait for us in vain
      group_.abort(call.prefix() + e.what());
      throw;
    }
  }

  barrier(first + 1);
  if (error)
    throw *error;
}

} // namespace cg
