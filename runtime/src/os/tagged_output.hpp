// os/tagged_output.hpp - actor processes' standard output and error, line by
// line, onto the driver's own, each line tagged with who said it.
//
// Actors that share the driver's terminal interleave mid-line and never say
// who is speaking. As `mpirun --tag-output` and Ray's "(Actor pid=N)" do, the
// driver gives each child two pipes as its descriptors 1 and 2 and writes what
// comes out of them to its own 1 and 2, a whole line at a time, each line
// prefixed "(<tag>) ": one write() per line, so lines of different actors
// never mix. One thread serves every pipe; a full terminal holds up the
// actors, as it did when they wrote to it themselves, and never the driver's
// other threads.
#pragma once

#include "support/deadline.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cg::detail {

class TaggedOutput {
public:
  // A line longer than this is written in pieces of this size, each tagged.
  static constexpr std::size_t max_line = 16 * 1024;

  TaggedOutput() = default;
  TaggedOutput(const TaggedOutput&) = delete;
  TaggedOutput& operator=(const TaggedOutput&) = delete;
  ~TaggedOutput(); // finish(now): what the pipes hold already is still written

  // The pipes of the next child: their write ends, to become its standard
  // output and error (ChildProcess::SpawnOptions). Then either adopt() once
  // the child runs, or abandon() if it could not be started. Throws
  // std::system_error if the pipes cannot be made.
  struct WriteEnds {
    int output = -1;
    int error = -1;
  };
  WriteEnds open_pipes();
  // The child of the last open_pipes() runs: its lines are tagged `tag`. Our
  // copies of the write ends are closed, so the pipes end when it does.
  // Returns the child's number for last_words(): 0, 1, ... in adoption order.
  // A child adopted after start() (an actor restarted by the monitor thread)
  // is relayed from then on.
  std::size_t adopt(const std::string& tag);
  void abandon() noexcept;

  // The last line child `child` wrote to its standard error (at most 512
  // bytes of it), once that has ended or `deadline` passed: what a child
  // that died said last (a remote host's ssh, an actor process that failed
  // before it could say so in the segment). "" if it said nothing.
  std::string last_words(std::size_t child, Clock::time_point deadline);

  // Starts relaying the children adopted so far, and any adopted later until
  // finish().
  void start();
  // Relays until every child's pipes have ended or `deadline` passes (a
  // grandchild may hold them open), writes each unfinished last line with a
  // newline, closes the pipes and stops. Call once the children have exited.
  void finish(Clock::time_point deadline) noexcept;

private:
  struct Stream {
    int fd = -1;     // the read end, non-blocking
    int target = 1;  // our descriptor it goes to: 1 or 2
    std::string tag; // "(a pid=12) "
    std::string pending;
    std::size_t child = 0;
  };
  // What a child said last on its standard error, and whether that ended.
  struct LastWords {
    std::string line;
    bool ended = false;
  };
  void said(const Stream& stream, std::string_view line);
  void ended(const Stream& stream);
  void serve() noexcept;
  // Reads what `stream` holds now and writes each finished line; false once
  // it has ended (and then it is closed, its last words written).
  bool drain(Stream& stream) noexcept;
  void write_line(const Stream& stream, std::string_view line) noexcept;
  void close_all() noexcept;

  // A deque: the relaying thread holds pointers to its streams while adopt()
  // appends to it (under streams_mutex_).
  std::deque<Stream> streams_;
  std::mutex streams_mutex_;
  WriteEnds opened_; // of the child being spawned
  int opened_read_[2] = {-1, -1};
  int wake_ = -1; // an eventfd: finish() was called
  std::atomic<Clock::rep> deadline_{0};
  bool broken_[3] = {}; // a target that failed (closed, full disk): dropped
  std::thread thread_;
  std::mutex mutex_; // guards last_words_
  std::condition_variable changed_;
  std::vector<LastWords> last_words_; // per child
};

} // namespace cg::detail
