// tests/bench/count_arguments.hpp - A benchmark's "--name N" options, each a count of at least 1.
//
// The benchmarks that run on the GPU machine (profile_cost_bench,
// ray_microbench) take only counts: rounds, executions, calls. They refuse
// anything else the same way, with their usage line and exit status 2.
#pragma once

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

namespace cg_bench {

/// Sets each option's count from `argv` ("--rounds 3 --calls 200"); false
/// for an unknown option, a missing value, or a value that is not a whole
/// number from 1 to 100,000,000.
inline bool count_arguments(int argc, char** argv,
                            std::initializer_list<std::pair<const char*, int*>> options) {
  for (int i = 1; i < argc; i += 2) {
    int* count = nullptr;
    for (const auto& [name, target] : options) {
      if (std::strcmp(argv[i], name) == 0)
        count = target;
    }
    if (count == nullptr || i + 1 == argc)
      return false;
    const char* text = argv[i + 1];
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > 100'000'000)
      return false;
    *count = static_cast<int>(value);
  }
  return true;
}

} // namespace cg_bench
