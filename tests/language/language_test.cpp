// language_test.cpp - every feature of the graph language, run end to end.
#include "language_test_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

using Language = cg_test::NoLeftovers;

TEST_F(Language, SeveralInputsArePassedPositionally) {
  auto graph = cg::launch<&two_inputs>();
  EXPECT_EQ(graph.execute(3, "ab").get(), "ababab");
  EXPECT_EQ(graph.execute(0, "ab").get(), "");
}

TEST_F(Language, ConstantsReachBindsAndConstructors) {
  auto graph = cg::launch<&constants>();
  auto [scaled, named] = graph.execute(5).get();
  EXPECT_EQ(scaled, 5 * 3 + 100);
  EXPECT_EQ(named, "name:tripler");
}

TEST_F(Language, LaunchCanReplaceTheConstructorArgumentsOfAnActor) {
  cg::Graph<&constants>::Constructors constructors;
  constructors.triple = {5, "quintupler"};
  auto graph = cg::launch<&constants>(constructors);
  auto [scaled, named] = graph.execute(5).get();
  EXPECT_EQ(scaled, 5 * 5 + 100);
  EXPECT_EQ(named, "name:quintupler");
}

TEST_F(Language, ActorThatCannotBeConstructedFromTheArgumentsGivenAtLaunchIsALaunchError) {
  cg::Graph<&constants>::Constructors constructors;
  constructors.triple = {-1, "negative"};
  try {
    cg::launch<&constants>(constructors);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    // Both modes say what the constructor threw.
    std::string expected = cg_test::threads_mode()
                               ? "actor 'triple' of graph 'constants' (a thread) failed: "
                                 "std::invalid_argument: scale must not be negative during start-up"
                               : "actor 'triple' of graph 'constants' exited with code 2 "
                                 "(std::invalid_argument: scale must not be negative) during "
                                 "start-up";
    EXPECT_EQ(e.what(), expected);
  }
}

TEST_F(Language, ConstructorArgumentsLeftUnsetAtLaunchAreTheGraphs) {
  auto graph = cg::launch<&loop>(cg::Graph<&loop>::Constructors{}, cg::LaunchOptions{});
  EXPECT_EQ(graph.execute(1).get(), 7);
}

TEST_F(Language, OneValueFansOutAndJoinsAgain) {
  auto graph = cg::launch<&diamond>();
  EXPECT_EQ(graph.execute(10).get(), 22);
}

TEST_F(Language, TupleResultsAreUnpackedAndRoutedSeparately) {
  auto graph = cg::launch<&tuples>();
  std::tuple<int, int> result = graph.execute(17, 5).get();
  EXPECT_EQ(result, std::make_tuple(17 / 5 + 1, 17 % 5));
}

TEST_F(Language, LoopsHelpersAndConstantConditionsShapeTheGraph) {
  auto graph = cg::launch<&loop>();
  // stage0 x*1, stage1 +1, stage2 x*3, stage3 +1
  EXPECT_EQ(graph.execute(1).get(), 7);
  EXPECT_EQ(graph.execute(2).get(), 10);
  EXPECT_EQ(cg_test::child_pids().size(), cg_test::actor_processes(4));
}

TEST_F(Language, UserStructsCrossActorsWithGeneratedSerializers) {
  auto graph = cg::launch<&structs>();
  shop::Order order{7, "tea", {1.5, 2.25}, "green"};
  shop::Receipt receipt = graph.execute(order).get();
  EXPECT_EQ(receipt.order.id, 7);
  EXPECT_EQ(receipt.order.item, "tea");
  EXPECT_EQ(receipt.order.prices, (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ(receipt.order.note, std::optional<std::string>("green"));
  EXPECT_EQ(receipt.total, 3.75);
  EXPECT_EQ(receipt.lines, (std::map<std::string, int>{{"tea", 2}}));

  shop::Receipt empty = graph.execute(shop::Order{8, "", {}, std::nullopt}).get();
  EXPECT_EQ(empty.order.note, std::nullopt);
  EXPECT_EQ(empty.total, 0);
}

TEST_F(Language, TypesWithTheirOwnCodecCrossActors) {
  auto graph = cg::launch<&custom_codec>();
  EXPECT_EQ(graph.execute(shop::Money(2000)).get().cents(), 300);
}

TEST_F(Language, ActorMethodsCompiledSeparatelyKeepStateAcrossExecutions) {
  auto graph = cg::launch<&counting>();
  EXPECT_EQ(graph.execute(1).get(), 11);
  EXPECT_EQ(graph.execute(5).get(), 16);
}

TEST_F(Language, SeveralGraphsOfOneSourceRunSideBySide) {
  auto first = cg::launch<&diamond>();
  auto second = cg::launch<&counting>();
  EXPECT_EQ(first.execute(1).get(), 4);
  EXPECT_EQ(second.execute(2).get(), 12);
}

} // namespace
