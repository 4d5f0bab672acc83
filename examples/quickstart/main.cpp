// main.cpp - runs the quickstart graphs, measures the chain's latency and
// prints what its profile recorded (cg/stats.hpp).
#include "quickstart.cg.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  {
    cg::LaunchOptions options;
    options.record_profile = true; // for graph.stats() below
    auto graph = cg::launch<&chain>(options);
    std::printf("chain:    %s\n", graph.execute("hello").get().c_str());

    // Median round trip driver -> a -> b -> driver, after a warm-up.
    constexpr int kRuns = 2000;
    std::vector<double> micros;
    for (int i = 0; i < kRuns + 200; ++i) {
      auto start = std::chrono::steady_clock::now();
      graph.execute("hello").get();
      auto end = std::chrono::steady_clock::now();
      if (i >= 200)
        micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    std::nth_element(micros.begin(), micros.begin() + kRuns / 2, micros.end());
    std::printf("chain:    median execute->get latency %.1f us over %d executions\n",
                micros[kRuns / 2], kRuns);
    // The same executions as the actors and the driver recorded them.
    std::fputs(cg::format_stats(graph.stats()).c_str(), stdout);
  }
  {
    auto graph = cg::launch<&fanout>();
    auto [x, y, z] = graph.execute("hello").get();
    std::printf("fanout:   ['%s', '%s', '%s']\n", x.c_str(), y.c_str(), z.c_str());
  }
  {
    auto graph = cg::launch<&pipeline>();
    std::vector<cg::Ref<std::string>> refs;
    for (int i = 0; i < 3; ++i)
      refs.push_back(graph.execute("hello" + std::to_string(i)));
    std::printf("pipeline:");
    for (auto& ref : refs)
      std::printf(" %s", ref.get().c_str());
    std::printf("\n");
  }
}
