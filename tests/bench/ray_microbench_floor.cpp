// ray_microbench_floor.cpp - the bare floor of ray_microbench: fork()ed
// processes passing a word through mailboxes in one shared mapping.
//
// Nothing here comes from the runtime, on purpose: the floor is what a
// hand-written program gets on this machine, so that a figure of ours has
// something of the same run to stand beside. How it waits and why:
// ray_microbench_floor.hpp.
#include "ray_microbench_floor.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <new>

namespace cg_floor {
namespace {

using Clock = std::chrono::steady_clock;

// One edge: the number of the call whose value it holds, and the value.
// Each on a cache line of its own, so that posting on one edge does not
// steal the line another edge's reader spins on.
struct alignas(64) Mailbox {
  std::atomic<std::uint32_t> call{0};
  std::atomic<std::uint32_t> sleepers{0}; // waiters inside the futex path
  std::atomic<std::uint64_t> value{0};
};

// Five mailboxes are enough for every pattern: the chain has five edges,
// scatter-gather one broadcast edge and four back, the single actor two.
struct Region {
  Mailbox boxes[5];
};

Mailbox& input_of(Region& region, Pattern pattern, int actor) {
  return pattern == Pattern::chain ? region.boxes[actor] : region.boxes[0];
}
Mailbox& output_of(Region& region, int actor) { return region.boxes[actor + 1]; }

void pause_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

void post(Mailbox& box, std::uint32_t call, std::uint64_t value) {
  box.value.store(value, std::memory_order_relaxed);
  // seq_cst, paired with the waiter's: either it sees this call, or we see
  // it asleep and wake it.
  box.call.store(call, std::memory_order_seq_cst);
  if (box.sleepers.load(std::memory_order_seq_cst) != 0)
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&box.call), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

// Waits until `box` holds call `call`; false once `deadline` passes (the
// driver's guard against an actor that died).
bool await(Mailbox& box, std::uint32_t call, bool own_cpu, Clock::time_point deadline) {
  auto ready = [&] { return box.call.load(std::memory_order_acquire) == call; };
  if (own_cpu) {
    for (std::uint32_t spins = 1;; ++spins) {
      if (ready())
        return true;
      pause_cpu();
      if (spins % 65536 == 0 && Clock::now() > deadline)
        return false;
    }
  }
  for (int spins = 0; spins < 4; ++spins) {
    if (ready())
      return true;
    pause_cpu();
  }
  for (int yields = 0; yields < 64; ++yields) {
    if (ready())
      return true;
    sched_yield();
  }
  for (;;) {
    box.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = box.call.load(std::memory_order_seq_cst);
    if (seen != call) {
      // A short timeout only so that the deadline is looked at.
      const timespec timeout{0, 100'000'000};
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&box.call), FUTEX_WAIT, seen, &timeout,
              nullptr, 0);
    }
    box.sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (ready())
      return true;
    if (Clock::now() > deadline)
      return false;
  }
}

bool bind_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// An actor process: echoes `total` calls from its input to its output.
[[noreturn]] void run_actor(Region& region, Pattern pattern, int actor, int cpu, bool own_cpu,
                            std::uint32_t total) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive a driver that died
  if (cpu >= 0 && !bind_to(cpu))
    _exit(3);
  Mailbox& in = input_of(region, pattern, actor);
  Mailbox& out = output_of(region, actor);
  for (std::uint32_t call = 1; call <= total; ++call) {
    if (!await(in, call, own_cpu, Clock::time_point::max()))
      _exit(4);
    post(out, call, in.value.load(std::memory_order_relaxed));
  }
  _exit(0);
}

} // namespace

int actors(Pattern pattern) { return pattern == Pattern::single_actor ? 1 : 4; }

double calls_per_second(Pattern pattern, const std::vector<int>& cpus, int calls) {
  const int n = actors(pattern);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return 0;
  const bool own_cpu = n + 1 <= CPU_COUNT(&allowed);
  const bool bound = static_cast<int>(cpus.size()) == n + 1;

  void* memory =
      mmap(nullptr, sizeof(Region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return 0;
  Region& region = *new (memory) Region;
  const int warm_up = calls / 10 > 100 ? calls / 10 : 100;
  const auto total = static_cast<std::uint32_t>(warm_up + calls);

  pid_t children[4] = {};
  bool ok = true;
  for (int actor = 0; actor < n && ok; ++actor) {
    children[actor] = fork();
    if (children[actor] == 0)
      run_actor(region, pattern, actor, bound ? cpus[actor + 1] : -1, own_cpu, total);
    ok = children[actor] > 0;
  }
  if (ok && bound)
    ok = bind_to(cpus[0]);

  double rate = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  Clock::time_point start;
  for (std::uint32_t call = 1; ok && call <= total; ++call) {
    if (call == static_cast<std::uint32_t>(warm_up) + 1)
      start = Clock::now();
    post(region.boxes[0], call, call);
    // The single actor and the chain answer on one edge, scatter-gather on four.
    const int answers = pattern == Pattern::scatter_gather ? n : 1;
    for (int a = 0; a < answers && ok; ++a) {
      Mailbox& result = output_of(region, pattern == Pattern::chain ? n - 1 : a);
      ok = await(result, call, own_cpu, deadline) &&
           result.value.load(std::memory_order_relaxed) == call;
    }
  }
  if (ok)
    rate = calls / std::chrono::duration<double>(Clock::now() - start).count();

  for (int actor = 0; actor < n; ++actor) {
    if (children[actor] <= 0)
      continue;
    if (!ok)
      kill(children[actor], SIGKILL);
    int status = 0;
    if (waitpid(children[actor], &status, 0) != children[actor] || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      rate = 0;
  }
  if (bound)
    sched_setaffinity(0, sizeof allowed, &allowed);
  munmap(memory, sizeof(Region));
  return rate;
}

} // namespace cg_floor
