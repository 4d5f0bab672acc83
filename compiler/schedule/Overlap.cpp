//===- Overlap.cpp - NCCL receives hoisted ahead of unrelated work --------===//
//
// "Depends on" is decided on the schedule as it stands: operation-graph
// edges plus each actor's current order (an operation waits for the one
// before it on its actor), with a group's members waiting for each other. A
// backward search from the receive's group marks everything the group waits
// for, without the receive's own place in its actor's order (that is what
// may change). The receive then moves up to just below the nearest operation
// that is blocking or marked.
//
//===----------------------------------------------------------------------===//

#include "schedule/Overlap.h"

#include <vector>

namespace cg::schedule {
namespace {

bool isBlocking(const OpNode& op) {
  if (op.kind == Operation::Kind::Read)
    return true;
  return op.group >= 0; // an NCCL WRITE, a collective's COMPUTE
}

} // namespace

std::vector<bool> hoistReceives(const OperationGraph& g,
                                std::vector<std::vector<unsigned>>& perActor,
                                const std::vector<bool>& cudaIpc, std::size_t searchBudget) {
  // A READ of CUDA IPC channels only: no group, the same rule.
  auto readsCudaIpc = [&](const OpNode& op) {
    if (op.kind != Operation::Kind::Read || op.channels.empty())
      return false;
    for (unsigned c : op.channels)
      if (c >= cudaIpc.size() || !cudaIpc[c])
        return false;
    return true;
  };
  const auto n = static_cast<unsigned>(g.ops.size());
  std::vector<bool> moved(n, false);
  std::vector<unsigned> position(n, 0);
  for (const std::vector<unsigned>& ops : perActor)
    for (unsigned i = 0; i < ops.size(); ++i)
      position[ops[i]] = i;

  std::vector<unsigned> mark(n, 0); // == stamp: an ancestor of this search
  unsigned stamp = 0;
  std::vector<unsigned> stack;

  for (std::vector<unsigned>& ops : perActor) {
    for (unsigned i = 0; i < ops.size(); ++i) {
      unsigned receive = ops[i];
      const OpNode& node = g.ops[receive];
      if (node.kind != Operation::Kind::Read || (node.group < 0 && !readsCudaIpc(node)))
        continue;
      unsigned top = i; // how far up it could go, blocking aside
      while (top > 0 && !isBlocking(g.ops[ops[top - 1]]))
        --top;
      if (top == i)
        continue;

      // Everything the receive's group waits for, but the receive's own
      // predecessor on its actor.
      ++stamp;
      stack.clear();
      auto visit = [&](unsigned op) {
        if (mark[op] != stamp) {
          mark[op] = stamp;
          stack.push_back(op);
        }
      };
      if (node.group >= 0)
        for (unsigned member : g.groups[static_cast<unsigned>(node.group)].members)
          visit(member);
      else
        visit(receive);
      std::size_t visited = 0;
      bool exhausted = false;
      while (!stack.empty()) {
        if (++visited > searchBudget) {
          exhausted = true;
          break;
        }
        unsigned op = stack.back();
        stack.pop_back();
        g.forEachIn(op, [&](const OpEdge& e) { visit(e.from); });
        if (g.ops[op].group >= 0)
          for (unsigned member : g.groups[static_cast<unsigned>(g.ops[op].group)].members)
            visit(member);
        unsigned at = position[op];
        if (op != receive && at > 0)
          visit(perActor[g.ops[op].actor][at - 1]);
      }
      if (exhausted)
        continue;

      unsigned to = i;
      while (to > top && mark[ops[to - 1]] != stamp)
        --to;
      if (to == i)
        continue;
      for (unsigned k = i; k > to; --k) {
        ops[k] = ops[k - 1];
        position[ops[k]] = k;
      }
      ops[to] = receive;
      position[receive] = to;
      moved[receive] = true;
    }
  }
  return moved;
}

} // namespace cg::schedule
