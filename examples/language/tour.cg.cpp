// tour.cg.cpp - the graph language, one small graph per feature.
#include "counter.hpp"

#include <cg/cg.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace shop {

// Plain structs cross actor boundaries as they are: cgc generates their
// serializers from their fields, nested ones included.
struct Order {
  int id;
  std::string item;
  std::vector<double> prices;
  std::optional<std::string> note;
};

struct Receipt {
  Order order;
  double total;
  std::map<std::string, int> lines;
};

// Not an aggregate (private state): it says how to serialize itself.
class Money {
public:
  Money() = default;
  explicit Money(long long cents) : cents_(cents) {}
  long long cents() const { return cents_; }

private:
  long long cents_ = 0;
};

} // namespace shop

// The customization point for types that are not plain structs.
template <> struct cg::Codec<shop::Money> {
  static std::size_t size(const shop::Money&) { return sizeof(long long); }
  static void encode(cg::Encoder& out, const shop::Money& money) {
    long long cents = money.cents();
    out.write(&cents, sizeof cents);
  }
  static shop::Money decode(cg::Decoder& in) {
    long long cents = 0;
    in.read(&cents, sizeof cents);
    return shop::Money(cents);
  }
};

struct CG_ACTOR Text {
  std::string repeat(int times, std::string word) {
    std::string out;
    for (int i = 0; i < times; ++i)
      out += word;
    return out;
  }
  std::string tag(std::string text, std::string label) { return label + ":" + text; }
};

struct CG_ACTOR Math {
  Math() = default;
  Math(int scale, std::string name) : scale_(scale), name_(std::move(name)) {
    if (scale < 0)
      throw std::invalid_argument("scale must not be negative");
  }

  int scaled(int x, int extra) { return x * scale_ + extra; }
  std::string name() { return name_; }
  std::tuple<int, int> divmod(int a, int b) { return {a / b, a % b}; }
  int add_one(int x) { return x + 1; }
  int sum(int a, int b) { return a + b; }

private:
  int scale_ = 1;
  std::string name_ = "math";
};

struct CG_ACTOR Till {
  shop::Money tip(shop::Money bill, int percent) {
    return shop::Money(bill.cents() * percent / 100);
  }
  shop::Receipt checkout(shop::Order order) {
    shop::Receipt receipt{order, 0, {}};
    for (double price : order.prices)
      receipt.total += price;
    receipt.lines[order.item] = static_cast<int>(order.prices.size());
    return receipt;
  }
};

// Several positional inputs: execute(3, "ab").
CG_GRAPH void two_inputs(cg::GraphBuilder& g) {
  auto [times, word] = g.input<int, std::string>();
  auto text = g.actor<Text>("text");
  g.output(text.bind<&Text::repeat>(times, word));
}

// Constants: as bind arguments, and as constructor arguments of an actor.
CG_GRAPH void constants(cg::GraphBuilder& g) {
  auto triple = g.actor<Math>("triple", 3, "tripler");
  auto text = g.actor<Text>("text");
  auto x = g.input<int>();
  g.output(triple.bind<&Math::scaled>(x, 100),
           text.bind<&Text::tag>(triple.bind<&Math::name>(), "name"));
}

// One value to several actors and back together: a diamond.
CG_GRAPH void diamond(cg::GraphBuilder& g) {
  auto x = g.input<int>();
  auto left = g.actor<Math>("left");
  auto right = g.actor<Math>("right");
  auto join = g.actor<Math>("join");
  g.output(join.bind<&Math::sum>(left.bind<&Math::add_one>(x), right.bind<&Math::add_one>(x)));
}

// A method returning std::tuple, unpacked; each part goes its own way.
CG_GRAPH void tuples(cg::GraphBuilder& g) {
  auto [a, b] = g.input<int, int>();
  auto math = g.actor<Math>("math");
  auto next = g.actor<Math>("next");
  auto [quotient, remainder] = math.bind<&Math::divmod>(a, b);
  g.output(next.bind<&Math::add_one>(quotient), remainder);
}

// Ordinary C++ at compile time: a constexpr helper, a loop over actors with
// computed names, an `if` on a constant.
constexpr int stage_count() { return 4; }

CG_GRAPH void loop(cg::GraphBuilder& g) {
  auto value = g.input<int>();
  for (int i = 0; i < stage_count(); ++i) {
    auto stage = g.actor<Math>(cg::indexed_name("stage", i), i + 1, "stage");
    if (i % 2 == 0)
      value = stage.bind<&Math::scaled>(value, 0); // x * (i + 1)
    else
      value = stage.bind<&Math::add_one>(value);
  }
  g.output(value);
}

// User structs in and out.
CG_GRAPH void structs(cg::GraphBuilder& g) {
  auto till = g.actor<Till>("till");
  g.output(till.bind<&Till::checkout>(g.input<shop::Order>()));
}

// A type with its own cg::Codec.
CG_GRAPH void custom_codec(cg::GraphBuilder& g) {
  auto till = g.actor<Till>("till");
  g.output(till.bind<&Till::tip>(g.input<shop::Money>(), 15));
}

// An actor whose methods live in counter.cpp, with state across executions.
CG_GRAPH void counting(cg::GraphBuilder& g) {
  auto counter = g.actor<Counter>("counter", 10);
  g.output(counter.bind<&Counter::add>(g.input<int>()));
}
