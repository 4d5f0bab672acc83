// tests/unit/compiler/jobs_test.cpp - cgc's background jobs: each runs once,
// wait() returns after the last, and a failing run rethrows the same error.
//
// cgc renders its artefacts on these while it generates code: a job run
// twice or not at all is a file written wrong or empty, and an error that
// depended on which worker was first would make a failing run report one
// thing one time and another the next.
#include "support/Jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using cg::support::Jobs;

std::vector<std::function<void()>> counting(std::vector<std::atomic<int>>& runs) {
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < runs.size(); ++i)
    jobs.push_back([&runs, i] { ++runs[i]; });
  return jobs;
}

TEST(Jobs, EveryJobRunsExactlyOnceOnThreeThreads) {
  std::vector<std::atomic<int>> runs(200);
  Jobs jobs(counting(runs), 3);
  jobs.wait();
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i].load(), 1) << "job " << i;
}

TEST(Jobs, NoThreadsAskedForStillRunsEveryJob) {
  std::vector<std::atomic<int>> runs(5);
  Jobs jobs(counting(runs), 0);
  jobs.wait();
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i].load(), 1) << "job " << i;
}

TEST(Jobs, WaitReturnsOnlyAfterTheSlowestJobHasFinished) {
  std::atomic<bool> slowDone = false;
  std::vector<std::function<void()>> list{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    slowDone = true;
  }};
  std::vector<std::atomic<int>> runs(20);
  for (auto& job : counting(runs))
    list.push_back(job);
  Jobs jobs(std::move(list), 2);
  jobs.wait();
  EXPECT_TRUE(slowDone.load());
}

TEST(Jobs, WaitRethrowsTheLowestNumberedJobsErrorEvenWhenALaterOneFailsFirst) {
  std::vector<std::function<void()>> list(40, [] {});
  list[7] = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    throw std::runtime_error("job seven");
  };
  list[30] = [] { throw std::runtime_error("job thirty"); };
  Jobs jobs(std::move(list), 2);
  try {
    jobs.wait();
    FAIL() << "wait() returned although two jobs threw";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "job seven");
  }
}

TEST(Jobs, AJobThatThrowsDoesNotStopTheOthers) {
  std::vector<std::atomic<int>> runs(50);
  std::vector<std::function<void()>> list = counting(runs);
  list[0] = [] { throw std::runtime_error("first"); };
  Jobs jobs(std::move(list), 1);
  EXPECT_THROW(jobs.wait(), std::runtime_error);
  for (size_t i = 1; i < runs.size(); ++i)
    EXPECT_EQ(runs[i].load(), 1) << "job " << i;
}

} // namespace
