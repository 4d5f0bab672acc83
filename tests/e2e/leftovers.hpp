// leftovers.hpp - what a launched graph could leave behind: child processes
// and shared-memory segments. Every end-to-end test checks both are gone.
#pragma once

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

/// Names in /dev/shm of segments made by this process.
inline std::vector<std::string> our_segments() {
  std::vector<std::string> names;
  std::string prefix = "cg." + std::to_string(getpid()) + ".";
  DIR* shm = opendir("/dev/shm");
  while (dirent* entry = readdir(shm))
    if (std::string(entry->d_name).rfind(prefix, 0) == 0)
      names.push_back(entry->d_name);
  closedir(shm);
  return names;
}

/// Fails the test if a graph left a process or a segment behind.
class NoLeftovers : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_EQ(child_pids(), std::vector<int>{}) << "actor processes outlived their graph";
    EXPECT_EQ(our_segments(), std::vector<std::string>{}) << "shared memory left in /dev/shm";
  }
};

} // namespace cg_test
