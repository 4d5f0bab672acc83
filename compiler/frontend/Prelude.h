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
// parallel never read a half-written prelude. An entry records the hash of
// its PCH's bytes, checked before each use: a damaged PCH is rebuilt, never
// handed to Clang. The directory is used only when this user owns it and no
// one else can write it. The frontend treats any failure with a prelude as a
// reason to parse without one (Frontend.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

struct stat;

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
/// arguments without the source), from `cacheDir` or built into it now
/// (creating it with mode 0700); nullopt when it can be neither found nor
/// built, or `cacheDir` is not one only this user can write.
std::optional<Prelude> findOrBuildPrelude(const std::string& cacheDir,
                                          const std::vector<std::string>& args,
                                          const std::string& source);

/// Why a prelude cache directory with `status` (from lstat) must not be
/// used by `user`: a symbolic link, not a directory, another user's, or
/// writable by others (whoever can write it can replace a PCH). nullopt when
/// it may be used.
std::optional<std::string> cacheDirectoryProblem(const struct stat& status, uid_t user);

/// The same for the directory `dir` and this process's effective user; a
/// directory that cannot be examined (one that does not exist) is a problem.
std::optional<std::string> cacheDirectoryProblem(const std::string& dir);

/// This user's own prelude cache: $XDG_CACHE_HOME/cgc, else ~/.cache/cgc;
/// empty when neither is set to an absolute path.
std::string userCacheDirectory();

/// Drops `prelude` from its cache (when a parse with it failed where one
/// without it did not), so that the next run builds it again.
void forgetPrelude(const Prelude& prelude);

/// The files `sm` read, as canonical paths where they exist (build tools
/// compare dependencies textually).
std::vector<std::string> filesRead(const clang::SourceManager& sm);

} // namespace cg::frontend
