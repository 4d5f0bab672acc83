//===- FormatCode.h - clang-format for generated sources ---------*- C++ -*-===//
//
// Generated code is read by users, so it is formatted like hand-written code
// (LLVM style, 100 columns) with clang-format's library, part of libclang-cpp.
// What codegen can lay out itself (Layout.h) skips it: the formatter is slow
// on the large tables of big graphs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace cg::codegen {

/// `code` formatted as C++; returned unchanged if clang-format cannot parse it.
std::string formatCode(const std::string& code, const std::string& fileName);

} // namespace cg::codegen
