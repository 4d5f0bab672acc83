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
  // In the build tree <prefix>/include links to the sources' runtime/include:
  // the path the headers are read through is theirs, as a -I names them.
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(dir, real))
    return std::string(real);
  return std::string(dir); // missing: the parse says which header it lacks
}

} // namespace

const std::string& runtimeIncludeDir() {
  static const std::string dir = findRuntimeIncludeDir();
  return dir;
}

} // namespace cg::frontend
