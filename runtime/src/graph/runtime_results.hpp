// graph/runtime_results.hpp - A launched graph's executions and their results: RuntimeResults.
//
// A part of GraphRuntime::Impl (graph/runtime_state.hpp), apart so that
// driver.cpp, which submits executions and collects their results, finds
// what it counts and keeps in one place, with only the channels' readers
// (cg/detail/channel.hpp) behind it.
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/driver.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {

struct RuntimeResults {
  // Set by launch(); after it used by whoever collects (see `partial`),
  // until teardown releases the readers.
  std::vector<std::uint32_t> result_channels; // distinct output channels
  std::vector<ChannelReader> result_readers;  // parallel to result_channels
  // Parallel to result_channels: where a result from another host comes
  // from, for an error about bytes that do not decode; empty for shared memory.
  std::vector<std::string> result_origins;
  std::vector<std::size_t> output_source; // output position -> result index

  // result_origins[i] as ResultView::origin.
  const char* origin_of(std::size_t i) const noexcept {
    return result_origins[i].empty() ? nullptr : result_origins[i].c_str();
  }

  // Results of execution `collected` gathered so far. Touched by whoever
  // collects, without the mutex: the caller of get() before async
  // collection starts, the collector thread only after.
  std::vector<Collected> partial;
  // The result reader that answered something other than ok last.
  std::size_t failed_reader = 0;
  // Where collect_in_place() keeps its views (sized once, then reused).
  std::vector<ResultView> message_views;
  std::vector<ResultView> output_views;

  // Guarded by GraphRuntime::Impl::mutex; its `changed` says when
  // collected, submitted or stop_collector changed.
  std::uint64_t submitted = 0;
  std::uint64_t collected = 0;
  std::map<std::uint64_t, std::vector<Collected>> untaken; // collected, not yet taken
  std::map<std::uint64_t, ResultsCallback> callbacks;      // futures waiting
  std::set<std::uint64_t> abandoned; // not yet collected, no ref left: discarded when collected
  bool async = false;                // the collector thread owns collection
  bool stop_collector = false;
  std::thread collector;
  int results_fd = -1;
};

} // namespace cg::detail
