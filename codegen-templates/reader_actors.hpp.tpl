inline constexpr std::array<int, {count}> {graph_id}_r{channel}{{{readers}}};
