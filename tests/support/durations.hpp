// durations.hpp - comparing error messages that carry a measured duration.
//
// "actor 'b' has made no progress for 0.5 s": the figure is what the driver
// watched, which a loaded machine (a descheduled thread) can make shorter
// than the timeout. Tests compare the rest of the message exactly.
#pragma once

#include <cstdlib>
#include <string>

namespace cg_test {

/// `text` with the figure of its "for N.N s" replaced by X, when that
/// figure is at most `limit` seconds (else unchanged, so that a comparison
/// fails showing it).
inline std::string seconds_as_x(std::string text, double limit) {
  const std::string::size_type at = text.rfind("for ");
  const std::string::size_type end = text.find(" s", at);
  if (at == std::string::npos || end == std::string::npos)
    return text;
  const std::string figure = text.substr(at + 4, end - at - 4);
  char* parsed = nullptr;
  const double seconds = std::strtod(figure.c_str(), &parsed);
  if (figure.empty() || *parsed != '\0' || seconds > limit)
    return text;
  return text.replace(at + 4, figure.size(), "X");
}

} // namespace cg_test
