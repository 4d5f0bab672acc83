// support/text.hpp - Joining names, and sizes, for messages, for every room of the runtime.
//
// Error messages list actors, channels and hosts; the environment passes
// actor lists comma-separated. One spelling for both. Sizes of memory in
// messages are spelled one way too.
#pragma once

#include <cstdint>
#include <cstdio>
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

/// A size of memory for a message: "512.0 KiB", "1.5 GiB".
inline std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6)
    value /= 1024, ++unit;
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

} // namespace cg::detail
