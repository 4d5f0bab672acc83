// std_types.cg.cpp - standard types through two actors and back: each graph
// sends its inputs from the driver to one actor, on to another (over a
// channel, not within one process), and back to the driver.
#include <cg/cg.hpp>

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <variant>

using Choice = std::variant<int, std::string, double>;
using Tagged = std::map<std::string, std::variant<int, std::set<std::string>>>;
using Timings = std::deque<std::optional<std::chrono::milliseconds>>;
using Slots = std::array<std::variant<std::deque<int>, std::chrono::seconds>, 2>;

// Each method hands back what it was given: any change on the way is the codecs'.
struct CG_ACTOR Relay {
  Choice choice(Choice v) { return v; }
  std::set<std::string> words(std::set<std::string> v) { return v; }
  std::unordered_set<int> ids(std::unordered_set<int> v) { return v; }
  std::deque<double> queue(std::deque<double> v) { return v; }
  std::chrono::microseconds wait(std::chrono::microseconds v) { return v; }
  Slots slots(Slots v) { return v; }
  Tagged tagged(Tagged v) { return v; }
  Timings timings(Timings v) { return v; }
};

CG_GRAPH void flat_std_types(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  auto b = g.actor<Relay>("b");
  g.output(b.bind<&Relay::choice>(a.bind<&Relay::choice>(g.input<Choice>())),
           b.bind<&Relay::words>(a.bind<&Relay::words>(g.input<std::set<std::string>>())),
           b.bind<&Relay::ids>(a.bind<&Relay::ids>(g.input<std::unordered_set<int>>())),
           b.bind<&Relay::queue>(a.bind<&Relay::queue>(g.input<std::deque<double>>())),
           b.bind<&Relay::wait>(a.bind<&Relay::wait>(g.input<std::chrono::microseconds>())));
}

CG_GRAPH void nested_std_types(cg::GraphBuilder& g) {
  auto a = g.actor<Relay>("a");
  auto b = g.actor<Relay>("b");
  g.output(b.bind<&Relay::slots>(a.bind<&Relay::slots>(g.input<Slots>())),
           b.bind<&Relay::tagged>(a.bind<&Relay::tagged>(g.input<Tagged>())),
           b.bind<&Relay::timings>(a.bind<&Relay::timings>(g.input<Timings>())));
}
