
// ---- graph '{graph}' ({location}) ----

namespace cg_generated::{target_ns} {{

// The actors' programs, in {actors_file}.
{run_declarations}
// Actors: name and program (a channel's writer is its index here).
inline constexpr std::array<cg::detail::ActorSpec, {actor_count}> {graph_id}_actors{{{{
{actor_specs}}}}};
// Channels: writer actor (-1: driver), reader slots, the driver's reader slot,
// the reader of each slot (-1: driver).
{reader_actors}inline constexpr std::array<cg::detail::ChannelSpec, {channel_count}> {graph_id}_channels{{{{
{channel_specs}}}}};
inline constexpr std::array<std::uint32_t, {input_count}> {graph_id}_inputs{{{input_channels}}};
inline constexpr std::array<std::uint32_t, {output_count}> {graph_id}_outputs{{{output_channels}}};
{communicator_specs}inline constexpr cg::detail::GraphSpec {graph_id}_spec{{"{graph}", {graph_id}_actors,
                                                    {graph_id}_channels, {graph_id}_inputs,
                                                    {graph_id}_outputs{spec_communicators}{spec_tcp}}};

/// Constructor arguments for the actors of graph '{graph}' that replace the
/// graph's at launch: cg::launch<&{graph_qualified}>(constructors, options).
struct {graph_id}_constructors {{
{constructor_members}}};

/// The driver of graph '{graph}'. Made by cg::launch<&{graph_qualified}>();
/// tears the graph down on destruction.
class {graph_id}_graph {{
public:
  using Constructors = {graph_id}_constructors;

  explicit {graph_id}_graph(cg::LaunchOptions options = {{}},
                           [[maybe_unused]] Constructors constructors = {{}})
      : runtime_(std::make_shared<cg::detail::GraphRuntime>({graph_id}_spec, actor_host(),
                                                            options{encoded_constructors})) {{}}
  ~{graph_id}_graph() {{ teardown(); }}
  {graph_id}_graph({graph_id}_graph&&) noexcept = default;
  {graph_id}_graph& operator=({graph_id}_graph&&) = delete;

  /// Submits one execution; get() on the returned ref waits for its result.
  cg::Ref<{result_type}> execute({input_params}) {{
    std::uint64_t seq = runtime_->begin_execution();
{input_writes}    return cg::Ref<{result_type}>(runtime_, seq);
  }}

  /// As execute(), for event loops: the result as a std::future, set as soon
  /// as the execution completes. Poll results_fd() to learn when.
  std::future<{result_type}> execute_async({input_params}) {{
    return execute({input_args}).get_future();
  }}

  /// An eventfd that is readable while results are ready (cg/driver.hpp);
  /// owned by the graph.
  int results_fd() {{ return runtime_->results_fd(); }}

  /// How each channel travels at run time ("shm", "tcp"), by channel id (the
  /// schedule's cN).
  std::vector<std::string> channel_transports() const {{ return runtime_->channel_transports(); }}

  /// The CPUs launch() bound (cg::LaunchOptions::cpu_binding): the launching
  /// thread's, then one per actor on this host; empty when nothing is bound.
  const std::vector<int>& bound_cpus() const {{ return runtime_->bound_cpus(); }}

  /// Stops the actors and releases the channels; idempotent.
  void teardown() {{
    if (runtime_)
      runtime_->teardown();
  }}

private:
{encode_function}  std::shared_ptr<cg::detail::GraphRuntime> runtime_;
}};

}} // namespace cg_generated::{target_ns}

template <> struct cg::GraphTraits<&{graph_qualified}> {{
  using type = cg_generated::{target_ns}::{graph_id}_graph;
}};
