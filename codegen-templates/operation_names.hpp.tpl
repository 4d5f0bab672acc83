// Names of the operations, for profiles (cg::LaunchOptions::profile): each
// channel's value, and each actor's COMPUTE operations in program order.
inline constexpr std::array<const char*, {channel_count}> {graph_id}_values{{{values}}};
{actor_tables}inline constexpr std::array<std::span<const cg::detail::ComputeName>, {actor_count}>
    {graph_id}_computes{{{tables}}};
