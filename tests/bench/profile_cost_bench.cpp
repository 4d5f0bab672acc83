// profile_cost_bench.cpp - what recording a profile costs, alone.
//
//   build/tests/bench/profile_cost_bench [--rounds N] [--executions N] [--profile-every N]
//                                        [--long-executions N]
//
// The pipelined chain (profile_cost.hpp) without a profile, with a profile of
// every execution and with one of one execution in N (LaunchOptions::
// profile_every; default 8), in processes mode and in threads mode, each party
// bound to a core of its own where there are enough (cg::CpuBinding::cores),
// each ratio beside its target (targets.def: profile_full, profile_one_in_8).
// Recording is at most one clock read and a few stores per operation, ten
// operations an execution of the chain (a READ whose message was waiting
// reads no clock), so the figure depends on what a clock read costs here and
// on whether the driver and the actors share cores: both are printed above
// the rows. Then the same chain with each actor busy for 25 microseconds
// (bench.cg.cpp's long_chain: an execution of 50), with and without a profile
// of every execution (profile_long): what a graph that does real work pays.
// Defaults: 7 rounds of 200,000 executions each way, and of 20,000 of the long
// chain. cg_bench shows the first rows among its own; the GPU bundle runs this
// program, whose machine has a core for every party.
#include "count_arguments.hpp"
#include "profile_cost.hpp"
#include "profile_cost_graphs.cg.hpp"
#include "targets.hpp"

#include <cg/detail/launch_geometry.hpp> // kMostProfileEvery
#include <cg/detail/profile.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

// Nanoseconds one profile_clock() read takes, back to back.
double clock_read_ns() {
  constexpr int reads = 10'000'000;
  volatile std::int64_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reads; ++i)
    sink = cg::detail::profile_clock();
  (void)sink;
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         reads;
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 7, executions = 200'000, every = 8, long_executions = 20'000;
  if (!cg_bench::count_arguments(argc, argv,
                                 {{"--rounds", &rounds},
                                  {"--executions", &executions},
                                  {"--profile-every", &every},
                                  {"--long-executions", &long_executions}}) ||
      every < 2 || every > static_cast<int>(cg::detail::kMostProfileEvery)) {
    std::fprintf(stderr, "usage: profile_cost_bench [--rounds N] [--executions N] "
                         "[--profile-every N] [--long-executions N] (N >= 1; profile-every 2 "
                         "to 1000000)\n");
    return 2;
  }
  std::printf("cores: %u (the driver and actors a and b each get one of their own from 3 up)\n",
              std::thread::hardware_concurrency());
  std::printf("a clock read (cg::detail::profile_clock) takes %.1f ns\n", clock_read_ns());
  std::printf("%d rounds of %d executions each way, 8 in flight\n", rounds, executions);

  cg::LaunchOptions bound;
  bound.cpu_binding = cg::CpuBinding::cores;
  cg::LaunchOptions threads = bound;
  threads.mode = cg::Mode::threads;
  const cg_bench::Target& full = cg_bench::target("profile_full");
  const cg_bench::Target& one_in_8 = cg_bench::target("profile_one_in_8");
  const cg_bench::Target& long_target = cg_bench::target("profile_long");
  for (const cg::LaunchOptions* options : {&bound, &threads}) {
    const cg_bench::ProfileCost cost = cg_bench::profile_cost<&chain>(
        *options, rounds, executions, static_cast<std::uint32_t>(every));
    const char* mode = options == &bound ? "processes" : "threads";
    std::printf("pipelined chain, %-9s %10.0f exec/s, profiled %10.0f exec/s: %.2fx "
                "(target %s: %s)\n",
                mode, cost.plain, cost.profiled, cost.profiled / cost.plain,
                cg_bench::describe(full).c_str(),
                cg_bench::word(cg_bench::judge(full, cost.profiled, cost.plain)));
    // The target is of one in 8: another sample is shown without one.
    const std::string verdict =
        every == 8 ? "target " + cg_bench::describe(one_in_8) + ": " +
                         cg_bench::word(cg_bench::judge(one_in_8, cost.sampled, cost.plain))
                   : std::string("no target for 1 in ") + std::to_string(every);
    std::printf("pipelined chain, %-9s %10.0f exec/s, 1 in %-3d %10.0f exec/s: %.2fx (%s)\n", mode,
                cost.plain, every, cost.sampled, cost.sampled / cost.plain, verdict.c_str());
  }
  std::printf("%d rounds of %d executions of the chain of 50 us each way, 8 in flight\n", rounds,
              long_executions);
  for (const cg::LaunchOptions* options : {&bound, &threads}) {
    const cg_bench::ProfileCost cost =
        cg_bench::profile_cost<&long_chain>(*options, rounds, long_executions);
    std::printf("chain of 50 us, %-9s %10.0f exec/s, profiled %10.0f exec/s: %.2fx "
                "(target %s: %s)\n",
                options == &bound ? "processes" : "threads", cost.plain, cost.profiled,
                cost.profiled / cost.plain, cg_bench::describe(long_target).c_str(),
                cg_bench::word(cg_bench::judge(long_target, cost.profiled, cost.plain)));
  }
  return 0;
}
