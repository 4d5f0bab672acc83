// restart_bench.cpp - how long a CPU actor restarted in place takes to give its first good
// execution after its death, against the restart_cpu target (targets.def).
//
// Kills actor b of the restart tests' counted_pair (two Counters, one host,
// processes mode) N times; after each kill, runs executions one at a time
// until one returns a value (those before it end in ActorDiedError, lost to
// the restart), and prints the time from the SIGKILL to that value: one row
// per restart, then min, median and max, each judged against the target.
// The kill is the death: SIGKILL ends the process at once. What the time
// holds: the driver noticing the death, starting the actor executable and
// constructing the actor, the new process taking over its channels, and an
// execution through both actors. Run by hand:
//   build/tests/bench/restart_bench [--restarts N]   (default 20)
// Exit status 1 when a restart gives no value (the run is not a figure).
#include "../e2e/restart_stream.hpp"
#include "bench_restart_graphs.cg.hpp"
#include "targets.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace cg_test::restarts;

int usage() {
  std::fprintf(stderr, "usage: restart_bench [--restarts N]   (N from 1 to 1000)\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int restarts = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--restarts") == 0 && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 1000)
        return usage();
      restarts = static_cast<int>(n);
    } else {
      return usage();
    }
  }
  if (cg_test::threads_mode()) {
    std::fprintf(stderr, "restart_bench: restarts are of actor processes; unset CG_MODE=threads\n");
    return 2;
  }
  const cg_bench::Target& target = cg_bench::target("restart_cpu");
  cg::LaunchOptions options;
  options.actor_max_restarts = {{"b", static_cast<std::uint32_t>(restarts)}};
  auto graph = cg::launch<&counted_pair>(options);
  std::int64_t x = 0;
  for (; x < 100; ++x) // warm: the actors' first executions are not the restart's
    graph.execute(Values{x}).get();
  std::printf("restart_cpu: %s, %s\n", std::string(target.what).c_str(),
              cg_bench::describe(target).c_str());
  std::printf("%-8s %12s  %s\n", "restart", "ms to value", "verdict");
  std::vector<double> ms;
  for (int r = 1; r <= restarts; ++r) {
    const std::optional<Clock::duration> took = kill_until_value(graph, "counted_pair", "b", x);
    if (!took) {
      std::fprintf(stderr, "restart_bench: restart %d gave no value within 10 s\n", r);
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(*took).count());
    std::printf("%-8d %12.2f  %s\n", r, ms.back(),
                cg_bench::word(cg_bench::judge(target, ms.back() / 1000)));
    for (int n = 0; n < 10; ++n, ++x) // between kills, as a graph in use would
      graph.execute(Values{x}).get();
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 == 1
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  for (const auto& [what, value] : {std::pair<const char*, double>{"min", sorted.front()},
                                    {"median", median},
                                    {"max", sorted.back()}})
    std::printf("%-8s %12.2f  %s  (target %s)\n", what, value,
                cg_bench::word(cg_bench::judge(target, value / 1000)),
                cg_bench::describe(target).c_str());
  return 0;
}
