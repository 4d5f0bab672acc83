//===- Prelude.h - <cg/cg.hpp>, precompiled once and reused ------*- C++ -*-===//
//
// Most of a parse of a graph source is Clang reading <cg/cg.hpp> and the
// standard headers it includes, the same for every source built with the
// same flags. The prelude is that header precompiled (a PCH), cached in a
// directory beside cgc's output and loaded with -include-pch in place of
// parsing it again.
//
// That is the same translation unit only when <cg/cg.hpp> is the first thing
// the source reads, so a prelude is used only for a source whose first line
// of code is `#include <cg/cg.hpp>`. A cached prelude is found by a hash of
// Clang's version and every flag of the parse as the Clang driver passes it
// on (with the include directories it found); it records the size and time
// of each file it was built from and is rebuilt when one differs. Builders
// write under names of their own and publish with a rename, so cgc runs in
// parallel never read a half-written prelude. The frontend treats any
// failure with a prelude as a reason to parse without one (Frontend.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace clang {
class SourceManager;
}

namespace cg::frontend {

/// A precompiled prelude ready to load.
struct Prelude {
  std::string entry;              // the cache entry that names it
  std::string pch;                // the file for -include-pch
  std::string header;             // the header it was built from (not a dependency)
  std::vector<std::string> files; // the files it read, canonical paths
};

/// Whether the first line of code of `source` (after blank lines and
/// comments) is `#include <cg/cg.hpp>`.
bool startsWithPrelude(llvm::StringRef source);

/// The prelude for a parse of `source` with `args` (the Clang driver's
/// arguments without the source), from `cacheDir` or built into it now;
/// nullopt when it can be neither found nor built.
std::optional<Prelude> findOrBuildPrelude(const std::string& cacheDir,
                                          const std::vector<std::string>& args,
                                          const std::string& source);

/// Drops `prelude` from its cache (when a parse with it failed where one
/// without it did not), so that the next run builds it again.
void forgetPrelude(const Prelude& prelude);

/// The files `sm` read, as canonical paths where they exist (build tools
/// compare dependencies textually).
std::vector<std::string> filesRead(const clang::SourceManager& sm);

} // namespace cg::frontend
