// captured_output.hpp - what this process (and children writing to the same
// descriptor) writes to descriptor 1 or 2, for one scope.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace cg_test {

/// Points descriptor `fd` (1 or 2) at an anonymous file until text() or the
/// end of the scope, then puts it back. stdio's buffers are flushed on both
/// sides, so what printf() wrote lands where it was meant to.
class CapturedOutput {
public:
  explicit CapturedOutput(int fd) : fd_(fd) {
    flush();
    saved_ = ::dup(fd);
    file_ = ::memfd_create("cg-test-output", MFD_CLOEXEC);
    ::dup2(file_, fd);
  }
  ~CapturedOutput() {
    restore();
    ::close(file_);
  }
  CapturedOutput(const CapturedOutput&) = delete;
  CapturedOutput& operator=(const CapturedOutput&) = delete;

  /// Everything written to the descriptor since construction; restores it.
  std::string text() {
    restore();
    std::string out;
    char buffer[4096];
    for (off_t at = 0;;) {
      const ssize_t n = ::pread(file_, buffer, sizeof buffer, at);
      if (n <= 0)
        break;
      out.append(buffer, static_cast<std::size_t>(n));
      at += n;
    }
    return out;
  }

private:
  void flush() { std::fflush(fd_ == 1 ? stdout : stderr); }
  void restore() {
    if (saved_ < 0)
      return;
    flush();
    ::dup2(saved_, fd_);
    ::close(saved_);
    saved_ = -1;
  }

  int fd_;
  int saved_ = -1;
  int file_ = -1;
};

/// `text` split at its newlines (a last line without one counts too).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace cg_test
