// launch_log.cpp - CG_LOG: reading the level, writing a line.
#include "graph/launch_log.hpp"

#include <cg/errors.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cg::detail {

LogLevel log_level_from_environment() {
  const char* value = std::getenv(log_variable);
  const std::string_view level = value == nullptr ? "" : value;
  if (level.empty())
    return LogLevel::off;
  if (level == "info")
    return LogLevel::info;
  if (level == "debug")
    return LogLevel::debug;
  throw LaunchError(std::string(log_variable) + "='" + std::string(level) +
                    "' is not a log level: use info or debug (unset: silent)");
}

double LaunchLog::elapsed_ms() const noexcept {
  return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
}

void LaunchLog::say(LogLevel level, const std::string& what) const noexcept {
  if (level_ < level || level == LogLevel::off)
    return;
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, " +%.1f ms: ", elapsed_ms());
  try {
    // One write: lines of actors and of other graphs never cut into it.
    const std::string line = "cg: graph '" + graph_ + "'" + prefix + what + "\n";
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, line.data(), line.size());
  } catch (...) {
  }
}

} // namespace cg::detail
