// support/text.hpp - Joining names for messages, for every room of the runtime.
//
// Error messages list actors, channels and hosts; the environment passes
// actor lists comma-separated. One spelling for both.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cg::detail {

/// The items with `separator` between them: join({"a", "b"}, ", ") is "a, b".
inline std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty())
      out += separator;
    out += item;
  }
  return out;
}

} // namespace cg::detail
