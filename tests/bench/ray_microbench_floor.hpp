// ray_microbench_floor.hpp - the bare floor of ray_microbench: its three
// patterns in plain C++, nothing of ours.
//
//   std::vector<int> cpus = graph.bound_cpus();   // ours' placement, or empty
//   double calls_per_s = cg_floor::calls_per_second(cg_floor::Pattern::chain, cpus, 20000);
//
// The driver fork()s one process per actor; they talk through one mmap'd
// shared region, a mailbox per edge (a sequence number and an 8-byte value,
// each on a cache line of its own). A call is the driver posting its input,
// the actors echoing it along the pattern's edges, and the driver waiting for
// the result (all four, for scatter-gather) before the next call: what Ray's
// benchmark and ours time.
//
// Placement is ours: given the CPUs launch() bound (the driver's, then each
// actor's), the floor binds its processes to the same ones; given none, it
// binds nothing. Waiting is what a fast hand-written program does:
//   - when every process has a CPU of its own (no more processes than CPUs
//     this process may use), it spins and never sleeps: nobody needs the
//     core, and nothing sees a message sooner;
//   - otherwise it spins a few pauses, yields the CPU a while (the peer it
//     waits for may need this very core), then sleeps on a futex, woken by
//     the poster only when someone sleeps.
// That is the floor ours is judged against, not the worst program one could
// write: ours decides by the same count whether to spin long
// (cg/cpu_binding.hpp), so the gap is what ours adds to moving a word between
// processes on the same cores.
#pragma once

#include <vector>

namespace cg_floor {

enum class Pattern {
  single_actor,   // driver -> a -> driver
  scatter_gather, // driver -> a, b, c, d -> driver
  chain,          // driver -> a -> b -> c -> d -> driver
};

/// The actors of `pattern`: 1 or 4.
int actors(Pattern pattern);

/// Sequential calls a second of `pattern` over `calls` calls (after a
/// warm-up), its processes bound to `cpus` (the driver's first) when that
/// names one per process; 0 if an actor process failed or echoed a wrong value.
double calls_per_second(Pattern pattern, const std::vector<int>& cpus, int calls);

} // namespace cg_floor
