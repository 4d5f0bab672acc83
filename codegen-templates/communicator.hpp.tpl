// g{group}: {summary}
inline constexpr std::array<std::uint32_t, {rank_count}> {graph_id}_g{group}{{{ranks}}};
