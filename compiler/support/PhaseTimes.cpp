//===- PhaseTimes.cpp - Wall time per compiler phase, for --time-phases ---===//
#include "support/PhaseTimes.h"

#include <mutex>

namespace cg::support {
namespace {

std::mutex tableMutex;
std::vector<std::pair<std::string, double>> table;

} // namespace

void addPhaseTime(const std::string& phase, double seconds) {
  std::lock_guard<std::mutex> lock(tableMutex);
  for (auto& [name, total] : table)
    if (name == phase) {
      total += seconds;
      return;
    }
  table.emplace_back(phase, seconds);
}

std::vector<std::pair<std::string, double>> phaseTimes() {
  std::lock_guard<std::mutex> lock(tableMutex);
  return table;
}

} // namespace cg::support
