//===- Jobs.cpp - Independent jobs on a few threads, in the background ----===//
#include "support/Jobs.h"

#include <algorithm>

namespace cg::support {

Jobs::Jobs(std::vector<std::function<void()>> jobs, unsigned threads)
    : jobs_(std::move(jobs)), errors_(jobs_.size()) {
  size_t count = std::min<size_t>(std::max(1u, threads), jobs_.size());
  threads_.reserve(count);
  for (size_t i = 0; i < count; ++i)
    threads_.emplace_back([this] { work(); });
}

Jobs::~Jobs() {
  for (std::thread& thread : threads_)
    if (thread.joinable())
      thread.join();
}

void Jobs::work() {
  for (size_t job = next_++; job < jobs_.size(); job = next_++) {
    try {
      jobs_[job]();
    } catch (...) {
      errors_[job] = std::current_exception();
    }
  }
}

void Jobs::wait() {
  for (std::thread& thread : threads_)
    if (thread.joinable())
      thread.join();
  for (const std::exception_ptr& error : errors_)
    if (error)
      std::rethrow_exception(error);
}

unsigned coresToUse() { return std::max(1u, std::thread::hardware_concurrency()); }

} // namespace cg::support
