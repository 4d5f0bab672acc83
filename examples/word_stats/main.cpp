// main.cpp - the word-statistics graph over one text.
#include "word_stats.cg.hpp"

#include <iostream>
#include <string>

int main() {
  auto graph = cg::launch<&word_stats>();
  std::cout << graph.execute(std::string("The cat saw the dog; the dog saw a bird.")).get() << "\n";
}
