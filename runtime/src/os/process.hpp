// os/process.hpp - child processes for actors: spawn, watch, signal, reap.
//
// Actor processes must never outlive the driver and must never linger as
// zombies, whatever path the driver takes out (normal return, exception, crash).
// So a child asks the kernel to SIGKILL it when its parent goes away, the
// ChildProcess destructor kills and reaps a child that is still running, and a
// pidfd lets the driver poll() for child exits alongside its other descriptors.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cg {

// One spawned child. Movable, not copyable; a moved-from object owns nothing.
// Not thread-safe: use one object from one thread at a time.
class ChildProcess {
public:
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept; // kills and reaps the current child first
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // fork + execve(path, [path, args...]) with the parent's environment, where
  // each `env` entry ("NAME=VALUE") is added or overrides the parent's NAME.
  // The child starts with an empty signal mask and default signal dispositions.
  //
  // The child calls prctl(PR_SET_PDEATHSIG, SIGKILL) and then checks getppid()
  // against the parent to close the race with a parent that died before prctl.
  // CAVEAT: Linux delivers the death signal when the *thread* that forked exits,
  // not when the parent process does: spawn from a thread that lives as long as
  // the children should (e.g. the main thread), never from a short-lived worker.
  //
  // Descriptors are close-on-exec as usual, except those in options.inherit:
  // the child gets them under the same numbers (only the child's copy loses
  // its close-on-exec flag, so concurrent spawns elsewhere inherit nothing).
  //
  // With options.standard_input, the child's standard input is a pipe holding
  // that text (at most 4096 bytes, written before the fork, so a child that
  // exits at once never makes the driver write to a closed pipe); without, it
  // is the parent's. This is how a secret reaches a command without its
  // command line or environment showing it (see net/secret.hpp).
  // options.standard_output and standard_error, when not -1, become the
  // child's descriptors 1 and 2 (a pipe the driver reads, a log file).
  //
  // Throws std::system_error naming `path` if fork or exec fails (exec's errno is
  // reported through a close-on-exec pipe, so the code is the real reason, e.g.
  // ENOENT), or naming the entry if an `env` entry has no '='.
  struct SpawnOptions {
    std::vector<int> inherit = {};
    std::optional<std::string_view> standard_input = {};
    int standard_output = -1;
    int standard_error = -1;
  };
  static ChildProcess spawn(const std::string& path, const std::vector<std::string>& args,
                            const std::vector<std::string>& env, const SpawnOptions& options);
  static ChildProcess spawn(const std::string& path, const std::vector<std::string>& args,
                            const std::vector<std::string>& env) {
    return spawn(path, args, env, SpawnOptions{});
  }

  pid_t pid() const noexcept { return pid_; }

  // A pidfd (pidfd_open) that becomes readable (POLLIN) once the child exits;
  // -1 if the kernel does not support it. Owned by this object: do not close.
  int pidfd() const noexcept { return pidfd_; }

  // Non-blocking: false once the child has exited (and then reaps it).
  bool running() noexcept;

  // The raw wait status (decode with WIFEXITED etc. or describe_exit) once the
  // child has been reaped; nullopt before, or if it was reaped by someone else.
  std::optional<int> exit_status() const noexcept { return status_; }

  // Waits up to `timeout` for the child to exit; true once it has been reaped.
  bool wait_for(std::chrono::milliseconds timeout) noexcept;

  // Sends `signal` unless the child has already been reaped (so a recycled pid
  // is never signalled).
  void kill(int signal = SIGKILL) noexcept;

  // If still running: SIGKILL and reap, so no zombie is ever left behind.
  ~ChildProcess();

private:
  bool try_reap() noexcept; // true once reaped
  void destroy() noexcept;

  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
  std::optional<int> status_;
};

// Human-readable wait status: "exited with code 3", "killed by signal 9 (Killed)".
std::string describe_exit(int wait_status);

} // namespace cg
