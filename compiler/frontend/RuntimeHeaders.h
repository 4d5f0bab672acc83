//===- RuntimeHeaders.h - Where cgc finds the runtime's headers -----------===//
//
// Graph sources include <cg/cg.hpp>. cgc always makes those headers
// reachable, after the target's own include paths: an installed cgc
// (<prefix>/bin/cgc) uses <prefix>/include, so a moved install still
// works; a cgc in its build tree uses the source tree's runtime/include.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace cg::frontend {

/// The directory holding cg/cg.hpp that graph sources are parsed with.
const std::string& runtimeIncludeDir();

} // namespace cg::frontend
