// process_test.cpp - tests of cg::ChildProcess and describe_exit().
//
// Children are real processes (/bin/sh, /bin/sleep), because the properties that
// matter — exit codes, signals, environment, pidfd readiness, no zombies, death
// with the parent — only exist at the kernel boundary.
#include "os/process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

namespace {

using namespace std::chrono_literals;

int run_shell(const std::string& script, const std::vector<std::string>& env = {}) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sh", {"-c", script}, env);
  EXPECT_TRUE(child.wait_for(10s));
  EXPECT_TRUE(child.exit_status().has_value());
  return child.exit_status().value_or(-1);
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

TEST(ChildProcess, ReportsTheExitCode) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sh", {"-c", "exit 3"}, {});
  EXPECT_GT(child.pid(), 0);
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_FALSE(child.running());
  ASSERT_TRUE(child.exit_status().has_value());
  EXPECT_TRUE(WIFEXITED(*child.exit_status()));
  EXPECT_EQ(WEXITSTATUS(*child.exit_status()), 3);
  EXPECT_EQ(cg::describe_exit(*child.exit_status()), "exited with code 3");
}

TEST(ChildProcess, SpawningAMissingPathThrowsNamingIt) {
  const std::string path = "/nonexistent/cg-no-such-binary";
  try {
    cg::ChildProcess::spawn(path, {}, {});
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT) << "the exec errno must come back from the child";
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ChildProcess, KillDeliversTheSignal) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
  EXPECT_TRUE(child.running());
  EXPECT_FALSE(child.exit_status().has_value());
  child.kill();
  ASSERT_TRUE(child.wait_for(10s));
  ASSERT_TRUE(child.exit_status().has_value());
  EXPECT_TRUE(WIFSIGNALED(*child.exit_status()));
  EXPECT_EQ(WTERMSIG(*child.exit_status()), SIGKILL);
  EXPECT_EQ(cg::describe_exit(*child.exit_status()), "killed by signal 9 (Killed)");
}

TEST(ChildProcess, KillSendsTheRequestedSignal) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
  child.kill(SIGTERM);
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_EQ(WTERMSIG(child.exit_status().value_or(0)), SIGTERM);
}

TEST(ChildProcess, ArgumentsArePassedInOrder) {
  const std::string script =
      R"(test "$0" = zero && test $# -eq 2 && test "$1" = "x y" && test "$2" = z)";
  cg::ChildProcess child =
      cg::ChildProcess::spawn("/bin/sh", {"-c", script, "zero", "x y", "z"}, {});
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_EQ(cg::describe_exit(child.exit_status().value_or(-1)), "exited with code 0");

  cg::ChildProcess swapped =
      cg::ChildProcess::spawn("/bin/sh", {"-c", script, "zero", "z", "x y"}, {});
  ASSERT_TRUE(swapped.wait_for(10s));
  EXPECT_EQ(cg::describe_exit(swapped.exit_status().value_or(-1)), "exited with code 1");
}

TEST(ChildProcess, StandardInputCarriesTheGivenTextAndThenEnds) {
  const std::string script = R"(read -r line && test "$line" = "0123abcd" && ! read -r more)";
  cg::ChildProcess child =
      cg::ChildProcess::spawn("/bin/sh", {"-c", script}, {}, {.standard_input = "0123abcd\n"});
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_EQ(cg::describe_exit(child.exit_status().value_or(-1)), "exited with code 0");
}

TEST(ChildProcess, AChildThatNeverReadsItsStandardInputHarmsNobody) {
  // Written before the fork: no SIGPIPE for us when the child is gone first.
  const std::string input(4000, 'x');
  const std::string too_long(5000, 'x');
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/true", {}, {}, {.standard_input = input});
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_EQ(cg::describe_exit(child.exit_status().value_or(-1)), "exited with code 0");
  EXPECT_THROW(cg::ChildProcess::spawn("/bin/true", {}, {}, {.standard_input = too_long}),
               std::system_error);
}

TEST(ChildProcess, OnlyTheDescriptorsAskedForAreInherited) {
  int kept[2];
  int other[2];
  ASSERT_EQ(pipe2(kept, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(other, O_CLOEXEC), 0);
  const std::string script = "test -e /proc/self/fd/" + std::to_string(kept[1]) +
                             " && ! test -e /proc/self/fd/" + std::to_string(other[1]) +
                             " && echo inherited >&" + std::to_string(kept[1]);
  cg::ChildProcess child =
      cg::ChildProcess::spawn("/bin/sh", {"-c", script}, {}, {.inherit = {kept[1]}});
  ASSERT_TRUE(child.wait_for(10s));
  EXPECT_EQ(WEXITSTATUS(child.exit_status().value_or(-1)), 0);
  close(kept[1]);
  char buffer[32] = {};
  EXPECT_EQ(read(kept[0], buffer, sizeof buffer - 1), 10);
  EXPECT_STREQ(buffer, "inherited\n");
  EXPECT_EQ(fcntl(kept[1], F_GETFD), -1);
  EXPECT_EQ(fcntl(other[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "the parent's flag is untouched";
  EXPECT_EQ(run_shell("test -e /proc/self/fd/" + std::to_string(other[1])), 256)
      << "not asked for: not inherited";
  close(kept[0]);
  close(other[0]);
  close(other[1]);
}

TEST(ChildProcess, EnvironmentEntriesAreAddedAndOverride) {
  EXPECT_EQ(run_shell(R"(test "$CG_X" = 42)", {"CG_X=42"}), 0);
  EXPECT_NE(run_shell(R"(test "$CG_X" = 42)", {"CG_X=41"}), 0);
  EXPECT_NE(run_shell(R"(test "$CG_X" = 42)"), 0);

  ASSERT_EQ(::setenv("CG_X", "7", 1), 0);
  ASSERT_EQ(::setenv("CG_PARENT_ONLY", "inherited", 1), 0);
  EXPECT_EQ(run_shell(R"(test "$CG_X" = 42 && test "$CG_PARENT_ONLY" = inherited)", {"CG_X=42"}),
            0);
  EXPECT_EQ(run_shell(R"(test "$CG_X" = 7)"), 0);
  EXPECT_EQ(run_shell(R"(test "$CG_X" = second)", {"CG_X=first", "CG_X=second"}), 0);
  ::unsetenv("CG_X");
  ::unsetenv("CG_PARENT_ONLY");

  EXPECT_THROW(cg::ChildProcess::spawn("/bin/true", {}, {"NO_EQUALS_SIGN"}), std::system_error);
}

TEST(ChildProcess, PidfdBecomesReadableWhenTheChildExits) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
  if (child.pidfd() < 0)
    GTEST_SKIP() << "pidfd_open is not supported by this kernel";
  pollfd p{child.pidfd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0) << "not readable while the child runs";
  child.kill();
  p.revents = 0;
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  EXPECT_TRUE(child.wait_for(1s));
}

TEST(ChildProcess, WaitForTimesOutWhileTheChildRuns) {
  cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(child.wait_for(50ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  EXPECT_TRUE(child.running());
}

TEST(ChildProcess, DestructorKillsAndReapsARunningChild) {
  pid_t pid = -1;
  const auto start = std::chrono::steady_clock::now();
  {
    cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
    pid = child.pid();
    ASSERT_TRUE(child.running());
    ASSERT_EQ(::kill(pid, 0), 0);
  }
  EXPECT_TRUE(process_gone(pid)) << "a zombie or a live process was left behind";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ChildProcess, MovingTransfersOwnership) {
  cg::ChildProcess a = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
  const pid_t pid = a.pid();
  cg::ChildProcess b = std::move(a);
  EXPECT_EQ(b.pid(), pid);
  EXPECT_EQ(a.pid(), -1); // NOLINT(bugprone-use-after-move): moved-from state is specified
  { cg::ChildProcess discard = std::move(a); } // destroying an empty object touches nothing
  EXPECT_TRUE(b.running());
  cg::ChildProcess c;
  c = std::move(b);
  EXPECT_TRUE(c.running());
  c = cg::ChildProcess{}; // move-assigning over a running child kills and reaps it
  EXPECT_TRUE(process_gone(pid));
}

TEST(ChildProcess, ChildDiesWithTheSpawningParent) {
  // Become a subreaper so the orphaned grandchild is re-parented to us and we
  // can observe how it ended, whatever init does in this environment.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    ::close(fds[0]);
    try {
      cg::ChildProcess child = cg::ChildProcess::spawn("/bin/sleep", {"30"}, {});
      const pid_t grandchild = child.pid();
      if (::write(fds[1], &grandchild, sizeof grandchild) != sizeof grandchild)
        _exit(2);
      _exit(0); // skips ~ChildProcess: the kernel alone must kill the grandchild
    } catch (...) {
      _exit(3);
    }
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  const ssize_t got = ::read(fds[0], &grandchild, sizeof grandchild);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(middle, &status, 0), middle);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof grandchild));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cg::describe_exit(status);

  // The grandchild is now ours to reap; it must already be dying of SIGKILL.
  int grand_status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 1000 && reaped == 0; ++i) {
    reaped = ::waitpid(grandchild, &grand_status, WNOHANG);
    if (reaped == 0)
      std::this_thread::sleep_for(10ms);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (reaped == 0)
    ::kill(grandchild, SIGKILL), ::waitpid(grandchild, &grand_status, 0);
  ASSERT_EQ(reaped, grandchild) << "the grandchild outlived its parent";
  EXPECT_TRUE(WIFSIGNALED(grand_status) && WTERMSIG(grand_status) == SIGKILL)
      << cg::describe_exit(grand_status);
}

TEST(DescribeExit, NamesCodesAndSignals) {
  EXPECT_EQ(cg::describe_exit(0), "exited with code 0");
  EXPECT_EQ(cg::describe_exit(3 << 8), "exited with code 3");
  EXPECT_EQ(cg::describe_exit(SIGKILL), "killed by signal 9 (Killed)");
  EXPECT_EQ(cg::describe_exit(SIGSEGV | 0x80),
            "killed by signal 11 (Segmentation fault) (core dumped)");
}

} // namespace
