// soak_test.cpp - many graphs in one driver under random kills, stops and dropped refs.
//
// Every call must end in a value or a typed error (never a hang, never an
// untyped exception), every value must be the right one, and after each
// graph nothing may be left: processes, shared memory (NoLeftovers), file
// descriptors or threads. Bounded: a fixed seed, 24 graphs, about 10 s.
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Soak = cg_test::NoLeftovers;

// Entries of /proc/self/<dir> (fd, task): open descriptors, threads.
std::size_t entries(const char* dir) {
  std::size_t count = 0;
  DIR* listing = opendir((std::string("/proc/self/") + dir).c_str());
  while (dirent* entry = readdir(listing))
    count += entry->d_name[0] != '.';
  closedir(listing);
  return count;
}

// Waits (up to 5 s) until `now()` is `expected`: threads and descriptors of
// a torn-down graph go a moment after teardown() returns.
template <class F> bool becomes(std::size_t expected, F now) {
  for (auto until = std::chrono::steady_clock::now() + 5s; now() != expected;) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST_F(Soak, RandomKillsStopsAndDroppedRefsEndInValuesOrTypedErrorsAndLeaveNothing) {
  std::thread([] {}).join(); // a sanitizer's own thread, if any, before counting
  const std::size_t fds = entries("fd");
  const std::size_t threads = entries("task");
  std::mt19937 random(20261124);
  int values = 0, errors = 0;
  for (int round = 0; round < 24; ++round) {
    cg::LaunchOptions options;
    options.max_in_flight = 4;
    options.get_timeout = 300ms;
    options.submit_timeout = 300ms;
    std::vector<int> stopped;
    {
      auto graph = cg::launch<&adder>(options);
      std::vector<std::pair<int, cg::Ref<int>>> kept; // input, ref
      // What a get() may end in: the value, or a typed error.
      auto check = [&](int input, cg::Ref<int>& ref) {
        try {
          EXPECT_EQ(ref.get(), input + 2) << "input " << input;
          ++values;
        } catch (const cg::TaskError& e) {
          EXPECT_LT(input, 0) << e.what();
          ++errors;
        } catch (const cg::ActorDiedError&) {
          ++errors;
        } catch (const cg::TimeoutError&) {
          ++errors;
        } catch (const cg::ChannelClosedError&) {
          ++errors;
        }
      };
      for (int step = 0; step < 16; ++step) {
        const int input = static_cast<int>(random() % 12) - 2; // some negative: task errors
        const unsigned action = random() % 10;
        std::vector<int> actors = cg_test::child_pids();
        try {
          if (action < 5) {
            kept.emplace_back(input, graph.execute(input));
          } else if (action < 8) {
            (void)graph.execute(input); // dropped at once
          } else if (action == 8 && !kept.empty()) {
            check(kept.back().first, kept.back().second);
            kept.pop_back();
          } else if (action == 9 && !actors.empty() && random() % 2 == 0) {
            ::kill(actors[random() % actors.size()], SIGKILL);
          } else if (action == 9 && !actors.empty()) {
            stopped.push_back(actors[random() % actors.size()]);
            ::kill(stopped.back(), SIGSTOP);
          }
        } catch (const cg::CapacityExceeded&) {
          ++errors;
        } catch (const cg::ActorDiedError&) {
          ++errors;
        } catch (const cg::TimeoutError&) {
          ++errors;
        }
      }
      for (int pid : stopped)
        ::kill(pid, SIGCONT);
      for (auto& [input, ref] : kept)
        check(input, ref);
    } // teardown
    EXPECT_TRUE(becomes(fds, [] { return entries("fd"); })) << "round " << round;
    EXPECT_TRUE(becomes(threads, [] { return entries("task"); })) << "round " << round;
    EXPECT_EQ(cg_test::child_pids(), std::vector<int>{}) << "round " << round;
  }
  EXPECT_GT(values, 0);
  EXPECT_GT(errors, 0);
}

} // namespace
