// A method of one class bound on an actor of another.
#include <cg/cg.hpp>

#include <string>

struct CG_ACTOR Id {
  int id(int x) { return x; }
};
struct CG_ACTOR Doubler {
  int twice(int x) { return 2 * x; }
};

CG_GRAPH void mixed_up(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("a");
  g.output(a.bind<&Doubler::twice>(g.input<int>()));  // expected-error {{'Doubler::twice' is a method of 'Doubler', but this actor's class is 'Id'; bind it on an actor of class 'Doubler', or bind a method of 'Id'}}
}

struct CG_ACTOR Pair {
  int sum(int x, int y) { return x + y; }
};
struct CG_ACTOR Words {
  std::string word(int x) { return std::to_string(x); }
};

// The wrong class is the mistake, whatever else the bind gets wrong: not the
// method's argument count, and not the argument errors its result leads to.
CG_GRAPH void wrong_class_first(cg::GraphBuilder& g) {
  auto a = g.actor<Id>("a");
  auto p = g.actor<Pair>("p");
  auto x = g.input<int>();
  auto lonely = a.bind<&Pair::sum>(x);  // expected-error {{'Pair::sum' is a method of 'Pair', but this actor's class is 'Id'; bind it on an actor of class 'Pair', or bind a method of 'Id'}}
  g.output(lonely, p.bind<&Pair::sum>(a.bind<&Words::word>(x), x));  // expected-error {{'Words::word' is a method of 'Words', but this actor's class is 'Id'; bind it on an actor of class 'Words', or bind a method of 'Id'}}
}
