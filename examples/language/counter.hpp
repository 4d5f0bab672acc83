// counter.hpp - an actor split the usual C++ way: declared here, its methods
// defined in counter.cpp, compiled once and linked into the actor executable.
#pragma once

#include <cg/cg.hpp>

struct CG_ACTOR Counter {
  explicit Counter(int start);
  int add(int amount); // the running total after adding `amount`

private:
  int total_;
};
