
// ---- graph '{graph}' ({location}) ----

namespace cg_generated::{target_ns} {{

// The actors' programs, in {actors_file}.
{run_declarations}
// Actors: name and program (a channel's writer is its index here).
inline constexpr std::array<cg::detail::ActorSpec, {actor_count}> {graph_id}_actors{{{{
{actor_specs}}}}};
// Channels: writer actor (-1: driver), and the reader of each slot (-1: driver).
{reader_actors}inline constexpr std::array<cg::detail::ChannelSpec, {channel_count}> {graph_id}_channels{{{{
{channel_specs}}}}};
inline constexpr std::array<std::uint32_t, {input_count}> {graph_id}_inputs{{{input_channels}}};
inline constexpr std::array<std::uint32_t, {output_count}> {graph_id}_outputs{{{output_channels}}};
{communicator_specs}{operation_names}inline constexpr cg::detail::GraphSpec {graph_id}_spec{{
    .name = "{graph}",
    .actors = {graph_id}_actors,
    .channels = {graph_id}_channels,
    .input_channels = {graph_id}_inputs,
    .output_channels = {graph_id}_outputs,
{spec_communicators}{spec_tcp}    .names = {{.channels = {graph_id}_values, .computes = {graph_id}_computes}},
{spec_max_in_flight}}};

/// Constructor arguments for the actors of graph '{graph}' that replace the
/// graph's at launch: cg::launch<&{graph_qualified}>(constructors, options).
struct {graph_id}_constructors {{
{constructor_members}}};

/// The driver of graph '{graph}'. Made by cg::launch<&{graph_qualified}>();
/// tears the graph down on destruction. results_fd(), channel_transports(),
/// bound_cpus() and teardown() come from cg::detail::GraphHandle (cg/driver.hpp).
class {graph_id}_graph : public cg::detail::GraphHandle {{
public:
  using Constructors = {graph_id}_constructors;

  explicit {graph_id}_graph(cg::LaunchOptions options = {{}}, {constructors_param} = {{}})
      : GraphHandle({graph_id}_spec, actor_host(), options{encoded_constructors}) {{}}

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
{input_tensor_method}{encode_function_private}}};

}} // namespace cg_generated::{target_ns}

template <> struct cg::GraphTraits<&{graph_qualified}> {{
  using type = cg_generated::{target_ns}::{graph_id}_graph;
}};
