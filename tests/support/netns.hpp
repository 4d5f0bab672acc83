// tests/support/netns.hpp - entering a test's network namespace as `ip netns
// exec` does.
//
// setns() alone moves the thread's sockets to the namespace, but /sys still
// shows the network devices of the namespace it was mounted in, and UCX lists
// devices there: it would see none of the namespace's own (and hand out
// addresses nobody can reach). So, like `ip netns exec`, the thread also gets
// a mount namespace of its own with a fresh /sys. Per thread: unshare() of
// the mount namespace copies only the calling thread's view.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cg_test {

/// Moves the calling thread into /run/netns/<name> until destroyed (or
/// forever, with stay()). ok() false and error() saying why on failure.
class NetworkNamespace {
public:
  explicit NetworkNamespace(const std::string& name) {
    home_net_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    home_mnt_ = ::open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
    const int target = ::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0 || ::setns(target, CLONE_NEWNET) != 0)
      error_ = "cannot enter network namespace " + name + ": " + std::strerror(errno);
    else if (::unshare(CLONE_NEWNS) != 0 ||
             ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
             ::umount2("/sys", MNT_DETACH) != 0 ||
             ::mount(name.c_str(), "/sys", "sysfs", 0, nullptr) != 0)
      error_ = "cannot mount /sys for network namespace " + name + ": " + std::strerror(errno);
    if (target >= 0)
      ::close(target);
  }
  ~NetworkNamespace() {
    if (home_net_ >= 0 && !stay_)
      ::setns(home_net_, CLONE_NEWNET);
    if (home_mnt_ >= 0 && !stay_)
      ::setns(home_mnt_, CLONE_NEWNS);
    if (home_net_ >= 0)
      ::close(home_net_);
    if (home_mnt_ >= 0)
      ::close(home_mnt_);
  }
  NetworkNamespace(const NetworkNamespace&) = delete;
  NetworkNamespace& operator=(const NetworkNamespace&) = delete;

  bool ok() const noexcept { return error_.empty(); }
  const std::string& error() const noexcept { return error_; }
  /// Stays in the namespace when destroyed (a process that lives there).
  void stay() noexcept { stay_ = true; }

private:
  int home_net_ = -1;
  int home_mnt_ = -1;
  bool stay_ = false;
  std::string error_;
};

} // namespace cg_test
