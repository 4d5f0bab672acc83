// graph/restarts.cpp - An actor process that dies is started again in its place, as often as
// allowed.
//
// Processes mode, actors in the driver's segment: every channel's state (its
// ring, cursors and per-slot sequence numbers) lives in the graph's shared
// memory, so a new process for the actor can take over the dead one's ends
// where they are (actor/resume.cpp). The driver tells it the executions
// lost: every one begun before it is started again. Those the dead process
// had not finished get an error in place of each output it had not
// published (actor/restart.hpp), which the actors downstream pass on and the
// driver turns into ActorDiedError with restarted() true; the executions
// begun later run on the new process. Submissions need not pause meanwhile:
// an execution begun after the death was never seen by the dead process, so
// whether the new process counts it lost or runs it, no message of it is
// lost or delivered twice. The other actors wait on their channels as for a
// slow peer and keep their state.
#include <cg/detail/profile.hpp>
#include <cg/driver.hpp>

#include "actor/restart.hpp"
#include "graph/runtime_state.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {
namespace {

constexpr std::uint32_t kMostRestarts = 1'000'000;

// CG_MAX_RESTARTS as a count; nullopt where it is unset or empty.
std::optional<std::uint32_t> restarts_from_environment() {
  const char* value = std::getenv("CG_MAX_RESTARTS");
  if (value == nullptr || *value == '\0')
    return std::nullopt;
  const std::string text = value;
  const bool digits = text.size() <= 7 && std::all_of(text.begin(), text.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoul(text) > kMostRestarts)
    throw LaunchError("the environment variable CG_MAX_RESTARTS is '" + text +
                      "': it must be a count of restarts per actor, 0 to " +
                      std::to_string(kMostRestarts));
  return static_cast<std::uint32_t>(std::stoul(text));
}

} // namespace

void GraphRuntime::Impl::resolve_restarts(const ActorPlacement& placement) {
  std::uint32_t all = options.max_restarts;
  if (all == 0)
    all = restarts_from_environment().value_or(0);
  processes.max_restarts.assign(spec.actors.size(), all);
  processes.restarts.assign(spec.actors.size(), 0);
  for (const auto& [name, count] : options.actor_max_restarts) {
    std::uint32_t a = 0;
    while (a < spec.actors.size() && name != spec.actors[a].name)
      ++a;
    if (a == spec.actors.size())
      throw LaunchError("cg::LaunchOptions::actor_max_restarts names actor '" + name + "', which " +
                        describe(spec) + " does not have");
    processes.max_restarts[a] = count;
  }
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
    if (processes.max_restarts[a] == 0)
      continue;
    std::string what;
    if (processes.mode == Mode::threads)
      what = "actor threads (threads mode)";
    else if (!placement.local[a])
      what = "actors outside the driver's shared memory (another host, or TCP forced)";
    for (const CommunicatorSpec& group : spec.communicators)
      if (what.empty() &&
          std::find(group.actors.begin(), group.actors.end(), a) != group.actors.end())
        what = "actors in a communicator group";
    for (const ChannelSpec& channel : spec.channels) {
      const bool touches = channel.writer == static_cast<int>(a) ||
                           std::find(channel.reader_actors.begin(), channel.reader_actors.end(),
                                     static_cast<int>(a)) != channel.reader_actors.end();
      if (what.empty() && channel.cuda_ipc && touches)
        what = "actors with CUDA IPC channels";
    }
    if (!what.empty())
      throw LaunchError("cannot launch " + describe(spec) +
                        ": restarts are not supported yet for " + what + ", and actor '" +
                        spec.actors[a].name + "' has max_restarts " +
                        std::to_string(processes.max_restarts[a]) +
                        " (cg::LaunchOptions::max_restarts, CG_MAX_RESTARTS)");
  }
}

bool GraphRuntime::Impl::restart(std::size_t child, std::uint32_t actor, const std::string& why) {
  if (!processes.restartable.load() || actor >= processes.max_restarts.size() ||
      processes.restarts[actor] >= processes.max_restarts[actor])
    return false;
  const auto noticed = std::chrono::steady_clock::now();
  const std::int64_t noticed_ns = monotonic_ns();
  const std::string name = spec.actors[actor].name;
  const std::string who = "actor '" + name + "' of " + describe(spec);
  std::uint64_t from = 0;
  std::uint32_t count = 0;
  {
    std::lock_guard lock(mutex);
    from = results.submitted;
    count = ++processes.restarts[actor];
  }
  // Counted as the new process will count them: from the channels as the
  // dead one left them (actor/restart.hpp).
  const std::uint64_t lost_from =
      first_unfinished(spec, actor, from, [this](std::uint32_t c) { return channels.at(c); });
  {
    std::lock_guard lock(mutex);
    profiling.restarts.resize(spec.actors.size());
    profiling.restarts[actor].push_back(
        {noticed_ns, count, processes.max_restarts[actor], why, lost_from, from});
  }
  const std::string restarted = "restarted (" + std::to_string(count) + " of " +
                                std::to_string(processes.max_restarts[actor]) + ")";
  const std::string note = who + " " + why + " before it finished this execution; " + restarted;
  // The new process's words are its own.
  say_last_words(*records[actor], "");
  const std::uint32_t ready_before = header->ready.load(std::memory_order_acquire);
  auto give_up = [&](const std::string& reason) {
    fail(std::make_exception_ptr(ActorDiedError(name, who + " " + why + "; " + reason)));
    close_all();
    return true;
  };
  try {
    std::lock_guard lock(mutex); // a get() that timed out reads the children under it
    spawn_actor_process(processes.actor_host, actor,
                        {std::string(restart_from_variable) + "=" + std::to_string(from),
                         std::string(restart_note_variable) + "=" + note});
    // In the dead one's place, for those who look a child up by position.
    processes.actors[child] = std::move(processes.actors.back());
    processes.actors.pop_back();
    processes.child_names[child] = std::move(processes.child_names.back());
    processes.child_names.pop_back();
    processes.child_output[child] = processes.child_output.back();
    processes.child_output.pop_back();
  } catch (const std::exception& e) {
    return give_up("restarting it failed: " + std::string(e.what()));
  }
  // Ready once its channels are resumed and its actor constructed.
  const auto until = std::chrono::steady_clock::now() + options.start_timeout;
  while (header->ready.load(std::memory_order_acquire) == ready_before) {
    if (failures.stopping.load() || !processes.actors[child].running())
      return true; // teardown, or it died again: the monitor's next look says which
    if (std::chrono::steady_clock::now() >= until)
      return give_up(restarted + ", it did not start within " +
                     std::to_string(options.start_timeout.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - noticed).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", ms);
  std::fprintf(stderr, "cg: %s %s; %s in %s ms, executions before %llu lost\n", who.c_str(),
               why.c_str(), restarted.c_str(), took, static_cast<unsigned long long>(from));
  log.say(LogLevel::info,
          who + " " + restarted + " as pid " + std::to_string(processes.actors[child].pid()));
  return true;
}

std::exception_ptr lost_to_restart(std::span<const ResultView> outputs) noexcept {
  for (const ResultView& output : outputs) {
    if (output.kind != MessageKind::error)
      continue;
    try {
      Decoder decoder(output.bytes);
      ErrorRecord record = decode<ErrorRecord>(decoder);
      if (is_restart_record(record))
        return std::make_exception_ptr(ActorDiedError(record.actor, record.message, true));
    } catch (...) {
      // Not decodable: the decoder of the results says so.
    }
  }
  return nullptr;
}

std::map<std::string, std::uint32_t> GraphRuntime::restarts() const {
  std::lock_guard lock(impl_->mutex);
  std::map<std::string, std::uint32_t> made;
  for (std::size_t a = 0; a < impl_->processes.restarts.size(); ++a)
    if (impl_->processes.restarts[a] > 0)
      made[spec_.actors[a].name] = impl_->processes.restarts[a];
  return made;
}

} // namespace cg::detail
