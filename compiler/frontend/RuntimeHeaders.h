//===- RuntimeHeaders.h - Where cgc finds the runtime's headers -----------===//
//
// Graph sources include <cg/cg.hpp>. cgc always makes those headers
// reachable, after the target's own include paths: <prefix>/include beside
// the executable's <prefix>/bin, so a moved install still works. Nothing
// names the tree cgc was built from (an installed cgc would otherwise carry
// it): the build tree makes the same layout, a link from <prefix>/include to
// the sources' runtime/include beside each program that parses graphs
// (compiler/tool/CMakeLists.txt, tests/unit/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace cg::frontend {

/// The directory holding cg/cg.hpp that graph sources are parsed with.
const std::string& runtimeIncludeDir();

} // namespace cg::frontend
