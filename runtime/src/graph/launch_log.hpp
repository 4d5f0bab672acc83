// graph/launch_log.hpp - What launch() and teardown do, told on stderr when
// CG_LOG asks: silent by default.
//
// "Why does launch take 2 s?" and "which CPU did actor b get?" are answered
// by CG_LOG=info (each step of launch with its time since launch began: the
// segment made, the actors started, the remote ones connected, every actor
// ready and its communicators warmed; teardown's length) and CG_LOG=debug
// (also each actor's process and CPU and each channel's transport).
#pragma once

#include "support/deadline.hpp"

#include <string>

namespace cg::detail {

inline constexpr const char* log_variable = "CG_LOG";

enum class LogLevel { off, info, debug };

/// CG_LOG's level: unset or empty is off; "info", "debug"; anything else
/// is a LaunchError naming the variable and what it accepts.
LogLevel log_level_from_environment();

class LaunchLog {
public:
  LaunchLog() = default;
  LaunchLog(std::string graph, LogLevel level)
      : graph_(std::move(graph)), level_(level), start_(Clock::now()) {}

  bool info() const noexcept { return level_ >= LogLevel::info; }
  bool debug() const noexcept { return level_ >= LogLevel::debug; }

  /// One line on stderr, "cg: graph 'g' +12.3 ms: <what>", if `level` is on.
  void say(LogLevel level, const std::string& what) const noexcept;

  /// Milliseconds since launch began, as say() prints them.
  double elapsed_ms() const noexcept;

private:
  std::string graph_;
  LogLevel level_ = LogLevel::off;
  Clock::time_point start_{};
};

} // namespace cg::detail
