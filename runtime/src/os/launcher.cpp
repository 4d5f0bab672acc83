// launcher.cpp - reading the rank an external launcher gave this process.
#include "os/launcher.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace cg::detail {

std::optional<int> launcher_rank() {
  for (const char* name : launcher_rank_variables) {
    const char* value = std::getenv(name);
    if (value == nullptr)
      continue;
    const char* end = value + std::strlen(value);
    int rank = -1;
    const auto [stop, ec] = std::from_chars(value, end, rank);
    if (ec != std::errc() || stop != end || value == end || rank < 0)
      return std::nullopt;
    return rank;
  }
  return std::nullopt;
}

} // namespace cg::detail
