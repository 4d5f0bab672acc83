// stages.hpp - the actor classes of the word-statistics graph, declared the
// usual C++ way; their methods are defined in stages.cpp, compiled once.
//
// They live here rather than in words.cg.cpp so that the graph source holds
// only #includes and CG_GRAPH functions: cgc then has the actor programs
// include this header instead of the graph source, and an edit to a graph
// recompiles the driver, the actor host and the programs it changes, never
// these classes (docs/getting-started.md, "Larger projects").
#pragma once

#include <cg/cg.hpp>

#include <map>
#include <string>
#include <vector>

namespace words {

struct CG_ACTOR Tokenizer {
  // The words of `text`, lower-case, without punctuation.
  std::vector<std::string> split(std::string text);
};

struct CG_ACTOR Counter {
  std::map<std::string, int> count(std::vector<std::string> words);
};

struct CG_ACTOR Report {
  explicit Report(int top);
  // "<title>: <word> x<n>, ..." for the `top` most frequent words, most
  // frequent first, ties in alphabetical order.
  std::string top_words(std::map<std::string, int> counts, std::string title);

private:
  int top_;
};

} // namespace words
