//===- schedule_dot_test.cpp - Tests for `<graph>.dot` --------------------===//

#include "schedule/ScheduleDot.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>

namespace cg::schedule {
namespace {

using test::scheduleOf;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ScheduleDot, TheChainHasATaskClusterAndAnOperationCluster) {
  ir::Graph graph = test::chainGraph();
  std::string dot = renderScheduleDot(graph, scheduleOf(graph));
  EXPECT_EQ(dot.substr(0, dot.find('\n')),
            "// graph 'chain' (echo.cg.cpp:10): its tasks, and the operations of its schedule");
  EXPECT_TRUE(contains(dot, "digraph \"chain\" {\n")) << dot;
  // Tasks name their actor's class; edges, the value's type.
  EXPECT_TRUE(contains(dot, "    t0 [label=\"a.echo\\n(EchoActor)\\necho.cg.cpp:13\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    inputs -> t0 [label=\"input #0: std::string\\nshm\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    t0 -> t1 [label=\"a.echo: std::string\\nshm\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    t1 -> outputs [label=\"output #0: std::string\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "      o0_1 [label=\"2 COMPUTE a.echo\\ns1\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    driver -> o0_0 [label=\"c0\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    o0_2 -> o1_0 [label=\"c1\"];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    o1_2 -> driver [label=\"c2\"];\n")) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 6), "  }\n}\n");
}

TEST(ScheduleDot, WithoutOperationsTheTasksStandAlone) {
  ir::Graph graph = test::chainGraph();
  std::string dot = renderScheduleDot(graph, scheduleOf(graph), {.operations = false});
  EXPECT_EQ(dot.substr(0, dot.find('\n')), "// graph 'chain' (echo.cg.cpp:10): its tasks");
  EXPECT_TRUE(contains(dot, "    t0 -> t1 [label=\"a.echo: std::string\\nshm\"];\n")) << dot;
  EXPECT_FALSE(contains(dot, "operations")) << dot;
  EXPECT_FALSE(contains(dot, "o0_0")) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 6), "  }\n}\n");
}

TEST(ScheduleDot, GroupMembersAreFilledAndMovedOperationsRed) {
  ir::Graph graph = test::gpuGraph();
  ScheduleOptions options;
  options.overlapGpuCommunication = true;
  std::string dot = renderScheduleDot(graph, scheduleOf(graph, options));
  EXPECT_TRUE(contains(dot, "      o0_2 [label=\"3 WRITE w0.split\\nc1\\ns2 g0\", style=filled, "
                            "fillcolor=lightblue];\n"))
      << dot;
  EXPECT_TRUE(contains(dot, "    o0_2 -> o1_0 [label=\"c1\", style=bold, color=blue];\n")) << dot;
  EXPECT_TRUE(contains(dot, "    o0_4 -> o1_2 [dir=none, style=dashed, constraint=false, "
                            "label=\"g1\"];\n"))
      << dot;
  EXPECT_TRUE(
      contains(dot, "    t3 [label=\"w0.allreduce\\n(Worker)\\necho.cg.cpp:66\\n[allreduce sum #0, "
                    "rank 0 of 2]\", shape=hexagon];\n"))
      << dot;
}

TEST(ScheduleDot, AMovedReceiveIsDrawnInRed) {
  test::GraphBuilder g("moved", 10);
  unsigned x = g.input("int");
  unsigned s = g.actor("s", 11);
  unsigned r = g.actor("r", 12);
  unsigned sent = g.bind(s, "send", {x}, 13, "Tensor");
  g.transport(sent, ir::Transport::Nccl);
  unsigned first = g.bind(r, "first", {test::constant("int", "1")}, 14, "Tensor");
  g.output(g.bind(r, "second", {first, sent}, 15, "Tensor"));
  ir::Graph graph = g.build();
  ScheduleOptions options;
  options.overlapGpuCommunication = true;
  std::string dot = renderScheduleDot(graph, scheduleOf(graph, options));
  EXPECT_TRUE(contains(dot, "      o1_0 [label=\"1 READ r.second\\nc1\\ns2 g0 moved\", "
                            "style=filled, fillcolor=lightblue, color=red, fontcolor=red, "
                            "penwidth=2];\n"))
      << dot;
}

TEST(ScheduleDot, QuotesAndBackslashesInNamesAreEscaped) {
  test::GraphBuilder g("odd\"name\\", 10);
  unsigned x = g.input();
  unsigned a = g.actor("a", 11);
  g.output(g.bind(a, "echo", {x}, 12));
  ir::Graph graph = g.build();
  EXPECT_TRUE(
      contains(renderScheduleDot(graph, scheduleOf(graph)), "digraph \"odd\\\"name\\\\\" {\n"));
}

} // namespace
} // namespace cg::schedule
