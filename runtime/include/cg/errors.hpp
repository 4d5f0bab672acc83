// cg/errors.hpp - The exceptions the driver API throws.
//
// Inside the runtime, failures are status values; they become one of these
// only at the user-facing driver calls (launch, execute, get, teardown).
//
//   try { graph.execute("x").get(); }
//   catch (const cg::TaskError& e) { e.actor(); e.method(); e.message(); }
//   catch (const cg::Error& e) { /* any other failure of the graph */ }
#pragma once

#include <stdexcept>
#include <string>

namespace cg {

/// What an actor method's exception becomes: it flows downstream in place of
/// the method's result, and get() rethrows it as TaskError.
struct ErrorRecord {
  std::string actor;          // actor instance name, e.g. "b"
  std::string method;         // method name, e.g. "echo"
  std::string exception_type; // e.g. "std::runtime_error"
  std::string message;        // the exception's what()
};

/// Base of every error the driver API throws.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An actor method threw; the graph stays usable for later executions.
class TaskError : public Error {
public:
  explicit TaskError(ErrorRecord record);
  const std::string& actor() const noexcept { return record_.actor; }
  const std::string& method() const noexcept { return record_.method; }
  const std::string& exception_type() const noexcept { return record_.exception_type; }
  const std::string& message() const noexcept { return record_.message; }

private:
  ErrorRecord record_;
};

/// An actor process exited or was killed. Without restarts left
/// (LaunchOptions::max_restarts) the graph cannot execute any more; with
/// them, the actor was restarted (restarted() is true): only the executions
/// it had taken, or that were queued behind it, fail so.
class ActorDiedError : public Error {
public:
  ActorDiedError(std::string actor, const std::string& what, bool restarted = false);
  const std::string& actor() const noexcept { return actor_; }
  /// True when the actor was restarted and the graph executes on.
  bool restarted() const noexcept { return restarted_; }

private:
  std::string actor_;
  bool restarted_ = false;
};

/// The graph was torn down (or a channel closed) while a call needed it.
class ChannelClosedError : public Error {
public:
  using Error::Error;
};

/// A channel delivered a lost, reordered or corrupted message (e.g. a TCP
/// frame whose sequence number or checksum is wrong); the message names the
/// channel and the fault. The graph cannot execute any more.
class ChannelError : public Error {
public:
  using Error::Error;
};

/// A submit or get waited longer than its timeout.
class TimeoutError : public Error {
public:
  using Error::Error;
};

/// execute() was called with max_in_flight executions not yet collected.
class CapacityExceeded : public Error {
public:
  using Error::Error;
};

/// The actor processes could not be started.
class LaunchError : public Error {
public:
  using Error::Error;
};

} // namespace cg
