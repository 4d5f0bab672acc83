// counter.cpp - Counter's methods, compiled once.
#include "counter.hpp"

Counter::Counter(int start) : total_(start) {}

int Counter::add(int amount) { return total_ += amount; }
