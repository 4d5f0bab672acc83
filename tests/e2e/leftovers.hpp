// leftovers.hpp - what a launched graph could leave behind: child processes,
// and the runtime's shared memory (memfds named "cg.*", still mapped or open in
// this process: in threads mode the actors' memory is this process's too).
// Every end-to-end test checks all of it is gone once its graphs are.
// Also what differs between the two runs of the suite (CG_MODE=processes and
// CG_MODE=threads, see tests/CMakeLists.txt): how many actor processes a
// graph starts, and which tests are about processes only.
#pragma once

#include "../support/runtime_memfds.hpp"
#include <cg/driver.hpp>

#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cg_test {

/// Pids of this process's children that are alive or zombies.
inline std::vector<int> child_pids() {
  std::vector<int> pids;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    int pid = std::atoi(entry->d_name);
    if (pid <= 0)
      continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
      continue;
    // Fields after the parenthesised command: state ppid ...
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid())
      pids.push_back(pid);
  }
  closedir(proc);
  return pids;
}

/// True when this run of the suite launches actors as threads (CG_MODE).
inline bool threads_mode() { return cg::launch_mode({}) == cg::Mode::threads; }

/// The child processes a graph of `actors` actors starts in this run's mode.
inline std::size_t actor_processes(std::size_t actors) { return threads_mode() ? 0 : actors; }

/// Skips a test about actor processes (killing one, its executable) in the
/// threads-mode run of the suite, saying so.
#define CG_SKIP_IN_THREADS_MODE()                                                                  \
  do {                                                                                             \
    if (cg_test::threads_mode())                                                                   \
      GTEST_SKIP() << "threads mode: this test is about actor processes (run with CG_MODE "        \
                      "unset for it)";                                                             \
  } while (false)

/// The actor an actor process runs: its command line is <exe> <graph> <actor> <segment>.
inline std::string actor_of(int pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  for (std::string arg; std::getline(file, arg, '\0');)
    args.push_back(arg);
  return args.size() > 2 ? args[2] : "";
}

/// Fails the test if a graph left a process, or a mapping or descriptor of
/// the runtime's shared memory, behind.
class NoLeftovers : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_EQ(child_pids(), std::vector<int>{}) << "actor processes outlived their graph";
    EXPECT_EQ(memfd_mappings(), std::vector<std::string>{})
        << "the runtime's shared memory is still mapped after teardown";
    EXPECT_EQ(memfd_descriptors(), std::vector<std::string>{})
        << "a descriptor of the runtime's shared memory is still open after teardown";
  }
};

} // namespace cg_test
