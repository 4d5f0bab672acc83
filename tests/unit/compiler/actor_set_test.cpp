//===- actor_set_test.cpp - Tests for graphs over one actor set -----------===//
//
// What a graph over a set takes from it, the mistakes it may not make, and
// the check that the set's graphs executed in turn do not block each other:
// it passes in submission order, the order every actor keeps, and fails,
// naming both graphs and the waiting actors, when one actor runs a turn's
// graphs in another order (what a runtime that let each graph run at its
// own pace on an actor would do).
//
//===----------------------------------------------------------------------===//

#include "ir/ActorSet.h"
#include "schedule/ActorSetSchedule.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace cg {
namespace {

using test::constant;
using test::GraphBuilder;
using test::scheduleOf;

std::string formatted(const std::vector<ir::Diagnostic>& diagnostics) {
  std::string text;
  for (const ir::Diagnostic& diagnostic : diagnostics)
    text += ir::formatDiagnostic(diagnostic);
  return text;
}

/// CG_ACTOR_SET void pair(cg::GraphBuilder& s): a built with 7 on one GPU,
/// b on host 1, and c, which no graph below uses.
ir::ActorSet pairSet() {
  GraphBuilder s("pair", 1);
  s.actor("a", 2, "::EchoActor", {constant("int", "7")});
  s.actor("b", 3);
  s.actor("c", 4);
  ir::Graph evaluated = s.build();
  evaluated.actors[0].gpus = 1;
  evaluated.actors[1].host = 1;
  auto set = ir::actorSetOf(evaluated);
  EXPECT_TRUE(std::holds_alternative<ir::ActorSet>(set))
      << formatted(std::get<std::vector<ir::Diagnostic>>(set));
  return std::get<ir::ActorSet>(set);
}

/// x -> first.echo -> second.echo -> output, over `pair`, the value between
/// the two actors sent over NCCL: a rendezvous of its sender and receiver.
ir::Graph overPair(std::string name, unsigned line, std::string first, std::string second) {
  GraphBuilder g(std::move(name), line);
  unsigned x = g.input("cg::Tensor");
  unsigned p = g.actor(std::move(first), line + 1);
  unsigned q = g.actor(std::move(second), line + 2);
  unsigned vp = g.bind(p, "echo", {x}, line + 3, "cg::Tensor");
  g.transport(vp, ir::Transport::Nccl);
  g.output(g.bind(q, "echo", {vp}, line + 4, "cg::Tensor"));
  ir::Graph graph = g.build();
  graph.actorSet = "pair";
  return graph;
}

TEST(ActorSets, AGraphOverASetTakesItsActorsConstructorArgumentsGpusAndHost) {
  ir::ActorSet set = pairSet();
  ir::Graph graph = overPair("forward", 20, "a", "b");
  EXPECT_EQ(formatted(ir::applyActorSet(graph, set)), "");
  EXPECT_EQ(graph.actors[0].constructorArgs, set.actors[0].constructorArgs);
  EXPECT_EQ(graph.actors[0].gpus, 1u);
  EXPECT_EQ(graph.actors[1].host, 1u);
  EXPECT_EQ(graph.actors[0].loc.line, 21u); // the graph's own line, for its messages
}

TEST(ActorSets, EachMistakeOfAGraphOverASetIsAnErrorAtItsActorWithANoteAtTheSet) {
  ir::ActorSet set = pairSet();
  GraphBuilder g("train", 30);
  unsigned x = g.input();
  unsigned d = g.actor("d", 31);
  unsigned a = g.actor("a", 32, "::EchoActor", {constant("int", "8")});
  unsigned b = g.actor("b", 33, "::Trainer");
  unsigned c = g.actor("c", 34);
  g.output(g.bind(d, "echo", {x}, 35)).output(g.bind(a, "echo", {x}, 36));
  g.output(g.bind(b, "echo", {x}, 37)).output(g.bind(c, "echo", {x}, 38));
  ir::Graph graph = g.build();
  graph.actorSet = "pair";
  graph.actors[c].gpus = 2;
  EXPECT_EQ(formatted(ir::applyActorSet(graph, set)),
            "examples/echo/echo.cg.cpp:31:3: error: graph 'train' runs over actor set 'pair', "
            "which has no actor named 'd'\n"
            "examples/echo/echo.cg.cpp:1:1: note: actor set 'pair' is declared here\n"
            "examples/echo/echo.cg.cpp:32:3: error: actor 'a' is built with (7) in actor set "
            "'pair'; graph 'train' gives (8)\n"
            "examples/echo/echo.cg.cpp:2:3: note: 'a' is declared here\n"
            "examples/echo/echo.cg.cpp:33:3: error: actor 'b' is a '::EchoActor' in actor set "
            "'pair'; graph 'train' makes it a '::Trainer'\n"
            "examples/echo/echo.cg.cpp:3:3: note: 'b' is declared here\n"
            "examples/echo/echo.cg.cpp:34:3: error: actor 'c' has .gpus(0) in actor set 'pair'; "
            "graph 'train' gives .gpus(2)\n"
            "examples/echo/echo.cg.cpp:4:3: note: 'c' is declared here\n");
}

TEST(ActorSets, ASetThatBindsOrNamesTwoActorsAlikeIsRejected) {
  GraphBuilder s("bad", 1);
  unsigned a = s.actor("a", 2);
  s.actor("a", 3);
  s.bind(a, "echo", {constant("std::string", "std::string(\"x\")")}, 4);
  auto set = ir::actorSetOf(s.build());
  ASSERT_TRUE(std::holds_alternative<std::vector<ir::Diagnostic>>(set));
  EXPECT_EQ(formatted(std::get<std::vector<ir::Diagnostic>>(set)),
            "examples/echo/echo.cg.cpp:4:3: error: actor set 'bad' declares actors only; bind, "
            "read inputs and write outputs in a graph over it, CG_GRAPH_OVER(bad)\n"
            "examples/echo/echo.cg.cpp:3:3: error: actor name 'a' is already used in actor set "
            "'bad'\n"
            "examples/echo/echo.cg.cpp:2:3: note: first declared here\n");
}

/// forward: a -> b; backward: b -> a; both over `pair`, with their schedules.
struct TwoWays {
  ir::ActorSet set = pairSet();
  std::vector<ir::Graph> graphs{overPair("forward", 20, "a", "b"),
                                overPair("backward", 40, "b", "a")};
  std::vector<schedule::Schedule> schedules{scheduleOf(graphs[0]), scheduleOf(graphs[1])};
  std::vector<schedule::SetGraph> members{{&graphs[0], &schedules[0]}, {&graphs[1], &schedules[1]}};
};

TEST(ActorSets, GraphsExecutedInTurnInSubmissionOrderDoNotBlockEachOther) {
  TwoWays sets;
  EXPECT_EQ(formatted(schedule::checkGraphsInTurn(
                sets.set, sets.members, 3, schedule::submissionOrder(sets.set, sets.members))),
            "");
  schedule::SimulationResult run = schedule::simulateInTurn(
      sets.set, sets.members, 0, 1, schedule::submissionOrder(sets.set, sets.members), 3, 7);
  EXPECT_TRUE(run.completed);
}

TEST(ActorSets, AnActorRunningATurnsGraphsOutOfSubmissionOrderIsReportedNamingBothGraphs) {
  TwoWays sets;
  // b runs the turn's second graph first: each actor then waits at its NCCL
  // send for the other's receive, which comes after its own send.
  schedule::TurnOrder outOfOrder = [](unsigned actor, unsigned first, unsigned second) {
    return actor == 1 ? std::vector<unsigned>{second, first} : std::vector<unsigned>{first, second};
  };
  EXPECT_FALSE(schedule::simulateInTurn(sets.set, sets.members, 0, 1, outOfOrder, 3, 7).completed);
  EXPECT_EQ(formatted(schedule::checkGraphsInTurn(sets.set, sets.members, 3, outOfOrder)),
            "examples/echo/echo.cg.cpp:40:1: error: graphs 'forward' and 'backward' of actor set "
            "'pair' block each other when 'backward' follows 'forward': actors 'a', 'b' wait for "
            "each other\n"
            "examples/echo/echo.cg.cpp:20:1: note: graph 'forward' is declared here\n"
            "examples/echo/echo.cg.cpp:20:1: error: graphs 'backward' and 'forward' of actor set "
            "'pair' block each other when 'forward' follows 'backward': actors 'a', 'b' wait for "
            "each other\n"
            "examples/echo/echo.cg.cpp:40:1: note: graph 'backward' is declared here\n");
}

TEST(ActorSets, TheSetsScheduleListsEachActorsProgramInEachGraphThatUsesIt) {
  TwoWays sets;
  EXPECT_EQ(schedule::renderActorSetScheduleText(sets.set, sets.graphs, sets.schedules, 3),
            "# schedule of actor set 'pair' (echo.cg.cpp:1): graphs forward, backward\n"
            "# every actor runs the executions in the order the driver submits them, each with "
            "its graph's program; channels cN are those of <graph>.schedule.txt\n"
            "# actor a (::EchoActor)\n"
            "  in graph forward\n"
            "    1  READ     c0 (input #0)\n"
            "    2  COMPUTE  a.echo(input #0)  echo.cg.cpp:23\n"
            "    3  WRITE    c1                [g0]\n"
            "  in graph backward\n"
            "    1  READ     c1 (b.echo)       [g0]\n"
            "    2  COMPUTE  a.echo(b.echo)    echo.cg.cpp:44\n"
            "    3  WRITE    c2\n"
            "# actor b (::EchoActor)\n"
            "  in graph forward\n"
            "    1  READ     c1 (a.echo)       [g0]\n"
            "    2  COMPUTE  b.echo(a.echo)    echo.cg.cpp:24\n"
            "    3  WRITE    c2\n"
            "  in graph backward\n"
            "    1  READ     c0 (input #0)\n"
            "    2  COMPUTE  b.echo(input #0)  echo.cg.cpp:43\n"
            "    3  WRITE    c1                [g0]\n"
            "# actor c (::EchoActor)\n"
            "  (in no graph)\n"
            "# checked by simulation: each of the 2 ordered pairs of graphs executed in turn, 7 "
            "times, 3 in flight\n");
}

} // namespace
} // namespace cg
