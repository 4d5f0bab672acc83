// std_types_test.cpp - the standard types with codecs cross actors whole,
// as processes and as threads (CG_MODE).
#include "e2e_std_types.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace std::chrono_literals;
using StdTypes = cg_test::NoLeftovers;

TEST_F(StdTypes, VariantSetUnorderedSetDequeAndDurationComeBackEqual) {
  auto graph = cg::launch<&flat_std_types>();
  const Choice choice = std::string("second");
  const std::set<std::string> words{"delta", "", "alpha"};
  const std::unordered_set<int> ids{7, -3, 1 << 20};
  const std::deque<double> queue{0.5, -1e300, 3.0};
  auto [choice_back, words_back, ids_back, queue_back, wait_back] =
      graph.execute(choice, words, ids, queue, 1500us).get();
  EXPECT_EQ(choice_back, choice);
  EXPECT_EQ(choice_back.index(), 1u);
  EXPECT_EQ(words_back, words);
  EXPECT_EQ(ids_back, ids);
  EXPECT_EQ(queue_back, queue);
  EXPECT_EQ(wait_back, 1500us);

  // Again, each empty or holding another alternative: the graph is reused.
  auto [other, no_words, no_ids, no_queue, no_wait] =
      graph.execute(Choice(2.25), {}, {}, {}, 0us).get();
  EXPECT_EQ(other, Choice(2.25));
  EXPECT_TRUE(no_words.empty());
  EXPECT_TRUE(no_ids.empty());
  EXPECT_TRUE(no_queue.empty());
  EXPECT_EQ(no_wait, 0us);
}

TEST_F(StdTypes, NestedStandardTypesComeBackEqual) {
  auto graph = cg::launch<&nested_std_types>();
  const Slots slots{std::deque<int>{4, 5, 6}, 90s};
  const Tagged tagged{{"count", 3},
                      {"tags", std::set<std::string>{"red", "blue"}},
                      {"none", std::set<std::string>{}}};
  const Timings timings{20ms, std::nullopt, 0ms, std::nullopt};
  auto [slots_back, tagged_back, timings_back] = graph.execute(slots, tagged, timings).get();
  EXPECT_EQ(slots_back, slots);
  EXPECT_EQ(tagged_back, tagged);
  EXPECT_EQ(timings_back, timings);
}

} // namespace
