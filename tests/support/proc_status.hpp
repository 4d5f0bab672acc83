// proc_status.hpp - this process's memory as /proc/self/status counts it, for
// the tests that bound what a large value costs.
#pragma once

#include <fstream>
#include <string>

namespace cg_test {

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 if absent.
inline long status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  return -1;
}

// This process's resident memory now, in KiB.
inline long resident_kib() { return status_kib("VmRSS"); }

} // namespace cg_test
