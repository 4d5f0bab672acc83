inline constexpr std::array<cg::detail::ComputeName, {count}> {table}{{{{
{rows}}}}};
