//===- InputFile.cpp - Reading a file the user named, bounded ------------===//
//
// One open, without blocking, then fstat on that descriptor: the file read
// is the file checked, whatever the path names a moment later.
//
//===----------------------------------------------------------------------===//
#include "support/InputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cg::support {
namespace {

std::string kindOf(mode_t mode) {
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a pipe";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a file";
}

/// A descriptor open on `path` if it is a regular file within `maxBytes`
/// (the caller closes it), else the reason.
std::variant<int, std::string> openInput(const std::string& path, uint64_t maxBytes) {
  // O_NONBLOCK: opening a FIFO without a writer would wait for one.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == EISDIR)
      return path + " is a directory";
    return "cannot read " + path + ": " + std::strerror(errno);
  }
  struct stat status;
  std::string problem;
  if (fstat(fd, &status) != 0)
    problem = "cannot read " + path + ": " + std::strerror(errno);
  else if (S_ISDIR(status.st_mode))
    problem = path + " is a directory";
  else if (!S_ISREG(status.st_mode))
    problem = path + " is not a regular file (" + kindOf(status.st_mode) + ")";
  else if (static_cast<uint64_t>(status.st_size) > maxBytes)
    problem = path + " is " + std::to_string(status.st_size) + " bytes, more than the " +
              std::to_string(maxBytes >> 20) + " MiB cgc reads";
  if (!problem.empty()) {
    close(fd);
    return problem;
  }
  return fd;
}

} // namespace

std::optional<std::string> inputFileProblem(const std::string& path, uint64_t maxBytes) {
  std::variant<int, std::string> opened = openInput(path, maxBytes);
  if (auto* problem = std::get_if<std::string>(&opened))
    return *problem;
  close(std::get<int>(opened));
  return std::nullopt;
}

std::variant<std::string, std::string> readInputFile(const std::string& path, uint64_t maxBytes) {
  std::variant<int, std::string> opened = openInput(path, maxBytes);
  if (auto* problem = std::get_if<std::string>(&opened))
    return std::variant<std::string, std::string>(std::in_place_index<1>, *problem);
  int fd = std::get<int>(opened);
  std::string text;
  char buffer[65536];
  // The file may grow after fstat: the bound holds for what is read too.
  while (text.size() <= maxBytes) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string problem = "cannot read " + path + ": " + std::strerror(errno);
      close(fd);
      return std::variant<std::string, std::string>(std::in_place_index<1>, problem);
    }
    if (n == 0)
      break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (text.size() > maxBytes)
    return std::variant<std::string, std::string>(
        std::in_place_index<1>,
        path + " is more than the " + std::to_string(maxBytes >> 20) + " MiB cgc reads");
  return std::variant<std::string, std::string>(std::in_place_index<0>, std::move(text));
}

} // namespace cg::support
