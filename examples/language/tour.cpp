// tour.cpp - runs every graph of tour.cg.cpp and prints what it returns.
#include "language_tour.cg.hpp"

#include <cstdio>

int main() {
  std::printf("two_inputs: %s\n", cg::launch<&two_inputs>().execute(3, "ab").get().c_str());

  auto [scaled, named] = cg::launch<&constants>().execute(5).get();
  std::printf("constants:  %d %s\n", scaled, named.c_str());

  // Constructor arguments given at launch replace the graph's (here: a scale
  // of 5 and another name for the actor 'triple').
  cg::Graph<&constants>::Constructors constructors;
  constructors.triple = {5, "quintupler"};
  auto [scaled5, named5] = cg::launch<&constants>(constructors).execute(5).get();
  std::printf("constants:  %d %s (constructed at launch)\n", scaled5, named5.c_str());

  std::printf("diamond:    %d\n", cg::launch<&diamond>().execute(10).get());

  auto [next_quotient, remainder] = cg::launch<&tuples>().execute(17, 5).get();
  std::printf("tuples:     %d %d\n", next_quotient, remainder);

  std::printf("loop:       %d\n", cg::launch<&loop>().execute(1).get());

  shop::Receipt receipt =
      cg::launch<&structs>().execute(shop::Order{7, "tea", {1.5, 2.25}, "green"}).get();
  std::printf("structs:    order %d, %zu x %s, total %.2f, note %s\n", receipt.order.id,
              static_cast<size_t>(receipt.lines.at("tea")), receipt.order.item.c_str(),
              receipt.total, receipt.order.note.value_or("-").c_str());

  shop::Money tip = cg::launch<&custom_codec>().execute(shop::Money(2000)).get();
  std::printf("custom:     tip %lld cents\n", tip.cents());

  auto counter = cg::launch<&counting>();
  int first = counter.execute(1).get();
  int second = counter.execute(5).get();
  std::printf("counting:   %d %d\n", first, second);
}
