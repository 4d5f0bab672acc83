//===- CppLiteral.cpp - Text and numbers as C++ literals ------------------===//
//
// The spelling generated code needs for strings and floating-point constants
// (NaN, infinities and -0.0 included), so that what cgc writes compiles.
//
//===----------------------------------------------------------------------===//
#include "support/CppLiteral.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace cg {

std::string cppStringLiteral(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\%03o", static_cast<unsigned char>(c));
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string cppFloatingLiteral(double value, std::string_view type) {
  std::string limits = "std::numeric_limits<" + std::string(type) + ">::";
  if (std::isnan(value))
    return limits + "quiet_NaN()";
  if (std::isinf(value))
    return (value < 0 ? "-" : "") + limits + "infinity()";
  char spelled[64];
  std::snprintf(spelled, sizeof spelled, "%.17g", value);
  std::string out = spelled;
  // "%.17g" writes whole numbers without a point: "-0", "3". As a double
  // literal, "-0.0" keeps its sign where the integer "-0" does not.
  if (out.find_first_of(".e") == std::string::npos)
    out += ".0";
  return "static_cast<" + std::string(type) + ">(" + out + ")";
}

} // namespace cg
