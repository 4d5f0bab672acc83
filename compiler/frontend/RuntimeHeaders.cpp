//===- RuntimeHeaders.cpp - Where cgc finds the runtime's headers ---------===//
#include "frontend/RuntimeHeaders.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace cg::frontend {

namespace {

std::string findRuntimeIncludeDir() {
  // /proc/self/exe: the executable's real path, wherever it was started from.
  static int anchor = 0;
  llvm::SmallString<256> dir(llvm::sys::fs::getMainExecutable(nullptr, &anchor));
  llvm::sys::path::remove_filename(dir); // <prefix>/bin
  llvm::sys::path::remove_filename(dir); // <prefix>
  llvm::sys::path::append(dir, "include");
  llvm::SmallString<256> header(dir);
  llvm::sys::path::append(header, "cg", "cg.hpp");
  if (!dir.empty() && llvm::sys::fs::exists(header))
    return std::string(dir);
  return CG_RUNTIME_INCLUDE_DIR; // the build tree's
}

} // namespace

const std::string& runtimeIncludeDir() {
  static const std::string dir = findRuntimeIncludeDir();
  return dir;
}

} // namespace cg::frontend
