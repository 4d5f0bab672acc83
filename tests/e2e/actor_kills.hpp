// actor_kills.hpp - how the end-to-end tests kill an actor, in either mode,
// and the switch that makes every such kill one the runtime cannot see.
//
// In processes mode an actor is killed with SIGKILL. A thread cannot be
// killed: in threads mode the actor that reads the graph's input is ended the
// one way an actor thread ends by itself, by a broken channel (its next read
// finds impossible slots and throws detail::ActorFailure; the driver reports
// ActorDiedError, "(a thread) failed"). Only that actor: its input channel is
// written by the test's own thread alone, so nothing rewrites the broken slots
// before the actor reads them, as long as the test waits for the report
// (channel_broken_and_reported()) before it executes again.
//
// CG_TEST_KILL_SIGNAL=SIGSTOP turns every kill into a death nobody notices:
// the process is stopped instead (alive and silent), the thread's channel is
// left whole. Every check that a kill is reported must then fail; the ctest
// entries e2e.*FailWhenKillsGoUnnoticed (CMakeLists.txt) run them so.
#pragma once

#include "../support/runtime_memfds.hpp"
#include <cg/detail/graph_spec.hpp>
#include <cg/driver.hpp>

#include "actor/segment.hpp"
#include "shm/channel_layout.hpp"
#include "shm/wait.hpp"

#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

namespace cg_test {

/// The signal a kill sends: SIGKILL, or SIGSTOP when CG_TEST_KILL_SIGNAL says
/// so (an undetected death). Any other value is a mistake, said at once.
inline int kill_signal() {
  const char* chosen = std::getenv("CG_TEST_KILL_SIGNAL");
  if (chosen == nullptr || std::string(chosen).empty() || std::string(chosen) == "SIGKILL")
    return SIGKILL;
  if (std::string(chosen) == "SIGSTOP")
    return SIGSTOP;
  throw std::invalid_argument("CG_TEST_KILL_SIGNAL is '" + std::string(chosen) +
                              "': it must be SIGKILL or SIGSTOP");
}

/// True when kills go unnoticed (CG_TEST_KILL_SIGNAL=SIGSTOP).
inline bool kills_go_unnoticed() { return kill_signal() == SIGSTOP; }

/// Kills actor process `pid` (SIGKILL; SIGSTOP under the switch).
inline void kill_actor_process(int pid) { ::kill(pid, kill_signal()); }

/// Threads mode: ends the actor reading input #0 of `spec`'s graph (launched
/// with `options`) by breaking that channel, and waits (up to `wait`) until
/// the driver has reported it (every channel closed, which the driver does
/// only after recording the failure). Returns "" once it has, else what went
/// wrong. Under the switch the channel is left whole: nothing is reported.
inline std::string break_input_reader(const cg::detail::GraphSpec& spec,
                                      const cg::LaunchOptions& options,
                                      std::chrono::milliseconds wait) {
  namespace d = cg::detail;
  const std::span<std::byte> segment = graph_segment_mapping(spec.name);
  if (segment.empty())
    return "no mapping of graph '" + std::string(spec.name) + "' in this process";
  const std::uint32_t channel = spec.input_channels[0];
  if (spec.channels[channel].reader_actors.size() != 1)
    return "input #0 of graph '" + std::string(spec.name) + "' has more than one reader";
  const auto* launched = reinterpret_cast<const d::SegmentHeader*>(segment.data());
  if (launched->geometry.max_in_flight != options.max_in_flight)
    return "the segment of graph '" + std::string(spec.name) + "' holds " +
           std::to_string(launched->geometry.max_in_flight) + " executions, not the " +
           std::to_string(options.max_in_flight) + " it was launched with";
  const d::SegmentLayout layout = d::segment_layout(spec, launched->geometry);
  auto* header =
      reinterpret_cast<d::ChannelHeader*>(segment.data() + layout.channel_offsets.at(channel));
  if (!kills_go_unnoticed()) {
    auto slot = [&](std::uint64_t message) {
      return d::slot_header(header, header->readers, header->slot_stride,
                            static_cast<std::uint32_t>(message % header->max_in_flight));
    };
    // Messages published and not yet released get a kind no writer writes;
    // the slot of the next one a sequence from the future. Whichever the
    // actor reaches first is corrupt, and nobody publishes in between.
    const std::uint64_t consumed = d::reader_state(header, 0)->consumed.load();
    const std::uint64_t published = header->published.load();
    for (std::uint64_t message = consumed; message < published; ++message)
      slot(message)->kind.store(0xDEAD);
    slot(published)->sequence.store(published + 1 + header->max_in_flight);
    d::wake({header->reader_futex, header->reader_waiters});
  }
  for (const auto until = std::chrono::steady_clock::now() + wait; header->closed.load() == 0;) {
    if (std::chrono::steady_clock::now() > until)
      return "the actor reading input #0 of graph '" + std::string(spec.name) +
             "' was not reported within " + std::to_string(wait.count()) + " ms of its end";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return "";
}

} // namespace cg_test
