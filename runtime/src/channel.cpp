// channel.cpp — the shared-memory message ring: slot hand-off, waiting and waking.
//
// Synchronisation is two monotonic counters per hand-off: a slot's sequence
// (writer -> readers) and each reader's consumed count (reader -> writer), both
// with release/acquire ordering so that payload bytes are visible before the
// counter that announces them. Sleeping uses a futex word per direction plus a
// waiter count, so the side that makes progress only pays for a FUTEX_WAKE when
// somebody actually sleeps. The waiter count and the counters follow the
// store-buffer (Dekker) pattern, hence the seq_cst fences on both sides: either
// the sleeper sees the progress, or the waker sees the sleeper.
#include "cg/channel.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <ctime>
#include <new>

#include "cg/detail/channel_layout.hpp"

namespace cg {
namespace {

using detail::ChannelHeader;
using detail::SlotHeader;

// Spins before sleeping: a short burst covers the common case where the peer is
// running on another core and about to make progress.
constexpr int spin_limit = 128;
// Then yields the core a while before sleeping: with more processes than
// cores (a driver and two actors on two cores), the peer we wait for often
// needs *our* core, and a futex sleep/wake per hop costs tens of µs.
// Measured with scripts/quickstart on the 2-core dev machine: the chain's
// median went from 75-95 µs (spin, then futex) to 10-13 µs.
constexpr int yield_limit = 64;

// Each futex sleep is capped so that a lost wake-up (e.g. a peer process that
// died between updating a counter and waking) costs at most this much latency.
constexpr std::chrono::milliseconds max_sleep{100};

constexpr std::uint64_t round_up(std::uint64_t n, std::uint64_t to) noexcept { return (n + to - 1) / to * to; }

inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

// Not FUTEX_PRIVATE_FLAG: waiters and wakers may be in different processes.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  // EINTR, EAGAIN (word changed) and ETIMEDOUT all mean "re-check": ignore the result.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Called after the progress has been stored (release): wakes sleepers, if any.
void wake(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters) noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in wait_until
  if (waiters.load(std::memory_order_relaxed) != 0) {
    word.fetch_add(1, std::memory_order_release);
    futex_wake_all(word);
  }
}

enum class Probe { ready, pending, corrupt };

// Waits until probe() stops answering `pending`, the channel closes, or the
// deadline passes. Closed wins over everything, as the contract promises.
template <class ProbeFn>
ChannelStatus wait_until(ChannelHeader& h, std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& waiters,
                         Deadline deadline, ProbeFn probe) noexcept {
  for (int spin = 0;; ++spin) {
    if (h.closed.load(std::memory_order_acquire) != 0) return ChannelStatus::closed;
    switch (probe()) {
      case Probe::ready: return ChannelStatus::ok;
      case Probe::corrupt: return ChannelStatus::corrupt;
      case Probe::pending: break;
    }
    if (spin < spin_limit) {
      cpu_relax();
      continue;
    }
    if (spin < spin_limit + yield_limit) {
      sched_yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return ChannelStatus::timeout;
    const std::chrono::nanoseconds sleep =
        std::min<std::chrono::nanoseconds>(deadline - now, max_sleep);

    // Read the word before announcing ourselves and re-checking: any wake that
    // happens after the re-check has bumped it, so FUTEX_WAIT will not sleep.
    const std::uint32_t seen = word.load(std::memory_order_acquire);
    waiters.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in wake()
    if (h.closed.load(std::memory_order_relaxed) == 0 && probe() == Probe::pending) {
      futex_wait(word, seen, sleep);
    }
    waiters.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace

const char* to_string(ChannelStatus status) noexcept {
  switch (status) {
    case ChannelStatus::ok: return "ok";
    case ChannelStatus::closed: return "closed";
    case ChannelStatus::timeout: return "timeout";
    case ChannelStatus::too_large: return "too_large";
    case ChannelStatus::corrupt: return "corrupt";
  }
  return "unknown";
}

std::size_t channel_footprint(const ChannelConfig& config) noexcept {
  if (config.slots == 0 || config.readers == 0) return 0;
  const std::uint64_t stride = sizeof(SlotHeader) + round_up(config.slot_bytes, detail::cache_line);
  std::uint64_t slots_total = 0;
  if (__builtin_mul_overflow(stride, std::uint64_t{config.slots}, &slots_total)) return 0;
  const std::uint64_t fixed =
      sizeof(ChannelHeader) + std::uint64_t{config.readers} * sizeof(detail::ReaderState);
  std::uint64_t total = 0;
  if (__builtin_add_overflow(fixed, slots_total, &total)) return 0;
  if (total > SIZE_MAX) return 0;
  return static_cast<std::size_t>(total);
}

// ---- Channel ---------------------------------------------------------------

Channel Channel::create(void* memory, const ChannelConfig& config) noexcept {
  const std::size_t footprint = channel_footprint(config);
  if (memory == nullptr || footprint == 0 ||
      reinterpret_cast<std::uintptr_t>(memory) % detail::cache_line != 0) {
    return Channel{};
  }
  // Only headers and counters need initialising; payload bytes are never read
  // before a publish has written them.
  auto* h = new (memory) ChannelHeader{};
  h->version = detail::channel_version;
  h->slots = config.slots;
  h->slot_bytes = config.slot_bytes;
  h->readers = config.readers;
  h->slot_stride = sizeof(SlotHeader) + round_up(config.slot_bytes, detail::cache_line);
  h->footprint = footprint;
  for (std::uint32_t r = 0; r < config.readers; ++r) new (detail::reader_state(h, r)) detail::ReaderState{};
  for (std::uint32_t s = 0; s < config.slots; ++s) {
    new (detail::slot_header(h, config.readers, h->slot_stride, s)) SlotHeader{};
  }
  // Last, so that whoever sees the magic (with acquire) sees an initialised channel.
  h->magic.store(detail::channel_magic, std::memory_order_release);
  return Channel{h};
}

Channel Channel::attach(void* memory) noexcept { return Channel{static_cast<ChannelHeader*>(memory)}; }

bool Channel::valid() const noexcept {
  if (header_ == nullptr) return false;
  if (header_->magic.load(std::memory_order_acquire) != detail::channel_magic) return false;
  if (header_->version != detail::channel_version) return false;
  const ChannelConfig c = config();
  return header_->footprint != 0 && header_->footprint == channel_footprint(c) &&
         header_->slot_stride == sizeof(SlotHeader) + round_up(c.slot_bytes, detail::cache_line);
}

ChannelConfig Channel::config() const noexcept {
  assert(header_ != nullptr);
  return ChannelConfig{header_->slots, header_->slot_bytes, header_->readers};
}

void Channel::close() noexcept {
  if (header_ == nullptr) return;
  header_->closed.store(1, std::memory_order_seq_cst);
  // Bump both words unconditionally: a waiter that read a word just before the
  // bump then fails its FUTEX_WAIT instead of sleeping.
  header_->reader_futex.fetch_add(1, std::memory_order_seq_cst);
  header_->writer_futex.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(header_->reader_futex);
  futex_wake_all(header_->writer_futex);
}

bool Channel::closed() const noexcept {
  return header_ == nullptr || header_->closed.load(std::memory_order_acquire) != 0;
}

// ---- ChannelWriter ---------------------------------------------------------

ChannelWriter::ChannelWriter(Channel channel) noexcept {
  if (!channel.valid()) return;
  header_ = channel.header_;
  // Cache the geometry: the hot path must not trust memory another process can
  // scribble on for anything that decides where we write.
  slots_ = header_->slots;
  slot_bytes_ = header_->slot_bytes;
  readers_ = header_->readers;
  stride_ = header_->slot_stride;
  next_ = header_->published.load(std::memory_order_acquire);
}

ChannelStatus ChannelWriter::acquire(std::size_t bytes, std::span<std::byte>& payload, Deadline deadline) noexcept {
  if (header_ == nullptr) return ChannelStatus::closed;
  if (bytes > slot_bytes_) return ChannelStatus::too_large;

  const ChannelStatus status = wait_until(*header_, header_->writer_futex, header_->writer_waiters, deadline, [&] {
    if (next_ < free_until_) return Probe::ready;
    // Message next_ reuses the slot of message next_ - K: every reader must have
    // released that one, i.e. consumed > next_ - K.
    std::uint64_t slowest = UINT64_MAX;
    for (std::uint32_t r = 0; r < readers_; ++r) {
      const std::uint64_t consumed = detail::reader_state(header_, r)->consumed.load(std::memory_order_acquire);
      if (consumed > next_) return Probe::corrupt;  // released messages that were never published
      slowest = std::min(slowest, consumed);
    }
    free_until_ = slowest + slots_;
    return next_ < free_until_ ? Probe::ready : Probe::pending;
  });
  if (status != ChannelStatus::ok) return status;

  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, static_cast<std::uint32_t>(next_ % slots_));
  payload = std::span<std::byte>(detail::slot_payload(slot), bytes);
  acquired_ = bytes;
  holding_ = true;
  return ChannelStatus::ok;
}

void ChannelWriter::publish(MessageKind kind, std::size_t bytes) noexcept {
  assert(holding_ && "cg::ChannelWriter::publish without a successful acquire");
  assert(bytes <= acquired_);
  if (!holding_) return;
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, static_cast<std::uint32_t>(next_ % slots_));
  slot->kind.store(static_cast<std::uint32_t>(kind), std::memory_order_relaxed);
  slot->size.store(static_cast<std::uint32_t>(std::min(bytes, acquired_)), std::memory_order_relaxed);
  slot->sequence.store(next_ + 1, std::memory_order_release);  // makes payload, kind and size visible
  ++next_;
  holding_ = false;
  header_->published.store(next_, std::memory_order_release);
  wake(header_->reader_futex, header_->reader_waiters);
}

// ---- ChannelReader ---------------------------------------------------------

ChannelReader::ChannelReader(Channel channel, std::uint32_t reader_index) noexcept {
  if (!channel.valid()) return;
  assert(reader_index < channel.header_->readers && "cg::ChannelReader: reader index out of range");
  if (reader_index >= channel.header_->readers) return;
  header_ = channel.header_;
  slots_ = header_->slots;
  slot_bytes_ = header_->slot_bytes;
  readers_ = header_->readers;
  index_ = reader_index;
  stride_ = header_->slot_stride;
  next_ = detail::reader_state(header_, index_)->consumed.load(std::memory_order_acquire);
}

ChannelStatus ChannelReader::acquire(Message& message, Deadline deadline) noexcept {
  if (header_ == nullptr) return ChannelStatus::closed;
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, static_cast<std::uint32_t>(next_ % slots_));

  const ChannelStatus status = wait_until(*header_, header_->reader_futex, header_->reader_waiters, deadline, [&] {
    const std::uint64_t sequence = slot->sequence.load(std::memory_order_acquire);
    if (sequence == next_ + 1) return Probe::ready;
    // Older values are the slot's previous occupant (or 0): not published yet.
    // A newer one is impossible while we hold the slot unreleased.
    return sequence > next_ + 1 ? Probe::corrupt : Probe::pending;
  });
  if (status != ChannelStatus::ok) return status;

  // Load each field once and validate the copy, so that memory changing under us
  // can never steer a read outside the slot.
  const std::uint32_t kind = slot->kind.load(std::memory_order_relaxed);
  const std::uint32_t size = slot->size.load(std::memory_order_relaxed);
  if (size > slot_bytes_) return ChannelStatus::corrupt;
  if (kind != static_cast<std::uint32_t>(MessageKind::value) &&
      kind != static_cast<std::uint32_t>(MessageKind::error)) {
    return ChannelStatus::corrupt;
  }
  message.kind = static_cast<MessageKind>(kind);
  message.payload = std::span<const std::byte>(detail::slot_payload(slot), size);
  message.sequence = next_;
  holding_ = true;
  return ChannelStatus::ok;
}

void ChannelReader::release() noexcept {
  if (!holding_) return;
  holding_ = false;
  ++next_;
  // Release: our reads of the payload happen-before the writer overwrites it.
  detail::reader_state(header_, index_)->consumed.store(next_, std::memory_order_release);
  wake(header_->writer_futex, header_->writer_waiters);
}

}  // namespace cg
