//===- InputFile.h - Reading a file the user named, bounded -------*- C++ -*-===//
//
// cgc reads files the user names on its command line (the graph source,
// --costs). A name can be anything: /dev/zero never ends, a FIFO without a
// writer blocks an open or a read for good, a directory has no text. So such
// a file is opened without blocking and must be a regular file under a size
// bound before a byte of it is read; otherwise the user gets one line saying
// what the path is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace cg::support {

/// The largest input cgc reads: far beyond any graph source or cost profile
/// (the largest example is a few KiB), small enough to hold in memory.
constexpr uint64_t kMaxInputBytes = uint64_t{64} << 20;

/// Why `path` cannot be read as an input ("<path> is a directory", "<path>
/// is not a regular file (a character device)", "<path> is 70000000 bytes,
/// more than ..."), or nullopt when it can. Opens the file without blocking.
std::optional<std::string> inputFileProblem(const std::string& path,
                                            uint64_t maxBytes = kMaxInputBytes);

/// The contents of `path`, or the reason (as inputFileProblem words it, or
/// the system's for a failed read) it cannot be read.
std::variant<std::string, std::string> readInputFile(const std::string& path,
                                                     uint64_t maxBytes = kMaxInputBytes);

} // namespace cg::support
