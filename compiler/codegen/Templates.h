//===- Templates.h - The embedded codegen templates -------------*- C++ -*-===//
#pragma once

#include <string_view>

namespace cg::codegen {

/// The text of codegen-templates/<name>, embedded at build time.
std::string_view templateText(std::string_view name);

} // namespace cg::codegen
