//===- CppLiteral.h - Text as a C++ string literal ----------------*- C++ -*-===//
//
// Generated code spells strings the graph source holds (constants, names,
// source locations) as literals; one spelling for all of them.
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

} // namespace cg
