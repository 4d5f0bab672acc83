//===- PhaseTimes.h - Wall time per compiler phase, for --time-phases -*- C++ -*-===//
//
// `cgc --time-phases` prints how long each phase of a run took (parse,
// evaluate, decode, schedule, codegen, format, write). The phases live in
// different libraries (the formatter is called from inside codegen), so the
// figures are gathered in one process-wide table that any phase adds to;
// adding is cheap and thread-safe, and costs nothing worth measuring when
// nobody prints the table.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace cg::support {

/// Adds `seconds` to `phase` in the process-wide table.
void addPhaseTime(const std::string& phase, double seconds);

/// The table: each phase once, in the order phases were first timed.
std::vector<std::pair<std::string, double>> phaseTimes();

/// Times a scope: adds the wall time from construction to destruction to `phase`.
class PhaseTimer {
public:
  explicit PhaseTimer(std::string phase)
      : phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() {
    addPhaseTime(phase_,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

private:
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace cg::support
