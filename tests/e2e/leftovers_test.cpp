// leftovers_test.cpp - the leftover checks every end-to-end test ends with
// (leftovers.hpp, tests/support/runtime_memfds.hpp) find what they look for.
//
// A leak is staged here by hand, each kind on its own, as a broken runtime
// would leave it: a mapping of a memfd named as the runtime names its memory,
// a descriptor of one, a child process, a memfd another process still holds.
// Each check must report exactly that, and pass once it is released.
#include "leftovers.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBytes = 4096;

// NoLeftovers' check, run outside a test's own teardown.
class Checker : public cg_test::NoLeftovers {
public:
  void TestBody() override {}
  void check() { TearDown(); }
};

void check_for_leftovers() { Checker().check(); }

// A memfd named as the runtime names a graph's segment ("cg.<graph>").
int runtime_like_memfd() {
  const int fd = ::memfd_create("cg.leftovers-check", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, kBytes), 0);
  return fd;
}

// A mapping as /proc/self/maps lists it.
std::string mapping_of(const void* data) {
  char range[64];
  const auto start = reinterpret_cast<unsigned long>(data);
  std::snprintf(range, sizeof range, "%08lx-%08lx", start, start + kBytes);
  return std::string(range) + " /memfd:cg.leftovers-check (deleted)";
}

TEST(LeftoverCheck, ReportsAMappingOfTheRuntimesMemoryLeftAfterItsDescriptorWasClosed) {
  const int fd = runtime_like_memfd();
  void* data = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(data, MAP_FAILED);
  ::close(fd);
  const std::string mapping = mapping_of(data);
  EXPECT_EQ(cg_test::memfd_mappings(), std::vector<std::string>{mapping});
  EXPECT_EQ(cg_test::memfd_descriptors(), std::vector<std::string>{});
  EXPECT_NONFATAL_FAILURE(check_for_leftovers(),
                          "the runtime's shared memory is still mapped after teardown");
  EXPECT_NONFATAL_FAILURE(check_for_leftovers(), mapping);
  ::munmap(data, kBytes);
  EXPECT_EQ(cg_test::memfd_mappings(), std::vector<std::string>{});
  check_for_leftovers();
}

TEST(LeftoverCheck, ReportsADescriptorOfTheRuntimesMemoryLeftOpen) {
  const int fd = runtime_like_memfd();
  const std::string descriptor =
      "fd " + std::to_string(fd) + " -> /memfd:cg.leftovers-check (deleted)";
  EXPECT_EQ(cg_test::memfd_descriptors(), std::vector<std::string>{descriptor});
  EXPECT_EQ(cg_test::memfd_mappings(), std::vector<std::string>{});
  EXPECT_NONFATAL_FAILURE(
      check_for_leftovers(),
      "a descriptor of the runtime's shared memory is still open after teardown");
  EXPECT_NONFATAL_FAILURE(check_for_leftovers(), descriptor);
  ::close(fd);
  check_for_leftovers();
}

TEST(LeftoverCheck, IgnoresMemfdsTheRuntimeDoesNotName) {
  const int fd = ::memfd_create("cgroup-like", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(cg_test::memfd_descriptors(), std::vector<std::string>{});
  check_for_leftovers();
  ::close(fd);
}

TEST(LeftoverCheck, ReportsAChildProcessLeftRunning) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_EQ(cg_test::child_pids(), std::vector<int>{child});
  EXPECT_NONFATAL_FAILURE(check_for_leftovers(), "actor processes outlived their graph");
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  check_for_leftovers();
}

// What the killed-driver test relies on: a memfd is found by its inode in
// every process that still maps or holds it, and in none once all let go.
TEST(LeftoverCheck, FindsEveryProcessThatStillMapsOrHoldsAMemfdByItsInode) {
  const int fd = runtime_like_memfd();
  void* data = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(data, MAP_FAILED);
  const std::set<ino_t> inodes = cg_test::memfd_inodes(::getpid());
  ASSERT_EQ(inodes.size(), 1u) << "one memfd, mapped and open";
  const pid_t child = ::fork(); // inherits both the mapping and the descriptor
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string name = "/memfd:cg.leftovers-check (deleted)";
  const std::string ours = "pid " + std::to_string(::getpid());
  const std::string its = "pid " + std::to_string(child);
  const std::string holding = " holds fd " + std::to_string(fd) + " -> " + name;
  std::vector<std::string> expected{ours + " maps " + name, ours + holding, its + " maps " + name,
                                    its + holding};
  std::vector<std::string> holders = cg_test::holders_of(inodes);
  std::sort(expected.begin(), expected.end());
  std::sort(holders.begin(), holders.end());
  EXPECT_EQ(holders, expected);

  ::munmap(data, kBytes);
  ::close(fd);
  EXPECT_EQ(cg_test::holders_of(inodes),
            (std::vector<std::string>{its + " maps " + name, its + holding}));
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_EQ(cg_test::holders_of(inodes), std::vector<std::string>{});
}

} // namespace
