// cg/builder.hpp - The constexpr graph builder used inside CG_GRAPH functions.
//
// A graph function is ordinary C++ that cgc evaluates at compile time with
// Clang's constant evaluator:
//
//   CG_GRAPH void chain(cg::GraphBuilder& g) {
//     auto a = g.actor<EchoActor>("a");
//     auto b = g.actor<EchoActor>("b");
//     auto in = g.input<std::string>();
//     g.output(b.bind<&EchoActor::echo>(a.bind<&EchoActor::echo>(in)));
//   }
//
// The builder only records what the function asks for, as a flat list of
// `detail::Record`s; cgc reads that list back (see detail::encode) and owns
// every decision after that. Because it runs inside the constant evaluator it
// holds no std::string (not constexpr in libstdc++ 12): names are copied into
// fixed arrays, and classes, types and methods are identified by the address
// of a template variable instantiated for them, which cgc maps back to the
// declaration.
//
// Argument types are checked by the C++ compiler: bind<&C::m>(v...) only
// accepts a cg::Value<T> whose T is the decayed type of m's parameter.
#pragma once

#include <array>
#include <cstddef>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <vector>

namespace cg {

class GraphBuilder;

namespace detail {

// Identity tags: their addresses name a type or a method in the records.
template <class T> inline constexpr char type_tag = 0;
template <auto Method> inline constexpr char method_tag = 0;

enum class RecordKind : int { actor = 1, input = 2, task = 3, argument = 4, output = 5 };

inline constexpr std::size_t kMaxNameLength = 47;

/// One thing the graph function did. Fields by kind:
///   actor:    tag = type_tag<Class>, name = instance name
///   input:    a = value id, b = input position, tag = type_tag<T>
///   task:     a = actor index, b = result value id, tag = method_tag<M>;
///             followed by one `argument` record per parameter
///   argument: a = value id
///   output:   a = value id
struct Record {
  RecordKind kind{};
  int a = 0;
  int b = 0;
  const void* tag = nullptr;
  char name[kMaxNameLength + 1] = {};
  unsigned line = 0;
  unsigned column = 0;
};

// Reached only when a graph breaks a builder rule. Being non-constexpr, a call
// makes constant evaluation fail, and Clang's note shows this call, message
// included, at the offending line of the graph.
void graph_error(const char* message);

template <class M> struct method_traits {
  static constexpr bool is_member = false;
};
template <class R, class C, class... P> struct method_traits<R (C::*)(P...)> {
  static constexpr bool is_member = true;
  using result = R;
  using owner = C;
  using params = std::tuple<P...>;
};
template <class R, class C, class... P>
struct method_traits<R (C::*)(P...) const> : method_traits<R (C::*)(P...)> {};
template <class R, class C, class... P>
struct method_traits<R (C::*)(P...) noexcept> : method_traits<R (C::*)(P...)> {};
template <class R, class C, class... P>
struct method_traits<R (C::*)(P...) const noexcept> : method_traits<R (C::*)(P...)> {};

template <auto M> using traits = method_traits<decltype(M)>;
template <auto M>
inline constexpr std::size_t arity_v = std::tuple_size_v<typename traits<M>::params>;
template <auto M, std::size_t I>
using param_t = std::remove_cvref_t<std::tuple_element_t<I, typename traits<M>::params>>;

} // namespace detail

/// A value flowing through the graph: a graph input or a task's result.
/// Only a handle: the data exists at run time, in the actor processes.
template <class T> class Value {
public:
  using type = T;
  constexpr int id() const { return id_; }

private:
  friend class GraphBuilder;
  template <class C> friend class Actor;
  constexpr explicit Value(int id) : id_(id) {}
  int id_;
};

namespace detail {
// A bind argument of parameter type P: exactly a Value<P>. (Constants come
// with the full graph language.)
template <class P> struct BindArg {
  constexpr BindArg(Value<P> v) : id(v.id()) {}
  int id;
};
template <auto M, std::size_t I> using arg_t = BindArg<param_t<M, I>>;
} // namespace detail

/// An actor instance declared with g.actor<C>(name): one process at run time.
template <class C> class Actor {
public:
  // bind<&C::method>(args...) adds a task running `method` on this actor and
  // returns its result. Overloads per arity keep the parameter types
  // non-deduced, so a mismatched argument is an ordinary C++ type error and
  // the call site's location is captured.
  template <auto M>
    requires(detail::arity_v<M> == 0)
  constexpr auto bind(std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, {});
  }
  template <auto M>
    requires(detail::arity_v<M> == 1)
  constexpr auto bind(detail::arg_t<M, 0> a0,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, {a0.id});
  }
  template <auto M>
    requires(detail::arity_v<M> == 2)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, {a0.id, a1.id});
  }
  template <auto M>
    requires(detail::arity_v<M> == 3)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, {a0.id, a1.id, a2.id});
  }
  template <auto M>
    requires(detail::arity_v<M> == 4)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      detail::arg_t<M, 3> a3,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, {a0.id, a1.id, a2.id, a3.id});
  }

private:
  friend class GraphBuilder;
  constexpr Actor(GraphBuilder* graph, int index) : graph_(graph), index_(index) {}

  template <auto M> constexpr auto add(std::source_location loc, std::initializer_list<int> args) const;

  GraphBuilder* graph_;
  int index_;
};

/// What a CG_GRAPH function receives. See the file comment.
class GraphBuilder {
public:
  constexpr GraphBuilder() = default;

  /// Declares an actor instance named `name` (unique in the graph).
  template <class C>
  constexpr Actor<C> actor(const char* name,
                           std::source_location loc = std::source_location::current()) {
    static_assert(std::is_class_v<C>, "g.actor<C>: C must be a class marked CG_ACTOR");
    detail::Record r = located(detail::RecordKind::actor, loc);
    r.tag = &detail::type_tag<C>;
    copy_name(r, name);
    records_.push_back(r);
    return Actor<C>(this, actor_count_++);
  }

  /// Declares the graph's input, passed to execute() at run time.
  template <class T>
  constexpr Value<T> input(std::source_location loc = std::source_location::current()) {
    static_assert(std::is_same_v<T, std::remove_cvref_t<T>>,
                  "g.input<T>: T must be a plain value type (no reference, no const)");
    detail::Record r = located(detail::RecordKind::input, loc);
    r.a = value_count_;
    r.b = input_count_++;
    r.tag = &detail::type_tag<T>;
    records_.push_back(r);
    return Value<T>(value_count_++);
  }

  /// Declares the graph's outputs, returned by get() in this order.
  template <class... T>
  constexpr void output(Value<T>... values) {
    static_assert(sizeof...(T) > 0, "g.output() needs at least one value");
    (add_output(values.id()), ...);
  }

  constexpr const std::vector<detail::Record>& records() const { return records_; }

private:
  template <class C> friend class Actor;

  static constexpr detail::Record located(detail::RecordKind kind, std::source_location loc) {
    detail::Record r;
    r.kind = kind;
    r.line = loc.line();
    r.column = loc.column();
    return r;
  }

  static constexpr void copy_name(detail::Record& r, const char* name) {
    std::size_t i = 0;
    for (; name[i] != '\0'; ++i) {
      if (i == detail::kMaxNameLength)
        detail::graph_error("actor name is longer than 47 characters");
      r.name[i] = name[i];
    }
    if (i == 0)
      detail::graph_error("actor name is empty");
  }

  constexpr void add_output(int value) {
    detail::Record r;
    r.kind = detail::RecordKind::output;
    r.a = value;
    records_.push_back(r);
  }

  constexpr int add_task(int actor, const void* method, std::source_location loc,
                         std::initializer_list<int> args) {
    detail::Record r = located(detail::RecordKind::task, loc);
    r.a = actor;
    r.b = value_count_;
    r.tag = method;
    records_.push_back(r);
    for (int arg : args) {
      detail::Record argument;
      argument.kind = detail::RecordKind::argument;
      argument.a = arg;
      records_.push_back(argument);
    }
    return value_count_++;
  }

  std::vector<detail::Record> records_;
  int actor_count_ = 0;
  int input_count_ = 0;
  int value_count_ = 0;
};

template <class C>
template <auto M>
constexpr auto Actor<C>::add(std::source_location loc, std::initializer_list<int> args) const {
  using Traits = detail::traits<M>;
  static_assert(Traits::is_member,
                "bind<&C::method>: the method must be a non-static member function");
  if constexpr (Traits::is_member) {
    static_assert(std::is_base_of_v<typename Traits::owner, C>,
                  "bind<&C::method>: the method does not belong to this actor's class");
    using R = std::remove_cvref_t<typename Traits::result>;
    static_assert(!std::is_void_v<R>, "bind<&C::method>: the method must return a value");
    return Value<R>(graph_->add_task(index_, &detail::method_tag<M>, loc, args));
  }
}

namespace detail {

/// What cgc evaluates, in two steps so that a graph that cannot be evaluated
/// is reported on the first:
///   constexpr std::size_t n = cg::detail::record_count<&graph>();
///   constexpr auto records = cg::detail::encode<&graph, n>();
/// The graph function runs twice; both runs agree because it is a pure
/// constant expression.
template <auto Graph> constexpr std::size_t record_count() {
  GraphBuilder g;
  Graph(g);
  return g.records().size();
}

template <auto Graph, std::size_t Count> constexpr auto encode() {
  GraphBuilder g;
  Graph(g);
  std::array<Record, Count> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = g.records()[i];
  return out;
}

} // namespace detail
} // namespace cg
