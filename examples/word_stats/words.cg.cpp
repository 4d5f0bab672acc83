// words.cg.cpp - the word-statistics graph: text -> words -> counts -> report.
//
// Only #includes and graph functions: the actor classes are in stages.hpp
// and stages.cpp, so that editing the graph recompiles little.
#include <cg/cg.hpp>

#include "stages.hpp"

#include <string>

CG_GRAPH void word_stats(cg::GraphBuilder& g) {
  auto text = g.input<std::string>();
  auto tokenizer = g.actor<words::Tokenizer>("tokenizer");
  auto counter = g.actor<words::Counter>("counter");
  auto report = g.actor<words::Report>("report", 3);
  auto counts =
      counter.bind<&words::Counter::count>(tokenizer.bind<&words::Tokenizer::split>(text));
  g.output(report.bind<&words::Report::top_words>(counts, "top words"));
}
