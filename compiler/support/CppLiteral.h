//===- CppLiteral.h - Text as a C++ string literal ----------------*- C++ -*-===//
//
// Generated code spells strings the graph source holds (constants, names,
// source locations) as literals, and floating-point constants as expressions
// that give the same value back; one spelling for each.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace cg {

/// A C++ string literal spelling `text`, quotes included: quotes and
/// backslashes escaped, newlines and tabs as \n and \t, other control
/// characters in octal.
std::string cppStringLiteral(std::string_view text);

/// A C++ expression of floating type `type` ("double", "float", ...) whose
/// value is `value`, read back exactly: NaN and the infinities through
/// std::numeric_limits (printf's "nan" and "inf" name nothing in C++), and
/// -0.0 with its sign (an integer "-0" is zero, positive).
std::string cppFloatingLiteral(double value, std::string_view type);

} // namespace cg
