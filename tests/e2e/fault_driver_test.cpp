// fault_driver_test.cpp - a driver process that dies takes its graph with it.
//
// A child of the test plays the driver: it launches graphs, has large values
// in flight (so overflow buffers exist), reports its actors' pids and is then
// SIGKILLed, so none of its own clean-up runs. Its actors must go within a
// second (PR_SET_PDEATHSIG), and with them every mapping and descriptor of the
// driver's shared memory: the memfds are then freed by the kernel.
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Faults = cg_test::NoLeftovers;

/// True once `pid` has exited: gone, or a zombie nobody reaped yet.
bool exited(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return true;
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  char state = 0;
  rest >> state;
  return state == 'Z' || state == 'X';
}

/// The driver child: launches two graphs, leaves a large result in a channel
/// and a large input unread, writes its actors' pids to `out` and waits to
/// be killed. Exit codes (10+) say what failed; no gtest in here.
[[noreturn]] void run_driver(int out) {
  try {
    cg::LaunchOptions options;
    options.slot_bytes = 1024;
    auto repeater_graph = cg::launch<&repeater>(options);
    auto adder_graph = cg::launch<&adder>();
    if (repeater_graph.execute(4 << 20).get().size() != (4u << 20))
      _exit(10);
    auto pending = repeater_graph.execute(8 << 20); // left in its channel, uncollected
    if (adder_graph.execute(1).get() != 3)
      _exit(11);
    std::string pids;
    for (int pid : cg_test::child_pids())
      pids += std::to_string(pid) + " ";
    pids += "\n";
    if (::write(out, pids.data(), pids.size()) != static_cast<ssize_t>(pids.size()))
      _exit(12);
    for (;;)
      ::pause();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver child: %s\n", e.what());
    _exit(13);
  }
}

TEST_F(Faults, ActorsOfAKilledDriverExitWithinASecondAndNoProcessHoldsItsSharedMemory) {
  CG_SKIP_IN_THREADS_MODE();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t driver = ::fork();
  ASSERT_GE(driver, 0);
  if (driver == 0) {
    ::close(fds[0]);
    run_driver(fds[1]);
  }
  ::close(fds[1]);

  // The driver's report: its actors, once its graphs run.
  std::string report;
  pollfd p{fds[0], POLLIN, 0};
  char buffer[256];
  while (report.find('\n') == std::string::npos && ::poll(&p, 1, 30'000) == 1) {
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0)
      break;
    report.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  std::vector<int> actors;
  std::istringstream pids(report);
  for (int pid; pids >> pid;)
    actors.push_back(pid);
  // The graphs' segments and the overflow buffers of both sides, as the
  // driver maps them (the actors map the same memfds).
  const std::set<ino_t> shared_memory = cg_test::memfd_inodes(driver);
  EXPECT_GE(shared_memory.size(), 3u) << "two segments and a large value's overflow buffer";

  ::kill(driver, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(driver, &status, 0), driver);
  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(WIFSIGNALED(status))
      << "the driver child failed first: exit code " << WEXITSTATUS(status);
  ASSERT_EQ(actors.size(), 3u) << "repeater has one actor, adder two: '" << report << "'";

  for (int actor : actors) {
    while (!exited(actor) && std::chrono::steady_clock::now() - killed_at < 5s)
      std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(exited(actor)) << "actor " << actor << " outlived its driver";
  }
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, 1s)
      << "actors must exit within a second of their driver";
  EXPECT_EQ(cg_test::holders_of(shared_memory), std::vector<std::string>{})
      << "the killed driver's shared memory is still mapped or open";
}

} // namespace
