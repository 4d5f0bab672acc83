// quickstart_test.cpp - the quickstart graphs, built by add_compiled_graph(),
// run as real processes.
#include "e2e_quickstart.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace {

using Quickstart = cg_test::NoLeftovers;

TEST_F(Quickstart, ChainEchoesItsInputThroughTwoActors) {
  auto graph = cg::launch<&chain>();
  EXPECT_EQ(graph.execute("hello").get(), "hello");
}

// Once every actor has mapped the segment, the driver closes its descriptor:
// nobody else can attach, and the memory goes with the last mapping.
TEST_F(Quickstart, ChainStartsOneProcessPerActorAndKeepsItsSegmentMappedButNotOpen) {
  auto graph = cg::launch<&chain>();
  EXPECT_EQ(cg_test::child_pids().size(), cg_test::actor_processes(2));
  const std::vector<std::string> mappings = cg_test::memfd_mappings(0, "cg.chain");
  ASSERT_EQ(mappings.size(), 1u);
  EXPECT_EQ(mappings[0].substr(mappings[0].find(' ')), " /memfd:cg.chain (deleted)");
  EXPECT_EQ(cg_test::memfd_descriptors(), std::vector<std::string>{});
}

TEST_F(Quickstart, ChainCarriesManyDistinctValuesInOrder) {
  auto graph = cg::launch<&chain>();
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(graph.execute("message " + std::to_string(i)).get(), "message " + std::to_string(i));
}

TEST_F(Quickstart, FanoutReturnsOneResultPerActorInOutputOrder) {
  auto graph = cg::launch<&fanout>();
  std::tuple<std::string, std::string, std::string> result = graph.execute("hello").get();
  EXPECT_EQ(result,
            std::make_tuple(std::string("hello"), std::string("hello"), std::string("hello")));
}

TEST_F(Quickstart, PipelineKeepsThreeExecutionsInFlightAndReturnsThemInOrder) {
  auto graph = cg::launch<&pipeline>();
  std::vector<cg::Ref<std::string>> refs;
  for (int i = 0; i < 3; ++i)
    refs.push_back(graph.execute("hello" + std::to_string(i)));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(refs[i].get(), "hello" + std::to_string(i));
}

TEST_F(Quickstart, ResultsCanBeReadInAnyOrder) {
  auto graph = cg::launch<&pipeline>();
  std::vector<cg::Ref<std::string>> refs;
  for (int i = 0; i < 5; ++i)
    refs.push_back(graph.execute("v" + std::to_string(i)));
  for (int i = 4; i >= 0; --i)
    EXPECT_EQ(refs[i].get(), "v" + std::to_string(i));
}

TEST_F(Quickstart, TeardownStopsEveryActorAndIsIdempotent) {
  auto graph = cg::launch<&fanout>();
  EXPECT_EQ(cg_test::child_pids().size(), cg_test::actor_processes(3));
  graph.teardown();
  EXPECT_EQ(cg_test::child_pids(), std::vector<int>{});
  graph.teardown();
  EXPECT_THROW(graph.execute("late"), cg::ChannelClosedError);
}

TEST_F(Quickstart, RefOutlivingItsGraphReportsTheTeardown) {
  cg::Ref<std::string> ref = [] {
    auto graph = cg::launch<&chain>();
    return graph.execute("orphan");
  }();
  EXPECT_THROW(ref.get(), cg::ChannelClosedError);
}

} // namespace
