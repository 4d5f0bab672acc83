// restart_graphs.cg.cpp - graphs whose actors are killed and restarted (restart_test.cpp).
//
// Each Counter appends to the value how many calls it has served since it
// was constructed, so that a result says which life of each actor made it:
// a restarted actor counts from 1 again, one that lived on keeps counting.
#include <cg/cg.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

struct CG_ACTOR Counter {
  std::int64_t calls = 0;
  std::vector<std::int64_t> count(std::vector<std::int64_t> v) {
    v.push_back(++calls);
    return v;
  }
};

// Joins two Counters' values: the first whole, then the second's count, then
// its own.
struct CG_ACTOR Joiner {
  std::int64_t calls = 0;
  std::vector<std::int64_t> join(std::vector<std::int64_t> first,
                                 std::vector<std::int64_t> second) {
    first.push_back(second.back());
    first.push_back(++calls);
    return first;
  }
};

// Cannot be constructed while the file CG_TEST_REFUSE_FILE names exists: a
// restart that fails each time it is tried.
struct CG_ACTOR Refuser {
  Refuser() {
    const char* file = std::getenv("CG_TEST_REFUSE_FILE");
    if (file != nullptr && std::ifstream(file))
      throw std::runtime_error(std::string("refusing to start while ") + file + " exists");
  }
  std::int64_t echo(std::int64_t x) { return x; }
};

CG_GRAPH void counted_pair(cg::GraphBuilder& g) {
  auto a = g.actor<Counter>("a");
  auto b = g.actor<Counter>("b");
  g.output(b.bind<&Counter::count>(a.bind<&Counter::count>(g.input<std::vector<std::int64_t>>())));
}

CG_GRAPH void counted_chain(cg::GraphBuilder& g) {
  auto a = g.actor<Counter>("a");
  auto b = g.actor<Counter>("b");
  auto c = g.actor<Counter>("c");
  g.output(c.bind<&Counter::count>(
      b.bind<&Counter::count>(a.bind<&Counter::count>(g.input<std::vector<std::int64_t>>()))));
}

CG_GRAPH void refusing(cg::GraphBuilder& g) {
  auto a = g.actor<Refuser>("a");
  g.output(a.bind<&Refuser::echo>(g.input<std::int64_t>()));
}

// a's value read by two actors, b and c, whose values d joins:
// {input, a, b, c, d}.
CG_GRAPH void fanned_out(cg::GraphBuilder& g) {
  auto a = g.actor<Counter>("a");
  auto b = g.actor<Counter>("b");
  auto c = g.actor<Counter>("c");
  auto d = g.actor<Joiner>("d");
  auto counted = a.bind<&Counter::count>(g.input<std::vector<std::int64_t>>());
  g.output(
      d.bind<&Joiner::join>(b.bind<&Counter::count>(counted), c.bind<&Counter::count>(counted)));
}
