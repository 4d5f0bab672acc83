// restart_leak_test.cpp - restarting one actor a hundred times leaves the driver as it was after
// the first restart.
//
// Each restart starts a process, relays its output through new pipes
// (os/tagged_output.hpp), records the restart and waits for the new
// process to take over its channels. Whatever of that the driver keeps for a
// dead process would grow with every restart: a descriptor, a thread, a
// mapping of the graph's memory or the memory behind it. Counted after the
// first restart (which makes what every later one reuses) and after the
// last, each must be the same: the driver's descriptors (/proc/self/fd), its
// threads (/proc/self/task), the runtime's memfds it maps or holds (the
// graph's shared memory: the runtime's segments are memfds, so /dev/shm,
// checked too, must hold nothing new of the graph either), and its resident memory within
// 2 MiB (the heap it has in use, where a sanitizer keeps memory of its own). The slack is for what
// the allocator keeps of the short-lived strings and buffers of a restart (its messages, a spawn's
// argument vector) and for the record of each restart the trace keeps (a few dozen bytes each); a
// leak of a process's pipes, stack or channel ends is larger. Processes mode only: threads mode has
// no restarts.
#include "../support/runtime_memfds.hpp"
#include "e2e_restart_graphs.cg.hpp"
#include "leftovers.hpp"
#include "restart_stream.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace cg_test::restarts;
using RestartLeaks = cg_test::NoLeftovers;

constexpr std::uint32_t kRestarts = 100;
constexpr long kSlackBytes = 2L << 20;

// Entries of folder `path`, by name.
std::set<std::string> entries(const std::string& path) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path))
    names.insert(entry.path().filename().string());
  return names;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Instrumented, resident memory grows with what the sanitizer keeps (ASan's
// quarantine of freed memory, TSan's shadow and history), so the heap the
// program has in use is weighed instead, as the sanitizer's allocator counts it.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
constexpr const char* kWeighed = "heap bytes in use";
long memory_bytes() { return static_cast<long>(__sanitizer_get_current_allocated_bytes()); }
#else
constexpr const char* kWeighed = "resident bytes";
long memory_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}
#endif

// What the driver holds that a restart could leave behind.
struct Held {
  std::size_t descriptors = 0, threads = 0;
  std::vector<std::string> memfd_mappings, memfd_descriptors;
  std::set<std::string> dev_shm;
  long memory = 0; // resident bytes, or the heap in use where instrumented
};

Held held() {
  Held h;
  h.descriptors = entries("/proc/self/fd").size();
  h.threads = entries("/proc/self/task").size();
  h.memfd_mappings = cg_test::memfd_mappings();
  h.memfd_descriptors = cg_test::memfd_descriptors();
  for (const std::string& name : entries("/dev/shm"))
    if (name.find("counted_pair") != std::string::npos) // others' tests may run meanwhile
      h.dev_shm.insert(name);
  h.memory = memory_bytes();
  return h;
}

TEST_F(RestartLeaks, AHundredRestartsOfOneActorLeaveTheDriversDescriptorsThreadsMemoryAsTheFirst) {
  cg::LaunchOptions options = restart_options();
  options.actor_max_restarts = {{"b", kRestarts}};
  if (cg_test::threads_mode())
    return expect_refused_in_threads<&counted_pair>(options);
  auto graph = cg::launch<&counted_pair>(options);
  std::int64_t x = 0;
  constexpr int kBetween = 20;
  auto executions_between_kills = [&] {
    for (int n = 0; n < kBetween; ++n, ++x)
      ASSERT_EQ(graph.execute(Values{x}).get().front(), x);
  };
  executions_between_kills();
  ASSERT_TRUE(kill_until_value(graph, "counted_pair", "b", x));
  executions_between_kills();
  const Held first = held();
  for (std::uint32_t r = 2; r <= kRestarts; ++r) {
    ASSERT_TRUE(kill_until_value(graph, "counted_pair", "b", x)) << "restart " << r;
    executions_between_kills();
  }
  const Held last = held();
  EXPECT_EQ(graph.restarts(), (std::map<std::string, std::uint32_t>{{"b", kRestarts}}));
  EXPECT_EQ(last.descriptors, first.descriptors) << "descriptors of the driver";
  EXPECT_EQ(last.threads, first.threads) << "threads of the driver";
  EXPECT_EQ(last.memfd_mappings, first.memfd_mappings);
  EXPECT_EQ(last.memfd_descriptors, first.memfd_descriptors);
  EXPECT_EQ(last.dev_shm, first.dev_shm);
  std::printf("%s after the first restart: %ld, after the last: %ld\n", kWeighed, first.memory,
              last.memory);
  EXPECT_LE(last.memory, first.memory + kSlackBytes)
      << kWeighed << " after the first restart: " << first.memory
      << ", after the last: " << last.memory;
  // The graph runs on: a kept counting through every restart of b, and b
  // counts from the first value after its last one.
  EXPECT_EQ(graph.execute(Values{x}).get(), (Values{x, x + 1, kBetween + 2}));
}

} // namespace
