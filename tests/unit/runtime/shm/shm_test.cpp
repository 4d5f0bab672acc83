// shm_test.cpp - tests of cg::SharedSegment (named and anonymous) and unique_segment_name().
//
// Segments are the only thing a crashed graph can leak system-wide, so besides
// the basic create/open contract these check error reporting (the name must be
// in the message) and that names never collide across calls or processes.
#include "shm/shm.hpp"

#include "../../../support/memory_cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <system_error>

namespace {

// Unlinks the name even when an assertion fails half-way.
struct NameGuard {
  std::string name;
  ~NameGuard() { shm_unlink(name.c_str()); }
};

TEST(SharedSegment, CreateOpenShareMemoryAndUnlinkRemovesTheName) {
  NameGuard guard{cg::unique_segment_name()};
  cg::SharedSegment created = cg::SharedSegment::create(guard.name, 1000);
  ASSERT_NE(created.data(), nullptr);
  EXPECT_EQ(created.size(), 1000u);
  EXPECT_EQ(created.name(), guard.name);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(created.data()) % 64, 0u);
  EXPECT_EQ(static_cast<unsigned char*>(created.data())[999], 0) << "new segments are zero-filled";

  std::memcpy(created.data(), "shared!", 8);
  {
    cg::SharedSegment opened = cg::SharedSegment::open(guard.name);
    EXPECT_EQ(opened.size(), 1000u);
    EXPECT_NE(opened.data(), created.data()) << "a second, independent mapping";
    EXPECT_STREQ(static_cast<const char*>(opened.data()), "shared!");
    std::memcpy(opened.data(), "back", 5);
  }
  EXPECT_STREQ(static_cast<const char*>(created.data()), "back");

  created.unlink();
  created.unlink(); // idempotent
  EXPECT_THROW(cg::SharedSegment::open(guard.name), std::system_error);
  std::memcpy(created.data(), "still mapped", 13);
  EXPECT_STREQ(static_cast<const char*>(created.data()), "still mapped");
}

TEST(SharedSegment, CreatingAnExistingNameThrows) {
  NameGuard guard{cg::unique_segment_name()};
  cg::SharedSegment first = cg::SharedSegment::create(guard.name, 4096);
  try {
    cg::SharedSegment::create(guard.name, 4096);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EEXIST);
    EXPECT_NE(std::string(e.what()).find(guard.name), std::string::npos) << e.what();
  }
  // The failed create must not have removed or resized the existing segment.
  EXPECT_EQ(cg::SharedSegment::open(guard.name).size(), 4096u);
}

TEST(SharedSegment, OpeningAMissingNameThrowsNamingIt) {
  const std::string name = cg::unique_segment_name();
  try {
    cg::SharedSegment::open(name);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(SharedSegment, MoveTransfersTheMapping) {
  NameGuard guard{cg::unique_segment_name()};
  cg::SharedSegment a = cg::SharedSegment::create(guard.name, 64);
  void* data = a.data();
  cg::SharedSegment b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 64u);
  EXPECT_EQ(a.data(), nullptr); // NOLINT(bugprone-use-after-move): moved-from state is specified
  cg::SharedSegment c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  static_cast<char*>(c.data())[63] = 1; // still mapped
}

// Names in /dev/shm made by this process (tests running beside us may make others).
std::set<std::string> our_dev_shm_names() {
  std::set<std::string> names;
  const std::string prefix = "cg." + std::to_string(getpid()) + ".";
  DIR* dir = opendir("/dev/shm");
  while (dirent* entry = readdir(dir)) {
    if (std::string(entry->d_name).rfind(prefix, 0) == 0)
      names.insert(entry->d_name);
  }
  closedir(dir);
  return names;
}

TEST(SharedSegment, AnonymousSegmentHasNoNameAndIsSharedThroughItsDescriptor) {
  const std::set<std::string> before = our_dev_shm_names();
  cg::SharedSegment created = cg::SharedSegment::create_anonymous("cg.test", 10000);
  EXPECT_EQ(our_dev_shm_names(), before) << "nothing named, so nothing to leak";
  ASSERT_NE(created.data(), nullptr);
  EXPECT_EQ(created.size(), 10000u);
  EXPECT_EQ(created.name(), "memfd:cg.test");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(created.data()) % 64, 0u);
  EXPECT_EQ(static_cast<unsigned char*>(created.data())[9999], 0) << "new segments are zero-filled";
  ASSERT_GE(created.fd(), 0);
  EXPECT_EQ(fcntl(created.fd(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
      << "children inherit it only when asked";

  std::memcpy(created.data(), "shared!", 8);
  const int copy = dup(created.fd());
  ASSERT_GE(copy, 0);
  {
    cg::SharedSegment adopted = cg::SharedSegment::adopt(copy);
    EXPECT_EQ(fcntl(copy, F_GETFD), -1) << "adopt() closes the descriptor once mapped";
    EXPECT_EQ(adopted.size(), 10000u);
    EXPECT_NE(adopted.data(), created.data());
    EXPECT_STREQ(static_cast<const char*>(adopted.data()), "shared!");
    std::memcpy(adopted.data(), "back", 5);
    adopted.unlink(); // no name, no descriptor: nothing to do
  }
  EXPECT_STREQ(static_cast<const char*>(created.data()), "back");

  const int fd = created.fd();
  created.unlink();
  EXPECT_EQ(created.fd(), -1);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "unlink() closes the descriptor";
  std::memcpy(created.data(), "still mapped", 13);
  EXPECT_STREQ(static_cast<const char*>(created.data()), "still mapped");
  EXPECT_EQ(our_dev_shm_names(), before);
}

TEST(SharedSegment, AdoptingABadDescriptorThrowsNamingIt) {
  try {
    cg::SharedSegment::adopt(1000000);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EBADF);
    EXPECT_NE(std::string(e.what()).find("fd 1000000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cg::SharedSegment::create_anonymous("cg.empty", 0), std::system_error);
}

// A memfd's pages are reserved when it is made, and where there is no memory
// for them the kernel's OOM killer wakes instead of an error, and kills
// whichever process it picks. So more than the system can give is
// refused first, with what bounds it.
TEST(SharedSegment, AnAnonymousSegmentLargerThanTheSystemCanGiveIsRefusedBeforeAnyIsReserved) {
  const cg::SharedMemoryRoom room = cg::shared_memory_room();
  ASSERT_LT(room.bytes, std::uint64_t{1} << 50) << "MemAvailable bounds it at least";
  try {
    cg::SharedSegment::create_anonymous("cg.huge", std::size_t{1} << 50);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOMEM);
    EXPECT_TRUE(std::regex_match(
        e.what(), std::regex("cg: cannot reserve 1\\.0 PiB of shared memory for 'memfd:cg\\.huge': "
                             "[0-9.]+ [KMGT]iB is what the memory available \\(MemAvailable in "
                             "/proc/meminfo\\) leaves: .*")))
        << e.what();
  }
}

// For a child: whether shared_memory_room() is from `lowest` to `most` bytes,
// bound by `bound`, and a segment of `bytes` is then refused with ENOMEM. 0
// if so, else `first` (the room), `first` + 1 (made) or `first` + 2 (another
// error).
int room_refuses(std::uint64_t lowest, std::uint64_t most, const char* bound, std::size_t bytes,
                 int first) {
  const cg::SharedMemoryRoom room = cg::shared_memory_room();
  if (room.bytes < lowest || room.bytes > most || std::strcmp(room.bound, bound) != 0)
    return first;
  try {
    cg::SharedSegment::create_anonymous("cg.over", bytes);
    return first + 1;
  } catch (const std::system_error& e) {
    return e.code().value() == ENOMEM ? 0 : first + 2;
  }
}

// Each bound in a child of its own: a file-size limit, then a memory cgroup
// (v1 or v2, where this process may make one: else only the first).
TEST(SharedSegment, TheRoomForSharedMemoryIsTheLeastOfTheFileSizeLimitAndTheMemoryCgroup) {
  auto in_child = [](auto check) {
    const pid_t pid = fork();
    if (pid == 0)
      _exit(check());
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  };
  EXPECT_EQ(in_child([] {
              rlimit limit{4 << 20, 4 << 20};
              if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
                return 10;
              return room_refuses(4u << 20, 4u << 20, "RLIMIT_FSIZE", 5 << 20, 11);
            }),
            0);

  // A memory cgroup of 256 MiB.
  std::string unavailable;
  const std::optional<int> child = cg_test::in_memory_cgroup(
      256 << 20,
      [] {
        return room_refuses(0, 256u << 20, "the limit of the process's memory cgroup", 512 << 20,
                            21);
      },
      unavailable);
  if (!child)
    GTEST_SKIP() << unavailable << " (the file-size bound alone was checked)";
  EXPECT_EQ(*child, 0) << "20+: failed inside the child; 99: could not join the cgroup; 100+: "
                          "killed by a signal";
}

TEST(SharedSegment, UniqueNamesDifferAcrossCallsAndProcesses) {
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i)
    names.insert(cg::unique_segment_name());
  EXPECT_EQ(names.size(), 1000u);
  const std::string prefix = "/cg." + std::to_string(getpid()) + ".";
  EXPECT_EQ(names.begin()->rfind(prefix, 0), 0u) << *names.begin();

  // A forked child continues the same counter: its pid must keep it distinct.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string name = cg::unique_segment_name();
    const ssize_t n = write(fds[1], name.data(), name.size());
    _exit(n == static_cast<ssize_t>(name.size()) ? 0 : 1);
  }
  close(fds[1]);
  char buffer[256] = {};
  ssize_t got = 0;
  for (ssize_t n; (n = read(fds[0], buffer + got, sizeof buffer - 1 - got)) > 0;)
    got += n;
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string child_name(buffer, static_cast<std::size_t>(got));
  EXPECT_FALSE(child_name.empty());
  EXPECT_EQ(names.count(child_name), 0u);
  EXPECT_NE(child_name, cg::unique_segment_name());
}

} // namespace
