// cg/detail/graph_runtime.hpp - The untyped driver side of a launched graph,
// which the generated driver class and cg::Ref<T> (cg/driver.hpp) are typed over.
//
// Users do not write these: GraphRuntime owns the actors, the shared memory
// and the channels of one launched graph; Collected, ResultView and
// ResultsSink carry an execution's outputs to the code that decodes them
// (Decoding, decode_result), which the typed refs call.
#pragma once

#include <cg/cpu_binding.hpp>
#include <cg/detail/channel.hpp>
#include <cg/detail/error_codec.hpp>
#include <cg/detail/graph_spec.hpp>
#include <cg/errors.hpp>
#include <cg/serialize.hpp>
#include <cg/stats.hpp>
#include <cg/tensor.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cg {

struct LaunchOptions;

namespace detail {

/// One result message as collected from an output channel, when it has to
/// be kept (for a future, or for a get() that comes later).
struct Collected {
  MessageKind kind;
  std::vector<std::byte> bytes;
  const char* origin = nullptr; // as ResultView::origin
};

/// One output of an execution as it is decoded: its bytes where they are,
/// in a result channel (a get() waiting for them: decoded before they leave
/// the channel, so a large result is copied once) or in a Collected.
struct ResultView {
  MessageKind kind;
  std::span<const std::byte> bytes;
  // Set for bytes in a channel's shared buffer: a large value decoded out of
  // them lets their pages go as it goes (cg::InputPaging), so that the
  // driver's memory holds the result once, not twice.
  const InputPaging* paging = nullptr;
  // Where bytes that do not decode went wrong, for the error: null for
  // shared memory; for a result from another host, its writer and stream
  // (whose frames are authenticated, so the writer sent them so). Owned by
  // the launched graph.
  const char* origin = nullptr;
};

/// What take_results() hands an execution's outputs to, once. A function
/// and its context rather than a std::function, so that get() allocates
/// nothing. It must not throw.
struct ResultsSink {
  void (*decode)(void* context, std::span<const ResultView> outputs) noexcept;
  void* context;
};

/// Called once with an execution's results, or with why there are none.
using ResultsCallback =
    std::function<void(std::vector<Collected>* results, std::exception_ptr error)>;

/// The untyped driver side of a launched graph: processes, segment, channels.
/// The generated driver class wraps it with typed execute() and Ref<T>.
class GraphRuntime {
public:
  /// `constructor_args`: per actor, empty or the encoded constructor
  /// arguments launch() was given for it (see ActorProcess::construct).
  GraphRuntime(const GraphSpec& spec, std::string actor_host, const LaunchOptions& options,
               std::vector<std::optional<std::vector<std::byte>>> constructor_args = {});
  ~GraphRuntime();
  GraphRuntime(const GraphRuntime&) = delete;
  GraphRuntime& operator=(const GraphRuntime&) = delete;

  /// Starts an execution and returns its sequence number. Throws
  /// CapacityExceeded when max_in_flight executions are in flight that
  /// someone can still take; abandoned ones still in the channels are
  /// drained first (waiting up to the submit timeout: TimeoutError).
  std::uint64_t begin_execution();

  /// A host tensor of `dtype` and `shape` (contiguous, uninitialised) made
  /// where input `input` of the next execution travels: in its channel's
  /// shared memory (an overflow buffer when larger than a slot), after the
  /// encoding's header, 64-byte aligned. write_input() of this tensor then
  /// copies none of its elements, and a reader on this host reads them where
  /// the caller wrote them. The channel's next slot is taken now (waiting
  /// up to the submit timeout: TimeoutError), and held until that
  /// write_input(), whatever it is given; from then on the memory is the
  /// graph's (neither read nor write it). While such a tensor waits for an
  /// execute(), teardown keeps the segment and the input's overflow buffers
  /// mapped (the tensor may still be written, to no effect); the graph's last
  /// reference unmaps them. Throws Error when the input does not exist,
  /// already has such a tensor waiting, or no buffer that large can be made;
  /// TensorError for a bad shape; ChannelClosedError once torn down.
  Tensor input_tensor(std::size_t input, DType dtype, std::vector<std::int64_t> shape);

  /// Hands input `input` of the execution begun last to the graph, waiting up
  /// to the submit timeout for room (TimeoutError). A large value that only
  /// other hosts read is sent from `value` itself while the network takes it
  /// (cg/detail/borrowed_runs.hpp); what is left when it stalls is copied.
  template <class T> void write_input(std::size_t input, const T& value) {
    const MemoryHold hold(*this); // the value is encoded into the graph's memory
    std::span<std::byte> slot;
    const std::size_t bytes = encoded_size(value);
    if (!acquire_input(input, bytes, slot))
      return; // no memory for it: an error record went in its place
    detail::BorrowedRuns borrowed;
    const bool borrowing = bytes >= detail::BorrowedRuns::min_bytes && sends_borrowed(input);
    Encoder encoder(slot, borrowing ? &borrowed : nullptr);
    encode(encoder, value);
    publish_input(input, encoder.written(), borrowing ? &borrowed : nullptr);
  }

  /// Hands every output of execution `seq` to `sink`, waiting for them up to
  /// the get timeout (or `timeout`); each execution's only once. Throws
  /// before calling the sink (TimeoutError, ActorDiedError, ...) or not at all.
  void take_results(std::uint64_t seq, ResultsSink sink);
  void take_results(std::uint64_t seq, std::chrono::milliseconds timeout, ResultsSink sink);

  /// Nobody will take execution `seq`'s results (its last Ref went without
  /// get()): they are dropped if already collected, else discarded when they
  /// arrive, and the execution stops counting against max_in_flight. Never
  /// blocks, never throws.
  void abandon(std::uint64_t seq) noexcept;

  /// True when take_results(seq) would not wait: the results are in, or it
  /// would throw at once. Never blocks.
  bool results_ready(std::uint64_t seq);

  /// Arranges for `done` to be called once with execution `seq`'s results (or
  /// the error that replaced them: ActorDiedError, ChannelClosedError, ...),
  /// on the collector thread as they arrive, or right here if they already
  /// have; they are then taken. Starts the collector thread.
  void on_results(std::uint64_t seq, ResultsCallback done);

  /// An eventfd (non-blocking, close-on-exec) that the runtime adds 1 to each
  /// time an execution's results are collected, and when the graph fails or is
  /// torn down: it is readable (POLLIN) while its counter is not zero. Read its
  /// 8 bytes to reset it, then take what is ready (results_ready(), futures).
  /// Starts the collector thread. Owned by the runtime (do not close it); the
  /// same descriptor every call, valid as long as the runtime.
  int results_fd();

  /// Writes the operations recorded so far as a Chrome trace to `path`
  /// (actor/profile_trace.hpp); throws Error if the launch records no
  /// profile (LaunchOptions::profile) or the file cannot be written.
  void write_profile(const std::string& path) const;
  /// The statistics of the operations recorded so far (cg/stats.hpp); throws
  /// Error as write_profile() does without a profile.
  GraphStats stats() const;
  /// Per actor name, its restarts so far (LaunchOptions::max_restarts).
  std::map<std::string, std::uint32_t> restarts() const;

  /// Closes every channel, stops the actors, then unmaps and closes every
  /// part of the graph's shared memory this process holds (the segment, the
  /// driver's overflow buffers and its mappings of the actors'), once the
  /// calls still using it in other threads (a get() waiting for a result)
  /// have left it with the error; idempotent. Two exceptions keep memory
  /// until the graph's last reference goes: an actor thread left running
  /// (teardown(timeout)) keeps all of it, and a tensor from input_tensor()
  /// that no execute() took keeps the segment and its input's overflow
  /// buffers. Afterwards execute(), get() and input_tensor() throw
  /// ChannelClosedError (or why the graph stopped before), and stats() and
  /// write_profile() give the profile as teardown read it. Actor processes
  /// get 2 s to exit, then SIGKILL; an actor thread (threads mode) still in a
  /// method is waited for, however long it takes.
  void teardown() noexcept;
  /// As teardown(), but waits at most `timeout` for actor threads still in a
  /// method: then throws TimeoutError naming them. A thread cannot be
  /// stopped: it is left running, and the graph's memory kept for it.
  void teardown(std::chrono::milliseconds timeout);

  /// How each channel travels, by channel id: "shm", or "tcp" where its
  /// writer and a reader are processes that share no memory.
  std::vector<std::string> channel_transports() const;

  const GraphSpec& spec() const noexcept { return spec_; }

  /// The CUDA devices (CUDA_VISIBLE_DEVICES entries) actor `actor` was
  /// given, in order; empty for an actor without .gpus(n).
  const std::vector<std::string>& cuda_devices(std::uint32_t actor) const;

  /// The CPUs launch() bound (LaunchOptions::cpu_binding): the launching
  /// thread's, then one per actor on this host in the graph's order; empty
  /// when nothing is bound.
  const std::vector<int>& bound_cpus() const noexcept;

private:
  struct Impl;
  // While one lives, teardown leaves the graph's memory mapped (it waits for
  // it to go); made once teardown has begun, it throws what execute() then
  // throws (ChannelClosedError, or why the graph stopped).
  class MemoryHold {
  public:
    explicit MemoryHold(const GraphRuntime& runtime);
    ~MemoryHold();
    MemoryHold(const MemoryHold&) = delete;
    MemoryHold& operator=(const MemoryHold&) = delete;

  private:
    const GraphRuntime& runtime_;
  };

  bool finish(Deadline deadline) noexcept;
  bool acquire_input(std::size_t input, std::size_t bytes, std::span<std::byte>& slot);
  ChannelStatus acquire_input_area(std::size_t input, std::size_t bytes,
                                   std::span<std::byte>& slot);
  bool sends_borrowed(std::size_t input) const noexcept;
  void publish_input(std::size_t input, std::size_t bytes,
                     detail::BorrowedRuns* borrowed = nullptr);

  const GraphSpec& spec_;
  std::unique_ptr<Impl> impl_;
};

/// The encoded constructor arguments of an actor, if launch() was given any.
template <class... A>
std::optional<std::vector<std::byte>>
encode_constructor_args(const std::optional<std::tuple<A...>>& args) {
  if (!args)
    return std::nullopt;
  std::vector<std::byte> bytes(encoded_size(*args));
  Encoder encoder(bytes);
  encode(encoder, *args);
  return bytes;
}

/// A result from another host that does not decode, with where it came from.
struct UndecodableFrom : DecodeError {
  UndecodableFrom(const DecodeError& e, std::string from)
      : DecodeError(e), origin(std::move(from)) {}
  std::string origin;
};

/// Decodes output `i`; an error record becomes TaskError.
template <class T> T decode_result(std::span<const ResultView> outputs, std::size_t i) {
  if (i >= outputs.size())
    throw DecodeError("cg: no output #" + std::to_string(i));
  const ResultView& output = outputs[i];
  if (output.kind == MessageKind::error)
    throw TaskError(decode_all<ErrorRecord>(output.bytes));
  if (!output.origin)
    return decode_all<T>(output.bytes, output.paging);
  try {
    return decode_all<T>(output.bytes, output.paging);
  } catch (const DecodeError& e) {
    throw UndecodableFrom(e, output.origin);
  }
}

template <class T> struct ResultDecoder {
  static T decode(std::span<const ResultView> outputs) { return decode_result<T>(outputs, 0); }
};
template <class... T> struct ResultDecoder<std::tuple<T...>> {
  static std::tuple<T...> decode(std::span<const ResultView> outputs) {
    return decode_each(outputs, std::index_sequence_for<T...>{});
  }
  template <std::size_t... I>
  static std::tuple<T...> decode_each(std::span<const ResultView> outputs,
                                      std::index_sequence<I...>) {
    // Braced init: decoded left to right, so the first failed output throws.
    return std::tuple<T...>{decode_result<T>(outputs, I)...};
  }
};

/// The typed results of execution `seq`; bytes that do not decode become a
/// cg::Error naming the graph, the execution and where the bytes came from.
template <class T>
T decode_results(std::span<const ResultView> outputs, const char* graph, std::uint64_t seq) {
  try {
    return ResultDecoder<T>::decode(outputs);
  } catch (const DecodeError& e) {
    const auto* sent = dynamic_cast<const UndecodableFrom*>(&e);
    throw Error("the result of execution " + std::to_string(seq) + " of graph '" + graph +
                "' cannot be decoded (" +
                (sent ? sent->origin : std::string("corrupted in shared memory?")) +
                "): " + e.what());
  }
}

/// Views of kept outputs, for decode_results().
inline std::vector<ResultView> views_of(const std::vector<Collected>& kept) {
  std::vector<ResultView> views;
  views.reserve(kept.size());
  for (const Collected& output : kept)
    views.push_back({output.kind, output.bytes, nullptr, output.origin});
  return views;
}

/// Decodes an execution's outputs into a T, or the exception that says why
/// not: what Ref<T> hands take_results() as its sink.
template <class T> struct Decoding {
  Decoding(const char* graph, std::uint64_t seq) noexcept : graph(graph), seq(seq) {}

  const char* graph;
  std::uint64_t seq;
  bool delivered = false; // the outputs came: the result is taken, whatever they say
  std::optional<T> value;
  std::exception_ptr error;

  static void decode(void* context, std::span<const ResultView> outputs) noexcept {
    auto& self = *static_cast<Decoding*>(context);
    self.delivered = true;
    try {
      self.value.emplace(decode_results<T>(outputs, self.graph, self.seq));
    } catch (...) {
      self.error = std::current_exception();
    }
  }
  ResultsSink sink() noexcept { return {&Decoding::decode, this}; }
  T result() {
    if (error)
      std::rethrow_exception(error);
    return std::move(*value);
  }
};

} // namespace detail

} // namespace cg
