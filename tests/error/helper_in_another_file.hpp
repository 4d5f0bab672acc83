// Helpers for helper_in_another_file.cg.cpp: a graph built partly by functions
// in a header. Their binds and actors are reported at this file's lines.
#pragma once

#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Echo {
  std::string echo(std::string msg) { return msg; }
};

constexpr cg::Value<std::string> echo_twice(cg::GraphBuilder& g, cg::Value<std::string> in) {
  auto a = g.actor<Echo>("a");  // expected-note {{first declared here}}
  a.bind<&Echo::echo>(in);  // expected-error {{result of 'a.echo' is never used; pass it to another task or to g.output(...)}}
  return a.bind<&Echo::echo>(in);
}

constexpr auto another_a(cg::GraphBuilder& g) {
  return g.actor<Echo>("a");  // expected-error {{actor name 'a' is already used in graph 'helped'}}
}
