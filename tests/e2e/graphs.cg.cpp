// graphs.cg.cpp - graphs for the end-to-end tests beyond the quickstart.
#include <cg/cg.hpp>
#include <cg/tensor.hpp>

#ifndef CG_E2E_GRAPHS_CONFIGURED
#error "the definitions of the e2e_graphs target must reach every compile of this source"
#endif

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

// Whether `p` points into a channel's shared memory (a "cg." memfd mapping of
// this process): what reading in place means.
inline bool in_channel_memory(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:cg.") == std::string::npos)
      continue;
    const std::uintptr_t start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    const std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (address >= start && address < end)
      return true;
  }
  return false;
}

// View parameters read their values where they arrived.
struct CG_ACTOR Inspector {
  std::string sum_and_place(std::span<const double> values) {
    double sum = 0;
    for (double v : values)
      sum += v;
    return std::to_string(static_cast<long>(sum)) +
           (in_channel_memory(values.data()) ? " in place" : " copied");
  }
  std::string length_and_place(std::string_view text) {
    return std::to_string(text.size()) + (in_channel_memory(text.data()) ? " in place" : " copied");
  }
  std::vector<double> ramp(int n) {
    std::vector<double> values(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      values[static_cast<std::size_t>(i)] = i;
    return values;
  }
};

struct CG_ACTOR Calculator {
  int add_one(int x) {
    if (x < 0)
      throw std::invalid_argument("negative input " + std::to_string(x));
    return x + 1;
  }
  int sum(int x, int y) { return x + y; }
  int shout(int n) { throw std::runtime_error(std::string(static_cast<std::size_t>(n), '!')); }
  std::string repeat(int n) { return std::string(static_cast<std::size_t>(n), 'x'); }
  std::vector<double> scale(std::vector<double> v, int factor) {
    for (double& d : v)
      d *= factor;
    return v;
  }
  // Takes its bytes by value and gives them back: what a large value costs.
  std::vector<std::uint8_t> pass(std::vector<std::uint8_t> bytes) { return bytes; }
};

// Prints to its standard output and error: what the driver tags.
struct CG_ACTOR Talker {
  Talker() { std::printf("constructed in %d\n", static_cast<int>(::getpid())); }
  ~Talker() { std::printf("destroyed in %d\n", static_cast<int>(::getpid())); }
  int say(int lines) {
    for (int i = 0; i < lines; ++i)
      std::printf("line %d of %d from %d\n", i, lines, static_cast<int>(::getpid()));
    std::fprintf(stderr, "a warning from %d\n", static_cast<int>(::getpid()));
    return lines;
  }
  // `lines` lines of `width` characters in one printf each, framed by the pid.
  int shout(int lines, int width) {
    const std::string filler(static_cast<std::size_t>(width), '=');
    for (int i = 0; i < lines; ++i)
      std::printf("%d:%s:%d\n", static_cast<int>(::getpid()), filler.c_str(),
                  static_cast<int>(::getpid()));
    return lines;
  }
  // A line left unfinished: the driver ends it when the process ends.
  int mumble(int n) {
    std::fprintf(stderr, "unfinished %d", n);
    return n;
  }
};

// Host tensors in and out: what crosses DLPack in Python.
struct CG_ACTOR TensorMath {
  // Each float32 element doubled (a contiguous tensor of any shape).
  cg::Tensor doubled(cg::Tensor t) {
    cg::Tensor out = cg::Tensor::empty(cg::DType::float32, t.shape());
    for (std::int64_t i = 0; i < t.numel(); ++i)
      out.data<float>()[i] = 2 * t.data<float>()[i];
    return out;
  }
  // The sum of a float32 tensor's elements, read where they arrived, and
  // where that was (threads mode: the driver's input tensor, if no copy).
  std::tuple<double, std::uint64_t> total(cg::TensorView t) {
    const float* p = t.data<float>();
    double sum = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i)
      sum += p[i];
    return {sum, reinterpret_cast<std::uintptr_t>(p)};
  }
};

// A plain struct crossing as a value (its codec is cgc's).
struct Point {
  int x = 0;
  double y = 0;
  std::string label;
};

// Dictionaries and optional values.
struct CG_ACTOR Counter {
  std::optional<int> total(std::map<std::string, int> counts, std::optional<int> extra) {
    if (counts.empty())
      return std::nullopt;
    int sum = extra.value_or(0);
    for (const auto& [name, count] : counts)
      sum += count;
    return sum;
  }
};

struct CG_ACTOR Mover {
  Point moved(Point p, int dx) {
    p.x += dx;
    p.label += "+" + std::to_string(dx);
    return p;
  }
};

// Stages whose methods take known times: what a profile measures.
struct CG_ACTOR Stage {
  static int after(int x, int microseconds) {
    std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
    return x;
  }
  int slow(int x) { return after(x, 3000); }
  int quick(int x) { return x; }
  int left(int x) { return after(x, 2000); }
  int right(int x) { return after(x, 2000); }
  int nap(int milliseconds) { return after(milliseconds, milliseconds * 1000); }
};

// a.add_one -> b.add_one: an error raised on a flows through b to the driver.
CG_GRAPH void adder(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  auto b = g.actor<Calculator>("b");
  g.output(b.bind<&Calculator::add_one>(a.bind<&Calculator::add_one>(g.input<int>())));
}

// Two paths joining: in -> a, in -> b, (a, b) -> c.
CG_GRAPH void diamond(cg::GraphBuilder& g) {
  auto in = g.input<int>();
  auto a = g.actor<Calculator>("a");
  auto b = g.actor<Calculator>("b");
  auto c = g.actor<Calculator>("c");
  g.output(
      c.bind<&Calculator::sum>(a.bind<&Calculator::add_one>(in), b.bind<&Calculator::add_one>(in)));
}

// Two tasks on one actor: the middle value never leaves the process.
CG_GRAPH void same_actor(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  auto once = a.bind<&Calculator::add_one>(g.input<int>());
  g.output(a.bind<&Calculator::add_one>(once));
}

// A result whose size the input chooses: for slot overflow.
CG_GRAPH void repeater(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  g.output(a.bind<&Calculator::repeat>(g.input<int>()));
}

// A method whose exception message is as long as the input says.
CG_GRAPH void shouter(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  auto b = g.actor<Calculator>("b");
  g.output(b.bind<&Calculator::add_one>(a.bind<&Calculator::shout>(g.input<int>())));
}

// A vector through two actors, and the same value consumed twice by one task.
CG_GRAPH void vectors(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  auto b = g.actor<Calculator>("b");
  auto factor = g.input<int>();
  auto scaled = a.bind<&Calculator::scale>(g.input<std::vector<double>>(), factor);
  g.output(b.bind<&Calculator::scale>(scaled, factor), b.bind<&Calculator::sum>(factor, factor));
}

// Bytes by value through two actors: driver -> a -> b -> driver.
CG_GRAPH void bytes_chain(cg::GraphBuilder& g) {
  auto a = g.actor<Calculator>("a");
  auto b = g.actor<Calculator>("b");
  g.output(
      b.bind<&Calculator::pass>(a.bind<&Calculator::pass>(g.input<std::vector<std::uint8_t>>())));
}

// Values read in place by span and string_view parameters: from the driver
// (slot and overflow buffer), and from another actor.
CG_GRAPH void in_place(cg::GraphBuilder& g) {
  auto [values, text, n] = g.input<std::vector<double>, std::string, int>();
  auto a = g.actor<Inspector>("a");
  auto b = g.actor<Inspector>("b");
  g.output(a.bind<&Inspector::sum_and_place>(values), a.bind<&Inspector::length_and_place>(text),
           b.bind<&Inspector::sum_and_place>(a.bind<&Inspector::ramp>(n)));
}

// Two actors that print.
CG_GRAPH void talkers(cg::GraphBuilder& g) {
  auto lines = g.input<int>();
  auto a = g.actor<Talker>("a");
  auto b = g.actor<Talker>("b");
  g.output(a.bind<&Talker::say>(lines), b.bind<&Talker::say>(lines));
}

// Two actors shouting long lines at once.
CG_GRAPH void shouters(cg::GraphBuilder& g) {
  auto [lines, width] = g.input<int, int>();
  auto a = g.actor<Talker>("a");
  auto b = g.actor<Talker>("b");
  g.output(a.bind<&Talker::shout>(lines, width), b.bind<&Talker::shout>(lines, width));
}

// One actor leaving a line unfinished.
CG_GRAPH void mumbler(cg::GraphBuilder& g) {
  auto a = g.actor<Talker>("a");
  g.output(a.bind<&Talker::mumble>(g.input<int>()));
}

// a's two tasks, bound left first: left waits for b's slow stage, right for
// c's quick one. Unit costs keep bind order; measured costs run right first.
CG_GRAPH void reorder(cg::GraphBuilder& g) {
  auto in = g.input<int>();
  auto a = g.actor<Stage>("a");
  auto b = g.actor<Stage>("b");
  auto c = g.actor<Stage>("c");
  auto late = b.bind<&Stage::slow>(in);
  auto early = c.bind<&Stage::quick>(in);
  g.output(a.bind<&Stage::left>(late), a.bind<&Stage::right>(early));
}

// One actor sleeping as long as its input says: a get() that waits.
CG_GRAPH void napper(cg::GraphBuilder& g) {
  auto a = g.actor<Stage>("a");
  g.output(a.bind<&Stage::nap>(g.input<int>()));
}

// a tensor through one actor.
CG_GRAPH void tensors(cg::GraphBuilder& g) {
  auto a = g.actor<TensorMath>("a");
  g.output(a.bind<&TensorMath::doubled>(g.input<cg::Tensor>()));
}

// a tensor read in place: its sum, and where its elements were.
CG_GRAPH void tensor_total(cg::GraphBuilder& g) {
  auto a = g.actor<TensorMath>("a");
  auto [sum, where] = a.bind<&TensorMath::total>(g.input<cg::Tensor>());
  g.output(sum, where);
}

// A struct through one actor, with a number beside it.
CG_GRAPH void points(cg::GraphBuilder& g) {
  auto [p, dx] = g.input<Point, int>();
  auto a = g.actor<Mover>("a");
  g.output(a.bind<&Mover::moved>(p, dx));
}

// A dictionary and an optional number in, an optional number out.
CG_GRAPH void totals(cg::GraphBuilder& g) {
  auto [counts, extra] = g.input<std::map<std::string, int>, std::optional<int>>();
  auto a = g.actor<Counter>("a");
  g.output(a.bind<&Counter::total>(counts, extra));
}
