//===- Simulator.cpp - Run a schedule with the runtime's semantics --------===//
//
// A discrete-event run without a clock loop: each process advances as far as
// it can and then waits on one thing (a channel's data, a channel's free
// slot, or a rendezvous); whoever provides that thing wakes it. Every step
// is taken once, so a run costs O(executions x operations). Times follow
// from causality alone (a step starts when its process is free and what it
// waits for has happened), so the order in which processes are advanced
// changes nothing but the trace of who waited.
//
//===----------------------------------------------------------------------===//

#include "schedule/Simulator.h"
#include "support/InternalError.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace cg::schedule {
namespace {

struct Step {
  enum class Kind : unsigned char { ShmRead, ShmWrite, Rendezvous, Compute };
  Kind kind = Kind::Compute;
  bool lastOfOp = true; // the operation's last step
  unsigned index = 0;   // ShmRead, ShmWrite: the channel; Rendezvous: the group
  unsigned reader = 0;  // ShmRead: the reader slot, numbered across channels
  unsigned op = 0;      // actors: the operation; driver: the execution
  double cost = 0;      // Compute, Rendezvous of a collective
};

struct Process {
  std::vector<Step> steps; // one execution (driver: the whole run)
  unsigned pc = 0;
  unsigned execution = 0;
  double time = 0;
  int nextWaiting = -1; // the next reader waiting on the same channel
  bool done = false;
  bool queued = false;
};

} // namespace

double costOf(const ir::Task& task) { return task.cost > 0 ? task.cost : 1.0; }

SimulationResult simulate(const ir::Graph& graph, const Schedule& schedule,
                          const SimulationOptions& options) {
  const unsigned K = std::max(1u, options.maxInFlight);
  const unsigned N = options.executions;
  const auto numActors = static_cast<unsigned>(schedule.actors.size());
  const unsigned driver = numActors;
  const auto numChannels = static_cast<unsigned>(schedule.channels.size());

  // Reader slots are numbered across channels: channel c's are
  // firstReader[c] .. firstReader[c + 1] - 1.
  std::vector<unsigned> firstReader(numChannels + 1, 0);
  for (unsigned c = 0; c < numChannels; ++c)
    firstReader[c + 1] =
        firstReader[c] + static_cast<unsigned>(schedule.channels[c].readers.size());
  // A channel's readers are in ascending order (assignChannels), so a
  // binary search finds a slot; the linear search behind it is for a
  // schedule built otherwise and still gives the right slot.
  auto readerSlot = [&](unsigned c, int reader) {
    const std::vector<int>& readers = schedule.channels[c].readers;
    auto it = std::lower_bound(readers.begin(), readers.end(), reader);
    if (it == readers.end() || *it != reader)
      it = std::find(readers.begin(), readers.end(), reader);
    if (it == readers.end())
      internalError(fmt::format("{} reads c{} but is not its reader",
                                reader == kDriver ? std::string("the driver")
                                                  : "actor '" + graph.actors[reader].name + "'",
                                c));
    return firstReader[c] + static_cast<unsigned>(it - readers.begin());
  };

  std::vector<Process> processes(numActors + 1);
  for (unsigned a = 0; a < numActors; ++a) {
    const std::vector<Operation>& ops = schedule.actors[a].operations;
    std::vector<Step>& steps = processes[a].steps;
    for (unsigned i = 0; i < ops.size(); ++i) {
      const Operation& op = ops[i];
      if (op.group >= 0) {
        double cost = op.kind == Operation::Kind::Compute ? costOf(graph.tasks[op.task]) : 0;
        steps.push_back(
            {Step::Kind::Rendezvous, true, static_cast<unsigned>(op.group), 0, i, cost});
      } else if (op.kind == Operation::Kind::Compute) {
        steps.push_back({Step::Kind::Compute, true, 0, 0, i, costOf(graph.tasks[op.task])});
      } else {
        for (unsigned c : op.channels) {
          bool read = op.kind == Operation::Kind::Read;
          steps.push_back({read ? Step::Kind::ShmRead : Step::Kind::ShmWrite, false, c,
                           read ? readerSlot(c, static_cast<int>(a)) : 0, i, 0});
        }
        if (!op.channels.empty())
          steps.back().lastOfOp = true;
      }
    }
  }
  // The driver: the inputs of execution e once the outputs of e - K are in.
  {
    std::vector<unsigned> inputs = schedule.inputChannels;
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    // The outputs' channels once each, in the order first named.
    std::vector<unsigned> outputs;
    std::vector<bool> isOutput(numChannels, false);
    for (unsigned c : schedule.outputChannels)
      if (!isOutput[c]) {
        isOutput[c] = true;
        outputs.push_back(c);
      }
    std::vector<Step>& steps = processes[driver].steps;
    unsigned collected = 0;
    auto readOutputs = [&] {
      for (unsigned c : outputs)
        steps.push_back({Step::Kind::ShmRead, true, c, readerSlot(c, kDriver), collected, 0});
      ++collected;
    };
    for (unsigned e = 0; e < N; ++e) {
      if (e >= K)
        readOutputs();
      for (unsigned c : inputs)
        steps.push_back({Step::Kind::ShmWrite, true, c, 0, e, 0});
    }
    while (collected < N)
      readOutputs();
  }

  // Channel state: values written; per reader slot, values read; the times
  // of the last K writes and reads (rings of K); who waits.
  std::vector<unsigned> written(numChannels, 0);
  std::vector<unsigned> readCount(firstReader[numChannels], 0);
  // Without timeEveryExecution only execution 0 is timed, which never waits
  // for a free slot: one write time per channel is enough.
  const bool rings = options.timeEveryExecution;
  const unsigned ring = rings ? K : 1;
  std::vector<double> writeTime(std::size_t{numChannels} * ring, 0);
  std::vector<double> readTime(rings ? std::size_t{firstReader[numChannels]} * K : 0, 0);
  std::vector<int> writerWaiting(numChannels, -1);
  std::vector<int> readersWaiting(numChannels, -1); // a list through nextWaiting
  // Rendezvous state: how many members have arrived at the current instance.
  const auto numGroups = static_cast<unsigned>(schedule.groups.size());
  std::vector<unsigned> arrived(numGroups, 0);

  SimulationResult result;
  result.start.resize(numActors);
  result.finish.resize(numActors);
  for (unsigned a = 0; a < numActors; ++a) {
    result.start[a].assign(schedule.actors[a].operations.size(), 0);
    result.finish[a].assign(schedule.actors[a].operations.size(), 0);
  }

  std::deque<unsigned> runnable;
  auto wake = [&](unsigned p) {
    if (!processes[p].queued && !processes[p].done) {
      processes[p].queued = true;
      runnable.push_back(p);
    }
  };
  // Moves process p past its current step, which started at `begin` and
  // ended at `end`.
  auto advance = [&](unsigned p, double begin, double end) {
    Process& proc = processes[p];
    const Step& step = proc.steps[proc.pc];
    if (p == driver) {
      if (step.kind == Step::Kind::ShmRead && step.op == 0)
        result.firstExecution = std::max(result.firstExecution, end);
    } else if (proc.execution == 0) {
      bool firstOfOp = proc.pc == 0 || proc.steps[proc.pc - 1].lastOfOp;
      if (firstOfOp)
        result.start[p][step.op] = begin;
      if (step.lastOfOp) {
        result.finish[p][step.op] = end;
        result.firstExecution = std::max(result.firstExecution, end);
      }
    }
    proc.time = end;
    if (++proc.pc == proc.steps.size()) {
      proc.pc = 0;
      if (p == driver || ++proc.execution == N)
        proc.done = true;
    }
  };

  for (unsigned p = 0; p <= numActors; ++p)
    if (N > 0 && !processes[p].steps.empty())
      wake(p);
    else
      processes[p].done = true;

  while (!runnable.empty()) {
    unsigned p = runnable.front();
    runnable.pop_front();
    Process& proc = processes[p];
    proc.queued = false;
    while (!proc.done) {
      const Step& step = proc.steps[proc.pc];
      if (step.kind == Step::Kind::Compute) {
        advance(p, proc.time, proc.time + step.cost);
      } else if (step.kind == Step::Kind::ShmWrite) {
        unsigned c = step.index;
        unsigned w = written[c];
        unsigned oldest = *std::min_element(readCount.begin() + firstReader[c],
                                            readCount.begin() + firstReader[c + 1]);
        if (w - oldest >= K) {
          writerWaiting[c] = static_cast<int>(p);
          break;
        }
        double begin = proc.time;
        if (rings) {
          if (w >= K)
            for (unsigned r = firstReader[c]; r < firstReader[c + 1]; ++r)
              begin = std::max(begin, readTime[std::size_t{r} * K + (w - K) % K]);
          writeTime[std::size_t{c} * K + w % K] = begin;
        } else if (w == 0) {
          writeTime[c] = begin;
        }
        ++written[c];
        advance(p, begin, begin);
        for (int reader = readersWaiting[c]; reader >= 0;) {
          int next = processes[static_cast<unsigned>(reader)].nextWaiting;
          wake(static_cast<unsigned>(reader));
          reader = next;
        }
        readersWaiting[c] = -1;
      } else if (step.kind == Step::Kind::ShmRead) {
        unsigned c = step.index;
        unsigned r = readCount[step.reader];
        if (r >= written[c]) {
          proc.nextWaiting = readersWaiting[c];
          readersWaiting[c] = static_cast<int>(p);
          break;
        }
        double begin = proc.time;
        if (rings) {
          begin = std::max(begin, writeTime[std::size_t{c} * K + r % K]);
          readTime[std::size_t{step.reader} * K + r % K] = begin;
        } else if (r == 0) {
          begin = std::max(begin, writeTime[c]);
        }
        ++readCount[step.reader];
        advance(p, begin, begin);
        if (writerWaiting[c] >= 0) {
          wake(static_cast<unsigned>(writerWaiting[c]));
          writerWaiting[c] = -1;
        }
      } else {
        // A rendezvous: each member counts itself in once; the last to
        // arrive completes everyone's step.
        const std::vector<OpRef>& members = schedule.groups[step.index].members;
        if (++arrived[step.index] < members.size())
          break;
        arrived[step.index] = 0;
        double begin = 0, cost = 0;
        for (const OpRef& member : members) {
          const Process& theirs = processes[member.actor];
          const Step& at = theirs.steps[theirs.pc];
          if (at.kind != Step::Kind::Rendezvous || at.index != step.index)
            internalError("a rendezvous completed with a member elsewhere");
          begin = std::max(begin, theirs.time);
          cost = std::max(cost, at.cost);
        }
        for (const OpRef& member : members) {
          advance(member.actor, begin, begin + cost);
          if (member.actor != p)
            wake(member.actor);
        }
      }
    }
  }

  result.completed = std::all_of(processes.begin(), processes.end(),
                                 [](const Process& proc) { return proc.done; });
  if (result.completed) {
    if (rings || N == 1)
      for (const Process& proc : processes)
        result.makespan = std::max(result.makespan, proc.time);
    return result;
  }
  result.firstExecution = 0;
  for (unsigned p = 0; p <= numActors; ++p) {
    const Process& proc = processes[p];
    if (proc.done)
      continue;
    const Step& step = proc.steps[proc.pc];
    std::string what;
    switch (step.kind) {
    case Step::Kind::ShmRead:
      what = fmt::format("READ c{}", step.index);
      break;
    case Step::Kind::ShmWrite:
      what = fmt::format("WRITE c{} (full)", step.index);
      break;
    case Step::Kind::Rendezvous:
      what = fmt::format("group g{}", step.index);
      break;
    case Step::Kind::Compute:
      what = "COMPUTE";
      break;
    }
    if (p == driver)
      result.blocked.push_back(fmt::format("the driver waits at {}", what));
    else
      result.blocked.push_back(fmt::format("actor '{}' (execution {}) waits at operation {}, {}",
                                           graph.actors[p].name, proc.execution, step.op + 1,
                                           what));
  }
  return result;
}

} // namespace cg::schedule
