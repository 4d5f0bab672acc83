// driver.cpp - The driver side of a launched graph, once launched: executions and their results.
//
// graph/launch.cpp builds the GraphRuntime; this file runs it, with
// graph/driver_failures.cpp (how a failure is noticed and told),
// graph/driver_profile.cpp (the profile) and graph/teardown.cpp.
// Results are collected from the output channels by the caller of get(), or,
// once someone asked for a future or the results descriptor, by a collector
// thread that takes each execution's results as soon as they arrive.
#include <cg/driver.hpp>

#include "graph/runtime_state.hpp"
#include "support/deadline.hpp"
#include "support/text.hpp"
#include "tensor/tensor_wire.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {
namespace {

// How long a get() waits before it watches the actors' progress.
constexpr std::chrono::milliseconds kWatchAfter{1};

void signal_eventfd(int fd) noexcept {
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(fd, &one, sizeof one);
}

} // namespace

// Tells every waiting future why it will get nothing.
void GraphRuntime::Impl::fail_callbacks() {
  std::map<std::uint64_t, ResultsCallback> waiting;
  std::exception_ptr why;
  int notify_fd = -1;
  {
    std::lock_guard lock(mutex);
    waiting.swap(results.callbacks);
    why = failures.failure;
    notify_fd = results.results_fd;
  }
  if (!why)
    why = std::make_exception_ptr(ChannelClosedError(describe(spec) + " was torn down"));
  for (auto& [seq, callback] : waiting)
    callback(nullptr, why);
  if (notify_fd >= 0)
    signal_eventfd(notify_fd);
}

namespace {
// A result's bytes, copied out of its channel to be decoded later; a large
// one lets the channel's pages go as the copy grows, as decoding does.
std::vector<std::byte> copy_of(const ChannelReader::Message& message) {
  std::vector<std::byte> bytes;
  bytes.reserve(message.payload.size());
  Decoder(message.payload, message.paging)
      .copy_out(message.payload.size(), [&bytes](std::span<const std::byte> piece) {
        bytes.insert(bytes.end(), piece.begin(), piece.end());
      });
  return bytes;
}
} // namespace

// Collects the results of execution `results.collected` from every result channel,
// resuming a collection an earlier timeout interrupted, and files them: with
// the future waiting for them, or in `results.untaken`.
ChannelStatus GraphRuntime::Impl::collect_next(Deadline deadline, ProfileRecorder& recorder) {
  const bool recording = recorder.on() && profiling.sampling.records(results.collected);
  while (results.partial.size() < results.result_readers.size()) {
    ChannelReader& reader = results.result_readers[results.partial.size()];
    const std::int64_t start = recording ? profile_clock() : 0;
    ChannelReader::Message message;
    ChannelStatus status = reader.acquire(message, deadline);
    if (status != ChannelStatus::ok) {
      results.failed_reader = results.partial.size();
      return status;
    }
    results.partial.push_back(
        {message.kind, copy_of(message), results.origin_of(results.partial.size())});
    reader.release();
    if (recording)
      recorder.record(ProfiledOp::read, results.result_channels[results.partial.size() - 1],
                      message.sequence, start, profile_clock(), message.payload.size());
  }
  std::vector<Collected> outputs(results.output_source.size());
  for (std::size_t i = 0; i < results.output_source.size(); ++i) {
    // Large values are moved, not copied, unless a later output shares them.
    bool used_later = std::find(results.output_source.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                results.output_source.end(),
                                results.output_source[i]) != results.output_source.end();
    Collected& source = results.partial[results.output_source[i]];
    outputs[i] = used_later ? source : std::move(source);
  }
  results.partial.clear();

  ResultsCallback callback;
  int notify_fd = -1;
  {
    std::lock_guard lock(mutex);
    std::uint64_t seq = results.collected++;
    auto waiting = results.callbacks.find(seq);
    if (results.abandoned.erase(seq) != 0) {
      // Nobody will take them: `outputs` goes with this scope.
    } else if (waiting != results.callbacks.end()) {
      callback = std::move(waiting->second);
      results.callbacks.erase(waiting);
    } else {
      results.untaken.emplace(seq, std::move(outputs));
    }
    if (results.async && !results.abandoned.count(seq))
      notify_fd = results.results_fd;
  }
  if (callback)
    callback(&outputs, nullptr);
  if (notify_fd >= 0)
    signal_eventfd(notify_fd);
  changed.notify_all();
  return ChannelStatus::ok;
}

// Collects execution `results.collected` for a get() waiting for it: `sink` decodes
// the outputs where they are (in the channels, or in `results.partial` for those an
// earlier collection copied out), and only then are the messages released.
// A timeout leaves the messages acquired: acquiring again, here or in
// collect_next(), gives the same ones.
ChannelStatus GraphRuntime::Impl::collect_in_place(Deadline deadline, ResultsSink sink,
                                                   std::int64_t start) {
  results.message_views.resize(results.result_readers.size());
  // The first READ begins at `start`, each other one where the one before it
  // ended: one clock read each, none for a READ whose message was there at
  // the first look (it ends where it began; cg/detail/profile.hpp).
  const bool recording = profiling.records(results.collected);
  for (std::size_t i = results.partial.size(); i < results.result_readers.size(); ++i) {
    ChannelReader::Message message;
    ChannelStatus status = ChannelStatus::timeout;
    if (recording)
      status = results.result_readers[i].acquire(message, Deadline::min());
    const bool waited = status == ChannelStatus::timeout;
    if (waited)
      status = results.result_readers[i].acquire(message, deadline);
    if (status != ChannelStatus::ok) {
      results.failed_reader = i;
      return status;
    }
    results.message_views[i] = {message.kind, message.payload, message.paging,
                                results.origin_of(i)};
    if (recording) {
      const std::int64_t end = waited ? profile_clock() : start;
      profiling.profile.record(ProfiledOp::read, results.result_channels[i], message.sequence,
                               start, end, message.payload.size());
      start = end;
    }
  }
  for (std::size_t i = 0; i < results.partial.size(); ++i)
    results.message_views[i] = {results.partial[i].kind, results.partial[i].bytes, nullptr,
                                results.partial[i].origin};
  results.output_views.resize(results.output_source.size());
  for (std::size_t i = 0; i < results.output_source.size(); ++i)
    results.output_views[i] = results.message_views[results.output_source[i]];
  sink.decode(sink.context, results.output_views);
  for (std::size_t i = results.partial.size(); i < results.result_readers.size(); ++i)
    results.result_readers[i].release();
  results.partial.clear();
  {
    std::lock_guard lock(mutex);
    ++results.collected;
  }
  changed.notify_all();
  return ChannelStatus::ok;
}

// A result channel answered something other than ok or timeout.
void GraphRuntime::Impl::throw_result_failure(ChannelStatus status) {
  if (status == ChannelStatus::corrupt || status == ChannelStatus::unmappable) {
    std::uint32_t channel =
        results
            .result_channels[std::min(results.failed_reader, results.result_channels.size() - 1)];
    std::string what =
        status == ChannelStatus::corrupt
            ? "result channel " + std::to_string(channel) + " of " + describe(spec) +
                  " is corrupt: its shared memory holds impossible values"
            : "result channel " + std::to_string(channel) + " of " + describe(spec) +
                  ": a message's overflow buffer cannot be mapped (its writer is gone, or "
                  "/proc/<pid>/fd of the actor is not accessible)";
    // The channels can no longer be trusted to stay in step: stop the graph.
    fail(std::make_exception_ptr(Error(what + "; the graph cannot execute any more")));
    close_all();
  }
  throw_failure();
}

void GraphRuntime::Impl::collect_loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] {
        return results.stop_collector || failures.failure || results.collected < results.submitted;
      });
      if (results.stop_collector || failures.failure)
        break;
    }
    ChannelStatus status = collect_next(Deadline::max(), profiling.collector_profile);
    if (status == ChannelStatus::ok)
      continue;
    try {
      throw_result_failure(status);
    } catch (...) {
      fail(std::current_exception());
    }
    break;
  }
  fail_callbacks();
}

std::vector<std::uint64_t> GraphRuntime::Impl::executions_now() const {
  std::vector<std::uint64_t> now;
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a)
    now.push_back(scale_out.local[a] && records[a]
                      ? records[a]->executions.load(std::memory_order_relaxed)
                      : 0);
  return now;
}
// Called with `mutex` held (hence the lock argument).
void GraphRuntime::Impl::start_async(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  if (results.async)
    return;
  results.async = true;
  if (results.results_fd < 0)
    results.results_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Results collected before the switch are ready now.
  if (!results.untaken.empty() && results.results_fd >= 0)
    signal_eventfd(results.results_fd);
  results.collector = std::thread([this] { collect_loop(); });
}

GraphRuntime::MemoryHold::MemoryHold(const GraphRuntime& runtime) : runtime_(runtime) {
  if (!runtime.impl_->enter_memory())
    runtime.impl_->throw_failure();
}

GraphRuntime::MemoryHold::~MemoryHold() { runtime_.impl_->leave_memory(); }

const std::vector<int>& GraphRuntime::bound_cpus() const noexcept {
  return impl_->processes.bound_cpus;
}

const std::vector<std::string>& GraphRuntime::cuda_devices(std::uint32_t actor) const {
  return impl_->cuda_devices.at(actor);
}
std::uint64_t GraphRuntime::begin_execution() {
  Impl& s = *impl_;
  const MemoryHold hold(*this); // collects in this thread, records in the profile
  // The execution this call will begin, as this thread (the ring's one
  // writer) last numbered one: sampled, only a recorded one reads the clock.
  std::int64_t start = s.profiling.records(s.profiling.next_submission) ? profile_clock() : 0;
  std::unique_lock lock(s.mutex);
  auto check_usable = [&] {
    if (s.torn_down || s.failures.failure || s.channels.front().closed()) {
      lock.unlock();
      s.throw_failure();
    }
  };
  check_usable();
  // Executions someone can still take; abandoned ones do not count.
  const std::uint64_t takeable =
      s.results.submitted - s.results.collected - s.results.abandoned.size();
  if (takeable >= s.options.max_in_flight)
    throw CapacityExceeded(
        std::to_string(takeable) + " executions of " + describe(spec_) +
        " are in flight, the most max_in_flight allows; call get() on earlier results first, "
        "or launch with a larger cg::LaunchOptions::max_in_flight");
  // The channels hold max_in_flight executions: make room by collecting
  // (abandoned results are discarded as they come, the others kept for get()).
  const Deadline deadline = deadline_or_look_once(s.options.submit_timeout);
  auto full = [&] { return s.results.submitted - s.results.collected >= s.options.max_in_flight; };
  auto no_room = [&] {
    return TimeoutError("execution " + std::to_string(s.results.submitted) + " of " +
                        describe(spec_) + " could not be submitted within " +
                        std::to_string(s.options.submit_timeout.count()) +
                        " ms: executions whose refs were dropped are still running");
  };
  while (full()) {
    if (s.results.async) {
      if (!s.changed.wait_until(lock, deadline,
                                [&] { return !full() || s.failures.failure || s.torn_down; }))
        throw no_room();
    } else {
      lock.unlock();
      const ChannelStatus status = s.collect_next(deadline, s.profiling.profile);
      if (status == ChannelStatus::timeout)
        throw no_room();
      if (status != ChannelStatus::ok)
        s.throw_result_failure(status);
      lock.lock();
    }
    check_usable();
  }
  std::uint64_t seq = s.results.submitted++;
  s.profiling.next_submission = seq + 1;
  if (start == 0 && s.profiling.records(seq)) // another thread submitted meanwhile
    start = profile_clock();
  s.profiling.execute_start = start;
  if (s.profiling.records(seq) && spec_.input_channels.empty())
    s.profiling.profile.record(ProfiledOp::execute, 0, seq, start, profile_clock());
  if (s.results.async) {
    lock.unlock();
    s.changed.notify_all();
  }
  return seq;
}

void GraphRuntime::abandon(std::uint64_t seq) noexcept {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  if (s.results.untaken.erase(seq) != 0 || seq < s.results.collected || seq >= s.results.submitted)
    return; // dropped now, or already gone
  try {
    s.results.abandoned.insert(seq);
  } catch (const std::bad_alloc&) {
    // Kept for a get() that never comes: memory, not correctness.
  }
}

Tensor GraphRuntime::input_tensor(std::size_t input, DType dtype, std::vector<std::int64_t> shape) {
  Impl& s = *impl_;
  const MemoryHold hold(*this);
  if (input >= s.inputs.size())
    throw Error(describe(spec_) + " has no input #" + std::to_string(input));
  if (s.input_in_place.at(input))
    throw Error("input #" + std::to_string(input) + " of " + describe(spec_) +
                " already has a tensor from input_tensor() that no execute() has taken: the "
                "next execute() takes it (and one tensor per input waits at a time)");
  const std::size_t bytes = wire_bytes(dtype, shape); // checks the shape
  std::span<std::byte> slot;
  if (acquire_input_area(input, bytes, slot) == ChannelStatus::too_large)
    throw Error("input #" + std::to_string(input) + " of " + describe(spec_) + ": " +
                std::string(to_string(dtype)) + " tensor of " + std::to_string(bytes) +
                " bytes: no shared-memory buffer that large could be allocated");
  Tensor in_place =
      Tensor::from_blob(slot.data() + wire_header_bytes(shape.size()), dtype, std::move(shape));
  Encoder header(slot);
  encode_wire_header(header, in_place);
  s.input_in_place[input] = true;
  return in_place;
}

bool GraphRuntime::acquire_input(std::size_t input, std::size_t bytes, std::span<std::byte>& slot) {
  Impl& s = *impl_;
  s.input_in_place.at(input) = false; // this execution takes it
  if (acquire_input_area(input, bytes, slot) == ChannelStatus::ok)
    return true;
  // No memory for the value. Keep every actor in step: this execution
  // carries an error, not a value.
  ErrorRecord error =
      fit_to_slot({"driver", "execute", "std::bad_alloc",
                   "input #" + std::to_string(input) + " of " + std::to_string(bytes) +
                       " bytes: no shared-memory buffer that large could be allocated"},
                  s.options.slot_bytes);
  std::size_t size = encoded_size(error);
  if (s.inputs[input].acquire(size, slot, deadline_or_look_once(s.options.submit_timeout)) !=
      ChannelStatus::ok)
    s.throw_failure();
  Encoder encoder(slot);
  encode(encoder, error);
  s.inputs[input].publish(MessageKind::error, encoder.written());
  return false;
}

ChannelStatus GraphRuntime::acquire_input_area(std::size_t input, std::size_t bytes,
                                               std::span<std::byte>& slot) {
  Impl& s = *impl_;
  Deadline deadline = deadline_or_look_once(s.options.submit_timeout);
  switch (ChannelStatus status = s.inputs.at(input).acquire(bytes, slot, deadline)) {
  case ChannelStatus::ok:
  case ChannelStatus::too_large:
    return status;
  case ChannelStatus::timeout:
    throw TimeoutError("input #" + std::to_string(input) + " of " + describe(spec_) +
                       " could not be submitted within " +
                       std::to_string(s.options.submit_timeout.count()) + " ms");
  case ChannelStatus::corrupt:
    s.fail(std::make_exception_ptr(Error(
        "input channel " + std::to_string(spec_.input_channels[input]) + " of " + describe(spec_) +
        " is corrupt: its shared memory holds impossible values; the graph cannot "
        "execute any more")));
    s.close_all();
    s.throw_failure();
  default:
    (void)status;
    s.throw_failure();
  }
}

bool GraphRuntime::sends_borrowed(std::size_t input) const noexcept {
  return impl_->inputs[input].sends_borrowed();
}

void GraphRuntime::publish_input(std::size_t input, std::size_t bytes,
                                 detail::BorrowedRuns* borrowed) {
  Impl& s = *impl_;
  if (borrowed != nullptr)
    s.inputs.at(input).publish_borrowed(MessageKind::value, bytes, *borrowed,
                                        deadline_or_look_once(s.options.submit_timeout));
  else
    s.inputs.at(input).publish(MessageKind::value, bytes);
  if (!s.profiling.profile.on())
    return;
  // The execution begun last: execute() hands over its inputs in order.
  const std::uint64_t seq = s.inputs[input].published() - 1;
  if (!s.profiling.records(seq))
    return;
  const std::int64_t now = profile_clock();
  // Each input's write from where the one before it (or execute()) left off.
  s.profiling.profile.record(ProfiledOp::write, spec_.input_channels[input], seq,
                             input == 0 ? s.profiling.execute_start : s.profiling.input_start, now,
                             bytes);
  s.profiling.input_start = now;
  if (input + 1 == s.inputs.size())
    s.profiling.profile.record(ProfiledOp::execute, 0, seq, s.profiling.execute_start, now);
}

void GraphRuntime::take_results(std::uint64_t seq, ResultsSink sink) {
  take_results(seq, impl_->options.get_timeout, sink);
}

void GraphRuntime::take_results(std::uint64_t seq, std::chrono::milliseconds timeout,
                                ResultsSink sink) {
  Impl& s = *impl_;
  const MemoryHold hold(*this); // collects in this thread, in place
  // An execution an actor's restart lost ends in its ActorDiedError, not
  // in the decoder's TaskError: its outputs reach `sink` through this check.
  struct Checked {
    ResultsSink sink;
    std::exception_ptr lost;
  } checked{sink, nullptr};
  sink = {[](void* context, std::span<const ResultView> outputs) noexcept {
            auto& checked = *static_cast<Checked*>(context);
            checked.lost = lost_to_restart(outputs);
            if (!checked.lost)
              checked.sink.decode(checked.sink.context, outputs);
          },
          &checked};
  auto throw_if_lost = [&] {
    if (checked.lost)
      std::rethrow_exception(checked.lost);
  };
  // A get() that returns (not one that throws) is recorded, from call to
  // decoded result; its first READ waits from the call too.
  const bool recording = s.profiling.records(seq);
  const std::int64_t called = recording ? profile_clock() : 0;
  auto recorded = [&] {
    if (recording)
      s.profiling.profile.record(ProfiledOp::get, 0, seq, called, profile_clock());
  };
  std::int64_t read_from = called;
  Deadline deadline = deadline_or_look_once(timeout);
  std::unique_lock lock(s.mutex);
  if (s.torn_down) {
    lock.unlock();
    s.throw_failure();
  }
  if (seq >= s.results.submitted)
    throw Error("execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was never submitted");
  // An actor found stalled before that still has not moved: look once, then
  // fail with the same cause rather than wait for it again.
  std::string stalled_before;
  if (!s.results.untaken.count(seq) && seq >= s.results.collected) {
    stalled_before = s.still_stalled();
    if (!stalled_before.empty())
      deadline = Deadline::min();
  }
  // Watching the actors (a look at each one's record) is for a get() that
  // is still waiting after kWatchAfter: one that times out then names the
  // actor that made no progress meanwhile. Results that come sooner cost
  // nothing more.
  Deadline phase_end = deadline;
  if (deadline != Deadline::min() && deadline != Deadline::max())
    phase_end = std::min(deadline, std::chrono::steady_clock::now() + kWatchAfter);
  std::vector<std::uint64_t> before; // executions when watching began
  Deadline watched_from{};
  // The first phase ended without the result: watch and wait on (true), or
  // the deadline has passed (false). Called with the lock held.
  auto watch_on = [&] {
    if (phase_end == deadline)
      return false;
    before = s.executions_now();
    watched_from = std::chrono::steady_clock::now();
    phase_end = deadline;
    return true;
  };
  auto timed_out = [&] {
    if (!stalled_before.empty())
      return TimeoutError("no result of execution " + std::to_string(seq) + " of " +
                          describe(spec_) + ": " + stalled_before);
    return s.stalled(seq, timeout, before, std::chrono::steady_clock::now() - watched_from);
  };
  if (!s.results.async) {
    // Collect in this thread, up to and including execution `seq`: that one
    // straight into the sink.
    while (s.results.collected <= seq) {
      const bool wanted = s.results.collected == seq;
      lock.unlock();
      ChannelStatus status = wanted ? s.collect_in_place(phase_end, sink, read_from)
                                    : s.collect_next(phase_end, s.profiling.profile);
      if (wanted && status == ChannelStatus::ok) {
        throw_if_lost();
        recorded();
        return;
      }
      read_from = recording ? profile_clock() : 0;
      lock.lock();
      if (status == ChannelStatus::timeout && watch_on())
        continue;
      if (status == ChannelStatus::timeout)
        throw timed_out();
      if (status != ChannelStatus::ok) {
        lock.unlock();
        s.throw_result_failure(status);
      }
    }
  }
  for (;;) {
    if (auto node = s.results.untaken.extract(seq); !node.empty()) {
      lock.unlock();
      const std::vector<ResultView> views = views_of(node.mapped());
      sink.decode(sink.context, views);
      throw_if_lost();
      recorded();
      return;
    }
    if (seq < s.results.collected)
      throw Error("the result of execution " + std::to_string(seq) + " of " + describe(spec_) +
                  " was already taken");
    if (s.failures.failure || s.torn_down) {
      lock.unlock();
      s.throw_failure();
    }
    if (phase_end == Deadline::max())
      s.changed.wait(lock);
    else if (s.changed.wait_until(lock, phase_end) == std::cv_status::timeout &&
             !s.results.untaken.count(seq) && !s.failures.failure && seq >= s.results.collected &&
             !watch_on())
      throw timed_out();
  }
}

std::vector<std::string> GraphRuntime::channel_transports() const {
  return impl_->scale_out.transports;
}

bool GraphRuntime::results_ready(std::uint64_t seq) {
  Impl& s = *impl_;
  const Impl::MemoryUse use(s);
  if (!use.entered)
    return true; // torn down: take_results() throws at once
  std::unique_lock lock(s.mutex);
  if (s.results.untaken.count(seq) || s.torn_down || s.failures.failure ||
      seq < s.results.collected || seq >= s.results.submitted)
    return true;
  if (s.results.async)
    return false;
  // Collect what has arrived, without waiting.
  while (s.results.collected <= seq) {
    lock.unlock();
    ChannelStatus status = s.collect_next(Deadline::min(), s.profiling.profile);
    if (status == ChannelStatus::timeout)
      return false;
    if (status != ChannelStatus::ok) {
      try {
        s.throw_result_failure(status);
      } catch (const std::exception&) {
      }
      return true;
    }
    lock.lock();
  }
  return true;
}

void GraphRuntime::on_results(std::uint64_t seq, ResultsCallback callback) {
  Impl& s = *impl_;
  // As take_results(): an execution a restart lost settles with its error.
  ResultsCallback done = [callback = std::move(callback)](std::vector<Collected>* results,
                                                          std::exception_ptr error) {
    // Only an error output can be a restart's record: a vector of views is
    // made for those executions alone, not for every result of a stream.
    if (results != nullptr && !error &&
        std::any_of(results->begin(), results->end(),
                    [](const Collected& output) { return output.kind == MessageKind::error; }))
      error = lost_to_restart(views_of(*results));
    callback(error ? nullptr : results, error);
  };
  std::unique_lock lock(s.mutex);
  if (seq >= s.results.submitted)
    throw Error("execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was never submitted");
  if (auto node = s.results.untaken.extract(seq); !node.empty()) {
    lock.unlock();
    done(&node.mapped(), nullptr);
    return;
  }
  if (seq < s.results.collected)
    throw Error("the result of execution " + std::to_string(seq) + " of " + describe(spec_) +
                " was already taken");
  if (s.failures.failure || s.torn_down) {
    lock.unlock();
    try {
      s.throw_failure();
    } catch (...) {
      done(nullptr, std::current_exception());
    }
    return;
  }
  s.results.callbacks.emplace(seq, std::move(done));
  s.start_async(lock);
}

int GraphRuntime::results_fd() {
  Impl& s = *impl_;
  std::unique_lock lock(s.mutex);
  if (!s.torn_down)
    s.start_async(lock);
  else if (s.results.results_fd < 0)
    s.results.results_fd =
        ::eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK); // readable: get() throws at once
  if (s.results.results_fd < 0)
    throw Error("cannot create the results descriptor of " + describe(spec_) + ": " +
                std::strerror(errno));
  return s.results.results_fd;
}

} // namespace cg::detail
