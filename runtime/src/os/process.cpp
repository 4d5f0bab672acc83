// process.cpp - spawning, watching and reaping actor child processes.
//
// fork() in a multi-threaded program leaves the child with a single thread and
// whatever locks the other threads held, so everything the child needs (argv,
// envp, the parent's pid) is prepared before fork and the child itself only
// makes async-signal-safe calls until execve. Exec failures travel back over a
// close-on-exec pipe: EOF means exec succeeded, four bytes are the errno.
#include "os/process.hpp"
#include "support/deadline.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace cg {
namespace {

std::string_view env_name(std::string_view entry) noexcept {
  return entry.substr(0, entry.find('='));
}

// The parent's environment with `overrides` added or replacing same-named entries.
std::vector<std::string> merged_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view name = env_name(*e);
    const bool overridden = std::any_of(overrides.begin(), overrides.end(),
                                        [&](const std::string& o) { return env_name(o) == name; });
    if (!overridden)
      out.emplace_back(*e);
  }
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    // The last of several entries for one name wins, as with repeated setenv().
    const std::string_view name = env_name(overrides[i]);
    const bool later =
        std::any_of(overrides.begin() + static_cast<std::ptrdiff_t>(i) + 1, overrides.end(),
                    [&](const std::string& o) { return env_name(o) == name; });
    if (!later)
      out.push_back(overrides[i]);
  }
  return out;
}

std::vector<char*> pointer_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int open_pidfd(pid_t pid) noexcept {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0); // close-on-exec by default
  return fd < 0 ? -1 : static_cast<int>(fd);
#else
  (void)pid;
  return -1;
#endif
}

// Runs in the forked child: async-signal-safe calls only, never returns.
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, pid_t parent,
                             int error_fd, const int* inherit, std::size_t inherit_count,
                             const int (&standard)[3]) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) {
    _exit(127); // the parent is already gone (we were re-parented): die with it
  }
  for (int target = 0; target < 3; ++target) {
    if (standard[target] >= 0 && ::dup2(standard[target], target) < 0) {
      const int error = errno;
      ssize_t ignored = ::write(error_fd, &error, sizeof error);
      (void)ignored;
      _exit(127);
    }
  }
  for (std::size_t i = 0; i < inherit_count; ++i) {
    if (::fcntl(inherit[i], F_SETFD, 0) != 0) {
      const int error = errno;
      ssize_t ignored = ::write(error_fd, &error, sizeof error);
      (void)ignored;
      _exit(127);
    }
  }
  // Start clean: a blocked or ignored signal in the driver must not leak into actors.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    sigaction(sig, &dfl, nullptr); // EINVAL for KILL/STOP: fine

  ::execve(path, argv, envp);
  const int error = errno;
  ssize_t ignored = ::write(error_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

} // namespace

ChildProcess ChildProcess::spawn(const std::string& path, const std::vector<std::string>& args,
                                 const std::vector<std::string>& env, const SpawnOptions& options) {
  const std::vector<int>& inherit = options.inherit;
  const std::optional<std::string_view>& standard_input = options.standard_input;
  for (const std::string& entry : env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      throw std::system_error(EINVAL, std::generic_category(),
                              "cg: environment entry '" + entry + "' for '" + path +
                                  "' is not NAME=VALUE");
    }
  }
  std::vector<std::string> argv_strings;
  argv_strings.reserve(args.size() + 1);
  argv_strings.push_back(path);
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = merged_environment(env);
  const std::vector<char*> argv = pointer_array(argv_strings);
  const std::vector<char*> envp = pointer_array(env_strings);

  // The child's standard input, filled before the fork (both ends are ours
  // until then, so the write can neither block on a small text nor SIGPIPE).
  int input_fds[2] = {-1, -1};
  const auto close_input = [&] {
    for (int& fd : input_fds)
      if (fd >= 0)
        ::close(std::exchange(fd, -1));
  };
  if (standard_input) {
    if (standard_input->size() > 4096) {
      throw std::system_error(EINVAL, std::generic_category(),
                              "cg: standard input for '" + path + "' is over 4096 bytes");
    }
    if (::pipe2(input_fds, O_CLOEXEC) != 0 ||
        ::write(input_fds[1], standard_input->data(), standard_input->size()) !=
            static_cast<ssize_t>(standard_input->size())) {
      const int error = errno;
      close_input();
      throw std::system_error(error, std::generic_category(),
                              "cg: cannot fill the standard input of '" + path + "'");
    }
    ::close(std::exchange(input_fds[1], -1));
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int error = errno;
    close_input();
    throw std::system_error(error, std::generic_category(),
                            "cg: pipe2 failed while spawning '" + path + "'");
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    close_input();
    throw std::system_error(error, std::generic_category(),
                            "cg: fork failed while spawning '" + path + "'");
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    const int standard[3] = {input_fds[0], options.standard_output, options.standard_error};
    exec_child(path.c_str(), argv.data(), envp.data(), parent, pipe_fds[1], inherit.data(),
               inherit.size(), standard);
  }

  close_input();
  ::close(pipe_fds[1]);
  int exec_error = 0;
  std::size_t got = 0;
  while (got < sizeof exec_error) {
    const ssize_t n =
        ::read(pipe_fds[0], reinterpret_cast<char*>(&exec_error) + got, sizeof exec_error - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);

  ChildProcess child;
  child.pid_ = pid;
  if (got != 0) {
    // The child reported an exec failure and is exiting: reap it, then report.
    child.wait_for(std::chrono::milliseconds::max());
    throw std::system_error(got == sizeof exec_error ? exec_error : EIO, std::generic_category(),
                            "cg: cannot execute '" + path + "'");
  }
  child.pidfd_ = open_pidfd(pid);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), pidfd_(std::exchange(other.pidfd_, -1)),
      reaped_(std::exchange(other.reaped_, false)),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    destroy();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    reaped_ = std::exchange(other.reaped_, false);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() { destroy(); }

void ChildProcess::destroy() noexcept {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
    if (r == pid_)
      status_ = status;
  }
  if (pidfd_ >= 0)
    ::close(pidfd_);
  pidfd_ = -1;
  pid_ = -1;
}

bool ChildProcess::try_reap() noexcept {
  if (reaped_ || pid_ <= 0)
    return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0)
    return false;
  reaped_ = true; // reaped now, or (ECHILD) by someone else, e.g. SIGCHLD set to SIG_IGN
  if (r == pid_)
    status_ = status;
  return true;
}

bool ChildProcess::running() noexcept { return !try_reap(); }

bool ChildProcess::wait_for(std::chrono::milliseconds timeout) noexcept {
  using detail::Clock; // support/deadline.hpp
  const Clock::time_point deadline =
      timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() -
                                                                       Clock::now())
          ? Clock::time_point::max()
          : Clock::now() + timeout;
  auto backoff = std::chrono::milliseconds(1);
  for (;;) {
    if (try_reap())
      return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline)
      return false;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    if (pidfd_ >= 0) {
      // poll() takes an int of milliseconds: wait in bounded steps.
      pollfd p{pidfd_, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(backoff, left));
      backoff = std::min(backoff * 2, std::chrono::milliseconds(20));
    }
  }
}

void ChildProcess::kill(int signal) noexcept {
  // An unreaped child keeps its pid reserved (as a zombie at worst), so this
  // cannot hit an unrelated process.
  if (pid_ > 0 && !reaped_)
    ::kill(pid_, signal);
}

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* what = ::sigdescr_np(sig); // thread-safe, unlike strsignal()
    std::string out =
        "killed by signal " + std::to_string(sig) + " (" + (what ? what : "unknown signal") + ")";
    if (WCOREDUMP(wait_status))
      out += " (core dumped)";
    return out;
  }
  if (WIFSTOPPED(wait_status))
    return "stopped by signal " + std::to_string(WSTOPSIG(wait_status));
  return "unknown wait status " + std::to_string(wait_status);
}

} // namespace cg
