// graph/graph_path.hpp - "{graph}" in a path a launch reads or writes.
//
// A program that launches several graphs names one file per graph with
// "{graph}" in it: the profile it writes (LaunchOptions::profile, CG_PROFILE)
// and the placement file it reads (LaunchOptions::placement, CG_PLACEMENT).
// One expansion for both, so the two read alike.
#pragma once

#include <string>
#include <string_view>

namespace cg::detail {

/// `path` with every "{graph}" in it replaced by `graph`, the graph's name.
inline std::string with_graph_name(std::string path, std::string_view graph) {
  static constexpr std::string_view kPlaceholder = "{graph}";
  for (std::size_t at = 0; (at = path.find(kPlaceholder, at)) != std::string::npos;
       at += graph.size())
    path.replace(at, kPlaceholder.size(), graph);
  return path;
}

} // namespace cg::detail
