// targets.hpp - the benchmarks' judge: looks a target of targets.def up by
// name and says whether a measured figure meets it.
//
//   const cg_bench::Target& t = cg_bench::target("round_trip");
//   cg_bench::Verdict v = cg_bench::judge(t, ours_us, openmpi_us);
//   std::printf("%s  %s\n", cg_bench::describe(t).c_str(), cg_bench::word(v));
//
// A row whose baseline was not measured (0) cannot be judged: its verdict is
// `unjudged`, printed as "no baseline", never as met.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cg_bench {

enum class Comparison { at_most_times, at_least_times, at_most, at_least, at_most_plus };

struct Target {
  std::string_view id;
  std::string_view what;
  Comparison comparison;
  double limit;
  std::string_view unit; // of an absolute limit; empty for a ratio
  std::string_view baseline;
  std::string_view judged_by; // empty: no benchmark measures it yet
};

inline constexpr Target targets[] = {
#define CG_TARGET(id, what, comparison, limit, unit, baseline, judged_by)                          \
  {#id, what, Comparison::comparison, limit, unit, baseline, judged_by},
#include "targets.def"
#undef CG_TARGET
};

/// The target named `id`; a benchmark that names one targets.def lacks is
/// wrong, and stops saying so.
inline const Target& target(std::string_view id) {
  for (const Target& t : targets)
    if (t.id == id)
      return t;
  std::fprintf(stderr, "benchmark: no target named '%.*s' in targets.def\n",
               static_cast<int>(id.size()), id.data());
  std::abort();
}

/// The target as a row shows it: "<= 1x OpenMPI ping-pong", "<= 2 s".
inline std::string describe(const Target& t) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%.10g", t.limit);
  const std::string baseline(t.baseline);
  const std::string in_unit = t.unit.empty() ? "" : " " + std::string(t.unit);
  switch (t.comparison) {
  case Comparison::at_most_times:
    return "<= " + std::string(limit) + "x " + baseline;
  case Comparison::at_least_times:
    return ">= " + std::string(limit) + "x " + baseline;
  case Comparison::at_most:
    return "<= " + std::string(limit) + in_unit;
  case Comparison::at_least:
    return ">= " + std::string(limit) + in_unit;
  case Comparison::at_most_plus:
    return "<= " + baseline + " + " + limit + in_unit;
  }
  return "";
}

enum class Verdict { met, missed, unjudged };

/// Whether `ours` meets `t`, against `theirs` where the target has a baseline.
/// A figure of 0 is a measurement that failed: it meets nothing.
inline Verdict judge(const Target& t, double ours, double theirs = 0) {
  const bool relative = t.comparison == Comparison::at_most_times ||
                        t.comparison == Comparison::at_least_times ||
                        t.comparison == Comparison::at_most_plus;
  if (relative && theirs <= 0)
    return Verdict::unjudged;
  if (ours <= 0)
    return Verdict::missed;
  bool met = false;
  switch (t.comparison) {
  case Comparison::at_most_times:
    met = ours <= t.limit * theirs;
    break;
  case Comparison::at_least_times:
    met = ours >= t.limit * theirs;
    break;
  case Comparison::at_most:
    met = ours <= t.limit;
    break;
  case Comparison::at_least:
    met = ours >= t.limit;
    break;
  case Comparison::at_most_plus:
    met = ours <= theirs + t.limit;
    break;
  }
  return met ? Verdict::met : Verdict::missed;
}

inline const char* word(Verdict v) {
  return v == Verdict::met ? "met" : v == Verdict::missed ? "MISSED" : "no baseline";
}

/// Every target, and which benchmark judges it: `cg_bench --targets`.
inline void print_targets() {
  std::printf("%-20s %-66s %-50s %s\n", "target", "what", "limit", "judged by");
  for (const Target& t : targets)
    std::printf("%-20s %-66s %-50s %s\n", std::string(t.id).c_str(), std::string(t.what).c_str(),
                describe(t).c_str(),
                t.judged_by.empty() ? "not measured yet" : std::string(t.judged_by).c_str());
}

} // namespace cg_bench
