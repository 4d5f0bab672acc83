// actor/restart.hpp - How a restarted actor process learns where to resume, and the error it
// leaves.
//
// The one home of the restart contract between the driver (graph/restarts.cpp),
// which starts an actor's process again after it died, and the new process
// (actor/resume.cpp), which takes over the dead one's ends of its channels.
// Every channel carries one message per execution, so message n of any
// channel is execution n's: the new process brings each of its channels to
// the execution the driver names, writing in place of each output the dead
// process did not publish an error record that the driver recognises as "lost
// to the restart" (ActorDiedError, restarted() true) rather than as a task's
// failure (TaskError).
#pragma once

#include <cg/detail/channel.hpp>
#include <cg/detail/graph_spec.hpp>
#include <cg/errors.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cg::detail {

// Set only in the environment of a restarted actor process: the executions
// before this number are lost (every execution begun when the driver
// restarted it), and the text the lost executions' errors carry.
inline constexpr const char* restart_from_variable = "CG_RESTART_FROM";
inline constexpr const char* restart_note_variable = "CG_RESTART_NOTE";

// The error record a restarted actor writes for an execution it lost. Its
// method and type together are no C++ method's: a task cannot throw it.
inline constexpr const char* restart_record_method = "(restarted)";
inline constexpr const char* restart_record_type = "cg::ActorDiedError";

inline ErrorRecord restart_record(const std::string& actor, const std::string& note) {
  return {actor, restart_record_method, restart_record_type, note};
}

inline bool is_restart_record(const ErrorRecord& record) {
  return record.method == restart_record_method && record.exception_type == restart_record_type;
}

// The first execution actor `actor`'s dead process did not finish: the
// fewest messages it published on an output or released from an input, and
// at most `from` (the executions begun). The executions from there up to
// `from` are those its restart loses. The driver asks it of the channels
// as the dead process left them, and the new process resumes from it, so
// both count the same executions lost.
std::uint64_t first_unfinished(const GraphSpec& spec, std::uint32_t actor, std::uint64_t from,
                               const std::function<Channel(std::uint32_t)>& channel);

// Brings actor `actor`'s channels to execution `from` or beyond (the first
// execution not lost): for each execution before it, in order, writes the
// restart record (`note`) on every output channel whose message of that
// execution is not published, then takes and drops the message of that
// execution on every input channel that still holds it. Outputs go first:
// a peer may need them to produce the inputs. Returns the execution the
// actor's program starts at; nullopt once a channel is closed (the graph
// stops); throws ActorFailure when a channel answers otherwise.
std::optional<std::uint64_t> resume_channels(const GraphSpec& spec, std::uint32_t actor,
                                             std::uint64_t from, const std::string& note,
                                             std::uint32_t slot_bytes,
                                             const std::function<Channel(std::uint32_t)>& channel);

} // namespace cg::detail
