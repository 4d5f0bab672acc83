//===- Jobs.h - Independent jobs on a few threads, in the background -*- C++ -*-===//
//
// cgc renders a graph's artefacts (ir.json, schedule.txt, schedule.json,
// dot) while it generates the C++ on its own thread, and writes its files
// on more than one thread: jobs that share nothing but what they only read.
// Each job puts its result where its index says, so what comes out is in the
// jobs' order whichever finishes first; and a job's exception is kept, not
// lost on a worker, and rethrown where the caller waits, the lowest-numbered
// job's first, so that a failing run reports the same error every time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace cg::support {

/// Starts `jobs` on at most `threads` threads (at least one) that take them
/// in index order; wait() joins them.
class Jobs {
public:
  Jobs(std::vector<std::function<void()>> jobs, unsigned threads);
  Jobs(const Jobs&) = delete;
  Jobs& operator=(const Jobs&) = delete;
  /// Waits for any still running (an early return of the caller, an exception).
  ~Jobs();

  /// Waits for every job; then rethrows the exception of the lowest-numbered
  /// job that threw, if one did.
  void wait();

private:
  void work();

  std::vector<std::function<void()>> jobs_;
  std::vector<std::exception_ptr> errors_;
  std::atomic<size_t> next_{0};
  std::vector<std::thread> threads_;
};

/// The threads to give background work: one per core, at least one.
unsigned coresToUse();

} // namespace cg::support
