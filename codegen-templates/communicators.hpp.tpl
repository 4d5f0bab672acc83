// Communicator groups (NCCL edges, collectives): their actors, rank = position.
{groups}inline constexpr std::array<cg::detail::CommunicatorSpec, {group_count}> {graph_id}_communicators{{{{
{rows}}}}};
