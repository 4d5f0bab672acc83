// cg/detail/futex.hpp - Sleeping on a word in shared memory, across processes.
//
// Used by the channels (cg/channel.hpp) and the host communicator: a waiter
// reads the word, announces itself, re-checks its condition and sleeps while
// the word is unchanged; a waker changes the word, then wakes.
// Not FUTEX_PRIVATE_FLAG: waiters and wakers may be different processes.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

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
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
}

} // namespace cg::detail
