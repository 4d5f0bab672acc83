//===- costs_test.cpp - Tests for cost profiles ---------------------------===//

#include "schedule/Costs.h"

#include "GraphFixtures.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace cg::schedule {
namespace {

std::string errorOf(const std::string& text) {
  try {
    parseCostProfile(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Costs, AnActorKeyWinsOverAClassKeyAndOthersKeepTheirCost) {
  ir::Graph graph = test::gpuGraph(); // w0.split has cost 2.5, w1.grad 12
  CostProfile profile = parseCostProfile(
      R"({"format": "cg-costs", "version": 1,
          "costs": {"Worker::grad": 3, "w1.grad": 4.5, "Other::grad": 9}})");
  applyCostProfile(profile, graph);
  EXPECT_EQ(graph.tasks[0].cost, 2.5); // w0.split: not named
  EXPECT_EQ(graph.tasks[1].cost, 3);   // w0.grad: by class
  EXPECT_EQ(graph.tasks[2].cost, 4.5); // w1.grad: by actor
}

TEST(Costs, AMalformedProfileNamesWhatIsWrong) {
  EXPECT_EQ(errorOf("[1]"), "invalid cost profile: expected an object");
  EXPECT_EQ(errorOf(R"({"format": "cg-ir", "version": 1, "costs": {}})"),
            "invalid cost profile: 'format' must be \"cg-costs\"");
  EXPECT_EQ(errorOf(R"({"format": "cg-costs", "version": 2, "costs": {}})"),
            "invalid cost profile: 'version' must be 1");
  EXPECT_EQ(errorOf(R"({"format": "cg-costs", "version": 1, "costs": {}, "x": 1})"),
            "invalid cost profile: unknown key 'x'");
  EXPECT_EQ(errorOf(R"({"format": "cg-costs", "version": 1, "costs": {"grad": 1}})"),
            "invalid cost profile: costs.grad: expected \"Class::method\" or \"actor.method\"");
  EXPECT_EQ(errorOf(R"({"format": "cg-costs", "version": 1, "costs": {"a.f": "1"}})"),
            "invalid cost profile: costs.a.f: expected a number");
  EXPECT_EQ(errorOf(R"({"format": "cg-costs", "version": 1, "costs": {"a.f": -1}})"),
            "invalid cost profile: costs.a.f: a cost must be finite and not negative");
  EXPECT_EQ(errorOf("{"), "invalid cost profile: parse error at line 1, column 2: syntax error "
                          "while parsing object key - "
                          "unexpected end of input; expected string literal");
}

} // namespace
} // namespace cg::schedule
