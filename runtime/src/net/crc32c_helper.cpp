// crc32c_helper.cpp - a large frame's checksum computed by two threads (net/crc32c.hpp).
//
// A sender checksums a frame's payload before the frame leaves (the checksum
// is in its header), so a 64 MiB payload costs its sender milliseconds of
// CPU before the first byte is on the wire. One helper thread per process, made
// on first need and kept for good, takes the second half of each large
// payload while the caller does the first. It serves one caller at a time: a
// second caller meanwhile checksums alone rather than wait, and so does a
// child that fork() made (the thread is its parent's). The helper's state is
// never destroyed (the thread outlives static destruction).
#include "net/crc32c.hpp"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace cg::detail {

namespace {

class Helper {
public:
  // The process's helper, started on first use; null if no thread could be made.
  static Helper* get() noexcept {
    static Helper* const helper = []() noexcept -> Helper* {
      auto* made = new (std::nothrow) Helper;
      if (made == nullptr)
        return nullptr;
      try {
        std::thread([made] { made->serve(); }).detach();
      } catch (const std::system_error&) {
        return nullptr; // leaked: it is small, and nothing may wait on it
      }
      return made;
    }();
    return helper;
  }

  // One caller at a time; false when another has it, or in a child that
  // fork() made: the thread is its parent's.
  bool try_claim() noexcept { return ::getpid() == owner_ && in_use_.try_lock(); }
  void release() noexcept { in_use_.unlock(); }

  // The claiming caller's: the checksum of `bytes` at `data`, from 0, on
  // the helper thread; collected by finish().
  void start(const void* data, std::size_t bytes) noexcept {
    {
      const std::lock_guard lock(mutex_);
      data_ = data;
      bytes_ = bytes;
      state_ = State::asked;
    }
    changed_.notify_all();
  }
  std::uint32_t finish() noexcept {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return state_ == State::done; });
    state_ = State::idle;
    return result_;
  }

private:
  enum class State { idle, asked, done };

  [[noreturn]] void serve() noexcept {
    for (;;) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return state_ == State::asked; });
      const void* data = data_;
      const std::size_t bytes = bytes_;
      lock.unlock();
      const std::uint32_t crc = crc32c(0, data, bytes);
      lock.lock();
      result_ = crc;
      state_ = State::done;
      lock.unlock();
      changed_.notify_all();
    }
  }

  const pid_t owner_ = ::getpid();
  std::mutex in_use_;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::idle;
  const void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint32_t result_ = 0;
};

} // namespace

std::uint32_t crc32c_parallel(std::uint32_t crc, const void* data, std::size_t bytes) noexcept {
  Helper* helper = bytes >= crc32c_split_bytes ? Helper::get() : nullptr;
  if (helper == nullptr || !helper->try_claim())
    return crc32c(crc, data, bytes);
  const std::size_t first = bytes / 2;
  helper->start(static_cast<const unsigned char*>(data) + first, bytes - first);
  const std::uint32_t crc_first = crc32c(crc, data, first);
  const std::uint32_t crc_second = helper->finish();
  helper->release();
  return crc32c_combine(crc_first, crc_second, bytes - first);
}

} // namespace cg::detail
