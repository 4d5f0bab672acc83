// cg/cpu_binding.hpp - placing the driver and the actors on CPUs of their own.
//
// A round trip between two processes is several times slower when the kernel
// puts both on one core than when each runs on a core of its own: each
// wake-up then waits for the other to be descheduled (docs/performance.md).
// mpirun avoids that by binding each rank to a core whenever there are
// enough cores; launch() does the same when asked:
//
//   cg::LaunchOptions options;
//   options.cpu_binding = cg::CpuBinding::cores;   // or CG_CPU_BINDING=cores
//   auto graph = cg::launch<&chain>(options);
//   graph.bound_cpus();   // {0, 1, 2}: the driver's thread, then each actor
//
// Binding takes the CPUs this process may run on (sched_getaffinity), in
// order: the first for the thread that calls launch() (the driver, which
// writes the inputs and reads the results), the next ones for the actors on
// this host, in the graph's order. When there are more of them than CPUs,
// nothing is bound (as mpirun does when oversubscribed): sharing cores under
// a binding would be worse than letting the kernel move them. The launching
// thread gets its former CPU set back at teardown() if teardown() runs on it.
// Actors on other hosts are not bound.
//
// Waiting follows the same count, bound or not (LaunchOptions::
// spin_when_cpus_suffice, default on): when every thread of the graph can
// have a CPU, a channel wait spins longer before yielding the CPU, as OpenMPI
// ranks busy-poll when not oversubscribed; otherwise it yields at once, so
// that a peer sharing the CPU runs (the waiting policy: shm/wait.hpp).
//
// Each launch() counts its own threads only: a second graph launched while the
// first runs does not know the CPUs the first took (and, launched from a thread
// the first bound, sees that one CPU only, so it binds nothing and does not
// spin). Give concurrent graphs their CPUs with sched_setaffinity before
// launching each from its own thread, or leave binding off.
//
// Bind only where the graph has its cores to itself: a bound process cannot
// move to an idle core while another process runs on its own, so on a busy
// shared machine each hop can wait a whole scheduler tick (milliseconds).
// That is why the default is CpuBinding::none.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace cg {

/// How launch() places the driver and the actors on CPUs.
enum class CpuBinding {
  none,  ///< the kernel decides (default)
  cores, ///< one CPU each, when there are enough (see above)
};

struct LaunchOptions;

/// The binding `options` asks for: LaunchOptions::cpu_binding, else the
/// environment variable CG_CPU_BINDING ("none" or "cores"), else none.
/// LaunchError if CG_CPU_BINDING names neither.
CpuBinding launch_cpu_binding(const std::optional<CpuBinding>& requested);

namespace detail {

/// The environment variables that give an actor process its CPU (a number)
/// and say whether it may count on one of its own ("1").
inline constexpr const char* actor_cpu_variable = "CG_ACTOR_CPU";
inline constexpr const char* actor_spin_variable = "CG_ACTOR_SPIN";

/// In an actor process: binds the calling thread to the CPU CG_ACTOR_CPU
/// names, if set, and marks it has_own_cpu() if CG_ACTOR_SPIN=1; throws
/// std::runtime_error if CG_ACTOR_CPU is malformed or the kernel refuses.
void bind_actor_from_environment();

/// Whether the calling thread can count on a CPU of its own: launch() bound
/// it, or the graph has no more threads than CPUs (LaunchOptions::
/// spin_when_cpus_suffice). Its channel waits then spin ~40 us before
/// yielding the CPU: a message is seen ~1 us sooner than from behind a
/// sched_yield (cg/detail/channel.hpp).
bool has_own_cpu() noexcept;
void set_has_own_cpu(bool own) noexcept;

/// The CPUs thread or process `tid` may run on, ascending (0: the calling
/// thread); empty if the kernel will not say.
std::vector<int> cpus_of(pid_t tid);

/// Restricts thread or process `tid` (0: the calling thread) to `cpus`.
/// False if the kernel refused (the reason in errno).
bool set_cpus(pid_t tid, const std::vector<int>& cpus);

/// One CPU for each of `participants` (the driver first): the first ones of
/// `cpus`; empty when there are more participants than CPUs.
std::vector<int> plan_cpu_binding(std::size_t participants, const std::vector<int>& cpus);

} // namespace detail
} // namespace cg
