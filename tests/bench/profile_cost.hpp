// profile_cost.hpp - what watching a graph costs: the pipelined chain of
// bench.cg.cpp (driver -> a -> b -> driver, 8 executions in flight) with and
// without a profile recorded (cg/detail/profile.hpp), and with one of a
// sample of the executions if asked (LaunchOptions::profile_every), in
// alternating rounds so that a change in the machine's load weighs on all alike.
//
// cg_bench shows it among its rows; profile_cost_bench shows it alone, and
// the GPU bundle runs that on its machine, where the driver and each actor
// have a core of their own (scripts/gpu-bundle).
#pragma once

#include <cg/driver.hpp> // cg::launch, cg::LaunchOptions

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace cg_bench {

struct ProfileCost {
  double plain = 0;    // executions a second: the median of the rounds
  double profiled = 0; // the same, with a profile recorded
  double sampled = 0;  // the same, recording one execution in `every`; 0: not run
};

/// Executions a second of `Graph` (a std::uint64_t in, one out) with 8 in
/// flight: `total` of them, each get() followed by the next execute().
template <auto Graph> double pipelined_rate(const cg::LaunchOptions& options, int total) {
  auto graph = cg::launch<Graph>(options);
  constexpr int in_flight = 8;
  const std::uint64_t word = 42;
  using Clock = std::chrono::steady_clock;
  std::vector<decltype(graph.execute(word))> refs;
  const auto start = Clock::now();
  int submitted = 0;
  for (; submitted < in_flight; ++submitted)
    refs.push_back(graph.execute(word));
  for (int done = 0; done < total; ++done) {
    refs[done % in_flight].get();
    if (submitted < total + in_flight)
      refs[done % in_flight] = graph.execute(word), ++submitted;
  }
  for (int i = 0; i < in_flight; ++i)
    refs[(total + i) % in_flight].get();
  return total / std::chrono::duration<double>(Clock::now() - start).count();
}

/// `rounds` rounds of `total` executions, each without a profile, then with
/// one, then (`every` > 1) with one of every `every`-th execution.
template <auto Graph>
ProfileCost profile_cost(const cg::LaunchOptions& options, int rounds, int total,
                         std::uint32_t every = 1) {
  cg::LaunchOptions profiled = options;
  profiled.record_profile = true;
  cg::LaunchOptions sampled = profiled;
  sampled.profile_every = every;
  std::vector<double> plain_rounds, profiled_rounds, sampled_rounds;
  for (int round = 0; round < rounds; ++round) {
    plain_rounds.push_back(pipelined_rate<Graph>(options, total));
    profiled_rounds.push_back(pipelined_rate<Graph>(profiled, total));
    if (every > 1)
      sampled_rounds.push_back(pipelined_rate<Graph>(sampled, total));
  }
  auto median = [](std::vector<double> samples) {
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    return samples[samples.size() / 2];
  };
  return {median(plain_rounds), median(profiled_rounds),
          sampled_rounds.empty() ? 0.0 : median(sampled_rounds)};
}

} // namespace cg_bench
