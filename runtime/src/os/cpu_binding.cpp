// cpu_binding.cpp - CPU sets of threads and processes, and the plan launch() binds by.
#include <cg/cpu_binding.hpp>
#include <cg/errors.hpp>

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace cg {

CpuBinding launch_cpu_binding(const std::optional<CpuBinding>& requested) {
  if (requested)
    return *requested;
  const char* name = std::getenv("CG_CPU_BINDING");
  if (!name || !*name || std::strcmp(name, "none") == 0)
    return CpuBinding::none;
  if (std::strcmp(name, "cores") == 0)
    return CpuBinding::cores;
  throw LaunchError(std::string("the environment variable CG_CPU_BINDING is '") + name +
                    "'; it must be 'none' or 'cores' (or unset)");
}

namespace detail {
namespace {

// Machines with more CPUs than cpu_set_t holds (1024) need a dynamic set.
constexpr int max_cpus = 8192;

struct CpuSet {
  cpu_set_t* set = CPU_ALLOC(max_cpus);
  std::size_t bytes = CPU_ALLOC_SIZE(max_cpus);
  CpuSet() { CPU_ZERO_S(bytes, set); }
  ~CpuSet() { CPU_FREE(set); }
  CpuSet(const CpuSet&) = delete;
  CpuSet& operator=(const CpuSet&) = delete;
};

thread_local bool own_cpu = false;

} // namespace

bool has_own_cpu() noexcept { return own_cpu; }

void set_has_own_cpu(bool own) noexcept { own_cpu = own; }

std::vector<int> cpus_of(pid_t tid) {
  CpuSet cpus;
  std::vector<int> out;
  if (::sched_getaffinity(tid, cpus.bytes, cpus.set) != 0)
    return out;
  for (int cpu = 0; cpu < max_cpus; ++cpu)
    if (CPU_ISSET_S(cpu, cpus.bytes, cpus.set))
      out.push_back(cpu);
  return out;
}

bool set_cpus(pid_t tid, const std::vector<int>& wanted) {
  CpuSet cpus;
  for (int cpu : wanted)
    if (cpu >= 0 && cpu < max_cpus)
      CPU_SET_S(cpu, cpus.bytes, cpus.set);
  return ::sched_setaffinity(tid, cpus.bytes, cpus.set) == 0;
}

void bind_actor_from_environment() {
  if (const char* spin = std::getenv(actor_spin_variable))
    set_has_own_cpu(std::strcmp(spin, "1") == 0);
  const char* text = std::getenv(actor_cpu_variable);
  if (text == nullptr)
    return;
  char* end = nullptr;
  errno = 0;
  const long cpu = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || cpu < 0 || cpu >= max_cpus)
    throw std::runtime_error(std::string(actor_cpu_variable) + "='" + text +
                             "' is not a CPU number");
  if (!set_cpus(0, {static_cast<int>(cpu)}))
    throw std::runtime_error("cannot bind to CPU " + std::to_string(cpu) + ": " +
                             std::strerror(errno));
}

std::vector<int> plan_cpu_binding(std::size_t participants, const std::vector<int>& cpus) {
  if (participants == 0 || participants > cpus.size())
    return {};
  return {cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(participants)};
}

} // namespace detail
} // namespace cg
