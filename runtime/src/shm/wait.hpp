// shm/wait.hpp - The one way a thread waits for another through shared memory.
//
// Channels (cg/detail/channel.hpp) and host communicator groups
// (comm/host_communicator.cpp) both wait for a condition that a thread of
// another process will make true, and both wait alike:
//
//   1. spin a few pauses: the condition is often true within a microsecond;
//   2. yield the CPU a while: with more threads than CPUs (a driver and two
//      actors on two cores) the peer we wait for often needs *our* core, and
//      a futex sleep and wake per hop costs tens of microseconds;
//   3. sleep on a futex word, at most max_sleep at a time, so that a lost
//      wake-up (a peer that died between storing progress and waking) costs
//      latency, never a hang.
//
// Step 1 is short (kShortSpin pauses): every pause delays a peer that shares
// our core. A thread that has a CPU of its own (launch() bound it, or its
// graph has no more threads than CPUs: cg/cpu_binding.hpp) spins much longer
// (kOwnCpuSpin, ~40 us): nobody needs its core, and a message is seen sooner
// than from behind a sched_yield. The performance page (docs/performance.md)
// has the figures.
//
// The protocol, on a pair of words in shared memory: a waiter reads `word`,
// announces itself in `waiters`, re-checks its condition and sleeps while
// `word` is unchanged; a waker stores its progress, then calls wake(), which
// bumps `word` and wakes the sleepers only when someone announced itself.
// Not FUTEX_PRIVATE_FLAG: waiters and wakers may be different processes.
#pragma once

#include <cg/cpu_binding.hpp>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

namespace cg::detail {

/// A pause for a spin loop: lets the sibling hyper-thread run.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Sleeps while `word` holds `expected`, at most `timeout`. Returns on a wake,
/// a change, a signal or the timeout alike: the caller re-checks.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr,
          0);
}

/// Wakes every sleeper on `word`.
inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
          0);
}

/// The two shared words one side of a waiting protocol sleeps on.
struct WaitWords {
  std::atomic<std::uint32_t>& word;    // bumped by every wake that finds sleepers
  std::atomic<std::uint32_t>& waiters; // threads about to sleep, or asleep, on `word`
};

/// Pauses before yielding (step 1), for a thread sharing its core, and for a
/// thread with a CPU of its own.
inline constexpr int kShortSpin = 4;
inline constexpr int kOwnCpuSpin = 1024;
/// Yields before sleeping (step 2).
inline constexpr int kYields = 64;
/// The longest single futex sleep (step 3).
inline constexpr std::chrono::milliseconds kMaxSleep{100};

/// Called after the progress has been stored (release): wakes the sleepers,
/// if any.
inline void wake(WaitWords words) noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst); // pairs with the fence in wait_until
  if (words.waiters.load(std::memory_order_relaxed) != 0) {
    words.word.fetch_add(1, std::memory_order_release);
    futex_wake_all(words.word);
  }
}

enum class WaitOutcome { ready, stopped, timeout };

/// Waits until `ready()` returns true, `stopped()` returns true, or the
/// deadline passes; a stop seen first wins. `ready` may act (claim a message):
/// it is not called again once it has returned true. A deadline of
/// time_point::min() looks once and never waits.
template <class Stopped, class Ready>
WaitOutcome wait_until(WaitWords words, std::chrono::steady_clock::time_point deadline,
                       Stopped stopped, Ready ready) noexcept {
  const int spins = has_own_cpu() ? kOwnCpuSpin : kShortSpin;
  for (int round = 0;; round = std::min(round + 1, spins + kYields)) {
    if (stopped())
      return WaitOutcome::stopped;
    if (ready())
      return WaitOutcome::ready;
    if (deadline == std::chrono::steady_clock::time_point::min())
      return WaitOutcome::timeout;
    if (round < spins) {
      cpu_relax();
      continue;
    }
    if (round < spins + kYields) {
      sched_yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return WaitOutcome::timeout;
    const std::chrono::nanoseconds sleep =
        std::min<std::chrono::nanoseconds>(deadline - now, kMaxSleep);

    // Read the word before announcing ourselves and re-checking: any wake that
    // happens after the re-check has bumped it, so FUTEX_WAIT will not sleep.
    const std::uint32_t seen = words.word.load(std::memory_order_acquire);
    words.waiters.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst); // pairs with the fence in wake()
    bool became_ready = false;
    if (!stopped()) {
      became_ready = ready();
      if (!became_ready)
        futex_wait(words.word, seen, sleep);
    }
    words.waiters.fetch_sub(1, std::memory_order_relaxed);
    if (became_ready)
      return WaitOutcome::ready;
  }
}

} // namespace cg::detail
