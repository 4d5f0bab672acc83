//===- Prelude.cpp - <cg/cg.hpp>, precompiled once and reused -------------===//
//
// A cache entry is three files in the cache directory:
//   <key>.prelude            what the entry is: its header, its PCH with the
//                            hash and size of its bytes, and the size and
//                            time of every file the PCH read
//   <key>-<unique>.hpp       the header: `#include <cg/cg.hpp>`
//   <key>-<unique>.pch       the header, precompiled
// A builder creates a header under a name no one else has, precompiles it
// beside it and then renames a new <key>.prelude over the old one: a reader
// sees a whole old entry or a whole new one. The old entry's files are then
// removed; a cgc still about to load them fails to and parses without.
// Files of builders that lost the race are removed once ten minutes old.
//
// Clang trusts a PCH it loads: damaged bytes crash it rather than fail the
// load. So an entry names the hash of its PCH, and a PCH whose bytes differ
// is built again before Clang sees it. And the cache directory must be one
// only this user can write (see cacheDirectoryProblem): another user's PCH
// is code this user's cgc would run.
//
//===----------------------------------------------------------------------===//
#include "frontend/Prelude.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/Utils.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace cg::frontend {
namespace {

constexpr llvm::StringLiteral kPreludeText = "#include <cg/cg.hpp>\n";
constexpr llvm::StringLiteral kEntryFormat = "cgc-prelude 2";

/// A file as the entry saw it: a prelude is stale once one differs.
struct Stamp {
  std::string path;
  int64_t time = 0; // nanoseconds since the epoch
  uint64_t size = 0;
};

std::optional<Stamp> stampOf(const std::string& path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status) || !llvm::sys::fs::is_regular_file(status))
    return std::nullopt;
  return Stamp{path,
               static_cast<int64_t>(status.getLastModificationTime().time_since_epoch().count()),
               status.getSize()};
}

struct Entry {
  std::string header, pch;
  std::string pchHash; // of the PCH's bytes, as hashOf writes it
  std::vector<Stamp> files;
};

/// The hash and size of a file's bytes, "<xxh64 in hex> <size>"; nullopt
/// when it cannot be read.
std::optional<std::string> hashOf(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  llvm::StringRef bytes = (*buffer)->getBuffer();
  std::string out;
  llvm::raw_string_ostream(out) << llvm::format_hex_no_prefix(llvm::xxHash64(bytes), 16) << " "
                                << bytes.size();
  return out;
}

std::optional<Entry> readEntry(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty() || lines.front() != kEntryFormat)
    return std::nullopt;
  Entry entry;
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front()) {
    auto [field, rest] = line.split(' ');
    if (field == "header") {
      entry.header = rest.str();
    } else if (field == "pch") {
      entry.pch = rest.str();
    } else if (field == "pch-hash") {
      entry.pchHash = rest.str();
    } else if (field == "file") {
      auto [time, afterTime] = rest.split(' ');
      auto [size, file] = afterTime.split(' ');
      Stamp stamp{file.str(), 0, 0};
      if (time.getAsInteger(10, stamp.time) || size.getAsInteger(10, stamp.size) || file.empty())
        return std::nullopt;
      entry.files.push_back(std::move(stamp));
    } else {
      return std::nullopt;
    }
  }
  if (entry.header.empty() || entry.pch.empty() || entry.pchHash.empty())
    return std::nullopt;
  return entry;
}

/// Whether every file the entry was built from is as it was then, and its
/// PCH has the bytes it was written with.
bool isFresh(const Entry& entry) {
  if (!llvm::sys::fs::exists(entry.header) || !llvm::sys::fs::exists(entry.pch))
    return false;
  for (const Stamp& recorded : entry.files) {
    std::optional<Stamp> now = stampOf(recorded.path);
    if (!now || now->time != recorded.time || now->size != recorded.size)
      return false;
  }
  return hashOf(entry.pch) == entry.pchHash;
}

Prelude preludeOf(const std::string& path, const Entry& entry) {
  Prelude prelude{path, entry.pch, entry.header, {}};
  for (const Stamp& file : entry.files)
    prelude.files.push_back(file.path);
  return prelude;
}

/// Precompiles the header and keeps the files Clang read for it.
class BuildAction : public clang::GeneratePCHAction {
public:
  explicit BuildAction(std::vector<std::string>& files) : files_(files) {}

  void EndSourceFileAction() override {
    files_ = filesRead(getCompilerInstance().getSourceManager());
    clang::GeneratePCHAction::EndSourceFileAction();
  }

private:
  std::vector<std::string>& files_;
};

bool writeFile(const std::string& path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return false;
  out << text;
  out.close();
  return !out.has_error();
}

void removeEntryFiles(const Entry& entry) {
  llvm::sys::fs::remove(entry.pch);
  llvm::sys::fs::remove(entry.header);
}

/// Removes the files of builders of `key` that lost a race to publish
/// (their entry was renamed over before they read it as the old one), once
/// they are old enough that no builder can still be writing them.
void removeLeftovers(const std::string& cacheDir, const std::string& key, const Entry& current) {
  std::error_code ec;
  auto now = std::chrono::system_clock::now();
  for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.starts_with(key + "-") || it->path() == current.pch || it->path() == current.header)
      continue;
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(it->path(), status) &&
        now - status.getLastModificationTime() > std::chrono::minutes(10))
      llvm::sys::fs::remove(it->path());
  }
}

std::optional<Prelude> build(const std::string& cacheDir, const std::string& key,
                             const std::vector<std::string>& args) {
  // The header, under a name of its own; the PCH and the entry's temporary
  // name follow from it.
  llvm::SmallString<256> header;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(cacheDir + "/" + key + "-%%%%%%%%%%%%.hpp", fd, header))
    return std::nullopt;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << kPreludeText;
    out.close();
    if (out.has_error()) {
      llvm::sys::fs::remove(header);
      return std::nullopt;
    }
  }
  llvm::SmallString<256> pch(header);
  llvm::sys::path::replace_extension(pch, "pch");
  Entry entry{header.str().str(), pch.str().str(), {}};

  std::vector<std::string> buildArgs = args;
  buildArgs.insert(buildArgs.end(), {"-x", "c++-header", entry.header, "-o", entry.pch});
  std::vector<std::string> files;
  auto fileManager = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(),
                                                                   llvm::vfs::getRealFileSystem());
  clang::tooling::ToolInvocation invocation(buildArgs, std::make_unique<BuildAction>(files),
                                            fileManager.get());
  clang::IgnoringDiagConsumer quiet;
  invocation.setDiagnosticConsumer(&quiet);
  bool built = invocation.run() && llvm::sys::fs::exists(entry.pch) && !files.empty();
  std::optional<std::string> pchHash = built ? hashOf(entry.pch) : std::nullopt;
  built = built && pchHash;

  llvm::SmallString<256> canonicalHeader;
  if (llvm::sys::fs::real_path(entry.header, canonicalHeader))
    canonicalHeader = entry.header;
  std::string text = kEntryFormat.str() + "\nheader " + entry.header + "\npch " + entry.pch + "\n";
  if (pchHash) {
    entry.pchHash = *pchHash;
    text += "pch-hash " + *pchHash + "\n";
  }
  for (const std::string& file : files) {
    if (file == canonicalHeader)
      continue;
    std::optional<Stamp> stamp = stampOf(file);
    // A file that cannot be stamped (or named on one line) cannot be checked.
    built = built && stamp && file.find('\n') == std::string::npos;
    if (!built)
      break;
    text += "file " + std::to_string(stamp->time) + " " + std::to_string(stamp->size) + " " + file +
            "\n";
    entry.files.push_back(*stamp);
  }
  std::string entryPath = cacheDir + "/" + key + ".prelude";
  std::string temporary = entry.header + ".prelude";
  std::optional<Entry> old = readEntry(entryPath);
  if (!built || !writeFile(temporary, text) || llvm::sys::fs::rename(temporary, entryPath)) {
    llvm::sys::fs::remove(temporary);
    removeEntryFiles(entry);
    return std::nullopt;
  }
  if (old && old->pch != entry.pch)
    removeEntryFiles(*old);
  removeLeftovers(cacheDir, key, entry);
  return preludeOf(entryPath, entry);
}

/// Creates `dir` (and its parents) if need be, itself readable by this user
/// alone, and says whether it is a directory only this user can write.
bool makePrivateDirectory(const std::string& dir) {
  llvm::SmallString<256> parent(dir);
  llvm::sys::path::remove_filename(parent);
  if (!parent.empty() && llvm::sys::fs::create_directories(parent))
    return false;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return false;
  return !cacheDirectoryProblem(dir);
}

} // namespace

std::optional<std::string> cacheDirectoryProblem(const struct stat& status, uid_t user) {
  if (S_ISLNK(status.st_mode))
    return "is a symbolic link";
  if (!S_ISDIR(status.st_mode))
    return "is not a directory";
  if (status.st_uid != user)
    return "belongs to user " + std::to_string(status.st_uid) + ", not to this user (" +
           std::to_string(user) + ")";
  if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(status.st_mode & 07777));
    return std::string("can be written by other users (mode ") + mode + ")";
  }
  return std::nullopt;
}

std::optional<std::string> cacheDirectoryProblem(const std::string& dir) {
  struct stat status;
  if (lstat(dir.c_str(), &status) != 0)
    return std::string(std::strerror(errno));
  return cacheDirectoryProblem(status, geteuid());
}

std::string userCacheDirectory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
    return std::string(xdg) + "/cgc";
  if (const char* home = std::getenv("HOME"); home && home[0] == '/')
    return std::string(home) + "/.cache/cgc";
  return "";
}

bool startsWithPrelude(llvm::StringRef source) {
  while (true) {
    source = source.ltrim(" \t\r\n\f\v");
    if (source.consume_front("//")) {
      source = source.drop_until([](char c) { return c == '\n'; });
    } else if (source.consume_front("/*")) {
      size_t end = source.find("*/");
      if (end == llvm::StringRef::npos)
        return false;
      source = source.drop_front(end + 2);
    } else {
      break;
    }
  }
  if (!source.consume_front("#"))
    return false;
  source = source.ltrim(" \t");
  if (!source.consume_front("include"))
    return false;
  source = source.ltrim(" \t");
  if (!source.consume_front("<cg/cg.hpp>"))
    return false;
  source = source.ltrim(" \t");
  return source.empty() || source.starts_with("\n") || source.starts_with("\r\n") ||
         source.starts_with("//");
}

std::optional<Prelude> findOrBuildPrelude(const std::string& cacheDir,
                                          const std::vector<std::string>& args,
                                          const std::string& source) {
  // The key is the frontend's arguments as the driver makes them of `args`
  // for `source`, less the source's name: they name the include directories
  // it found (the GCC installation, CPATH), which `args` do not.
  std::vector<std::string> cc1;
  {
    std::vector<const char*> argv;
    for (const std::string& arg : args)
      argv.push_back(arg.c_str());
    argv.insert(argv.end(), {"-fsyntax-only", source.c_str()});
    clang::IgnoringDiagConsumer quiet;
    clang::CreateInvocationOptions options;
    options.Diags = clang::CompilerInstance::createDiagnostics(new clang::DiagnosticOptions, &quiet,
                                                               /*ShouldOwnClient=*/false);
    options.CC1Args = &cc1;
    if (!clang::createInvocation(argv, options))
      return std::nullopt;
  }
  std::string identity =
      kEntryFormat.str() + "\n" + clang::getClangFullVersion() + "\n" + kPreludeText.str();
  for (size_t i = 0; i < cc1.size(); ++i) {
    if (cc1[i] == source)
      continue;
    if (cc1[i] == "-main-file-name") {
      ++i;
      continue;
    }
    identity += cc1[i] + '\0';
  }
  llvm::SmallString<16> key;
  llvm::raw_svector_ostream(key) << llvm::format_hex_no_prefix(llvm::xxHash64(identity), 16);

  if (!makePrivateDirectory(cacheDir))
    return std::nullopt;
  std::string path = cacheDir + "/" + key.str().str() + ".prelude";
  if (std::optional<Entry> entry = readEntry(path); entry && isFresh(*entry))
    return preludeOf(path, *entry);
  return build(cacheDir, key.str().str(), args);
}

void forgetPrelude(const Prelude& prelude) {
  // Unless another run has replaced the entry meanwhile.
  std::optional<Entry> entry = readEntry(prelude.entry);
  if (!entry || entry->pch != prelude.pch)
    return;
  llvm::sys::fs::remove(prelude.entry);
  removeEntryFiles(*entry);
}

std::vector<std::string> filesRead(const clang::SourceManager& sm) {
  std::vector<std::string> files;
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
    llvm::SmallString<256> path;
    if (llvm::sys::fs::real_path(it->first->getName(), path))
      path = it->first->getName();
    files.push_back(path.str().str());
  }
  return files;
}

} // namespace cg::frontend
