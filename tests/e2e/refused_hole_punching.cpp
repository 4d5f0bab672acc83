// refused_hole_punching.cpp - a preloaded fallocate() that refuses to punch
// holes, as a file system without them does (EOPNOTSUPP).
//
// Loaded into e2e_tests (LD_PRELOAD, and so into the actor processes it
// starts), it keeps every large value's pages where the runtime would give
// them back once read: the memory checks of memory_peak_test.cpp must then
// fail (tests/e2e/CMakeLists.txt), which shows that they can.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>

#include <cerrno>

namespace {

using Fallocate = int (*)(int, int, off_t, off_t);

int refuse_holes(const char* name, int fd, int mode, off_t offset, off_t len) {
  if ((mode & FALLOC_FL_PUNCH_HOLE) != 0) {
    errno = EOPNOTSUPP;
    return -1;
  }
  const auto real = reinterpret_cast<Fallocate>(::dlsym(RTLD_NEXT, name));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(fd, mode, offset, len);
}

} // namespace

extern "C" int fallocate(int fd, int mode, off_t offset, off_t len) {
  return refuse_holes("fallocate", fd, mode, offset, len);
}

extern "C" int fallocate64(int fd, int mode, off_t offset, off_t len) {
  return refuse_holes("fallocate64", fd, mode, offset, len);
}
