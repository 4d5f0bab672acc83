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
// What a graph may say:
//   g.actor<C>(name, ctor_args...)     an actor instance (one process); the
//                                      constructor arguments are constants
//   g.input<T>() / g.input<A, B>()     the inputs: a Value, or a tuple of them
//   a.bind<&C::m>(args...)             a task; each arg a Value or a constant;
//                                      a method returning std::tuple<X, Y>
//                                      gives std::tuple<Value<X>, Value<Y>>
//   g.output(values...)                the outputs, in order
//   g.actor<C>(name).host(1)           the actor runs on logical host 1 (0: the
//                                      driver's, the default); channels between
//                                      hosts are TCP (cg/placement.hpp)
//   cg::indexed_name("w", i)           "w0", "w1", ... for actors in loops
//   v.with_tensor_transport(cg::transport::nccl)
//                                      how v reaches tasks on other actors:
//                                      GPU to GPU instead of shared memory
//   v.with_tensor_transport(cg::device::cuda)
//                                      a cg::Tensor delivered on the readers'
//                                      GPU (cg::device::cpu: in host memory);
//                                      it crosses shared memory on the host
//   g.actor<C>(name).gpus(n)           the actor process sees n GPUs of its
//                                      own (CUDA_VISIBLE_DEVICES, see launch())
//   cg::allreduce(g, {x0, x1}, cg::ReduceOp::sum), cg::allgather(g, {...}),
//   cg::reducescatter(g, {...}, op)    a collective: one rank per value, each
//                                      run by the actor that produced it; one
//                                      result value per rank, in rank order
//   g.cost<&C::m>(2.5)                 the estimated run time of every bind of
//                                      C::m (any unit), for `cgc --schedule=cost`
//
// The builder only records what the function asks for, as a flat list of
// `detail::Record`s plus a pool of text (names, string constants); cgc reads
// them back (see detail::encode) and owns every decision after that. Because
// it runs inside the constant evaluator it holds no std::string (not constexpr
// in libstdc++ 12). Classes, types and methods are identified by the address
// of a template variable instantiated for them, which cgc maps back to the
// declaration.
//
// It is written for the evaluator's speed, which sets how large a graph cgc
// can compile in reasonable time: each call, object and copy costs about a
// microsecond of evaluation, so a bind writes its records straight into the
// array cgc's probe hands the builder (no std::vector, no reallocation, no
// temporary containers), and a builder made by the user (no array) only counts.
//
// Argument types are checked by the C++ compiler: bind<&C::m>(v...) accepts,
// for a parameter of type P, a cg::Value<P> or a constant convertible to P.
//
// One file, a little over 700 lines: it is the whole of what a graph function
// may call, and cgc's probe evaluates it as one piece (detail::encode() below).
#pragma once

#include <cg/detail/graph_records.hpp>
#include <cg/detail/in_place.hpp>
#include <cg/detail/method_traits.hpp>
#include <cg/device.hpp>
#include <cg/reduce_op.hpp>
#include <cg/transport.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

// Records are built with designated initializers that name only the fields
// their kind uses; the others are zero, as meant (GCC's -Wextra would say so).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif

namespace cg {

class GraphBuilder;
template <class C> class Actor;

namespace detail {
template <class P> struct BindArg;
struct Collectives;

/// A constant argument: its record, and for a string literal the characters
/// the builder copies into the text pool when it stores the record.
struct Constant {
  Record record;
  const char* string;
};

/// Breaks constant evaluation on purpose. Clang's note for the failed call
/// shows its argument, so cgc can print `message` at the graph's line.
constexpr void graph_error(const char* message) {
  if (message)
    throw message; // not a constant expression: evaluation stops here
}

/// Types whose constants can be embedded in generated code.
template <class T>
inline constexpr bool is_embeddable_v =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>;

/// A constant of type T: its type's tag and its value (c = 1 marks text).
template <class T, class U> constexpr Constant make_constant(const U& value) {
  if constexpr (std::is_same_v<T, std::string>)
    return {{.kind = RecordKind::constant, .c = 1, .tag = &type_tag<T>}, value}; // a literal
  else if constexpr (std::is_floating_point_v<T>)
    return {{.kind = RecordKind::constant,
             .tag = &type_tag<T>,
             .floating = static_cast<double>(static_cast<T>(value))},
            nullptr};
  else
    return {{.kind = RecordKind::constant,
             .tag = &type_tag<T>,
             .integer = static_cast<long long>(static_cast<T>(value))},
            nullptr};
}

} // namespace detail

/// An actor instance's name: a string literal, or cg::indexed_name(...).
/// It refers to the characters it is made from (a literal lives for ever);
/// g.actor() copies them. A name is an identifier (letters, digits and '_',
/// not starting with a digit): it names the actor in generated code, in file
/// names, placement files and messages, where any other character would need
/// quoting or could collide ('a-b' and 'a_b').
class ActorName {
public:
  static constexpr std::size_t max_length = 63;
  constexpr ActorName(const char* name) : text_(name) {
    for (; name[size_] != '\0'; ++size_) {
      if (size_ == max_length)
        detail::graph_error("actor name is longer than 63 characters");
      check_character(name[size_], size_ == 0);
    }
    if (size_ == 0)
      detail::graph_error("actor name is empty");
  }

private:
  friend class GraphBuilder;
  friend constexpr ActorName indexed_name(const char* prefix, int index);

  static constexpr void check_character(char c, bool first) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && !first))
      detail::graph_error("an actor name may hold only letters, digits and '_', "
                          "and cannot start with a digit");
  }
  constexpr ActorName(const char* prefix, std::size_t size, int index)
      : text_(prefix), size_(size), index_(index) {}

  const char* text_;
  std::size_t size_ = 0; // of text_, at most max_length
  int index_ = -1;       // indexed_name: written after text_ in decimal (within max_length)
};

/// `prefix` followed by `index` in decimal: indexed_name("worker", 3) is "worker3".
constexpr ActorName indexed_name(const char* prefix, int index) {
  std::size_t n = 0;
  for (; prefix[n] != '\0' && n < ActorName::max_length; ++n)
    ActorName::check_character(prefix[n], n == 0);
  if (index < 0)
    detail::graph_error("indexed_name: the index must not be negative");
  return ActorName(prefix, n, index);
}

/// A parameter that also captures where its argument was written: how
/// g.actor(name, args...) knows its call site despite the trailing pack.
template <class T> struct Located {
  template <class U>
    requires std::is_convertible_v<const U&, T>
  constexpr Located(const U& v, std::source_location l = std::source_location::current())
      : value(v), loc(l) {}
  T value;
  std::source_location loc;
};

/// A value flowing through the graph: a graph input or a task's result.
/// Only a handle: the data exists at run time, in the actor processes.
template <class T> class Value {
public:
  using type = T;
  constexpr int id() const { return id_; }

  /// Sends this value to tasks on other actors over `transport` (see
  /// cg::transport) and returns it: `a.bind<&A::f>(x).with_tensor_transport(
  /// cg::transport::nccl)`. Tasks on the producing actor read it in memory.
  constexpr Value
  with_tensor_transport(TensorTransport transport,
                        std::source_location loc = std::source_location::current()) const;

  /// Delivers this value (a cg::Tensor, cgc checks) to tasks on other actors,
  /// and to the driver, on `device`: it crosses shared memory as a host
  /// tensor (a CUDA result is copied to the host first) and each reader copies
  /// it to `device` (cg::device::cuda: the first GPU the reader sees). Tasks
  /// on the producing actor read it as it was made.
  constexpr Value
  with_tensor_transport(Device device,
                        std::source_location loc = std::source_location::current()) const;

private:
  friend class GraphBuilder;
  friend struct detail::Collectives;
  template <class C> friend class Actor;
  template <class P> friend struct detail::BindArg;
  constexpr Value(GraphBuilder* graph, int id) : graph_(graph), id_(id) {}
  GraphBuilder* graph_;
  int id_;
};

namespace detail {
template <class T> struct is_value : std::false_type {};
template <class T> struct is_value<Value<T>> : std::true_type {};

// A bind argument for a parameter of type P: a Value<P>, or a constant.
// Kept small: one is made per argument of every bind.
template <class P> struct BindArg {
  constexpr BindArg(Value<P> v) : graph(v.graph_), id(v.id_), none() {}
  template <class U>
    requires(!is_value<std::remove_cvref_t<U>>::value && std::is_convertible_v<const U&, P>)
  constexpr BindArg(const U& value) : graph(nullptr), id(-1), constant(constant_of(value)) {}

  const GraphBuilder* graph;
  int id; // -1: a constant
  union {
    char none; // a value: nothing more to say (and nothing to initialize)
    Constant constant;
  };

private:
  template <class U> static constexpr Constant constant_of(const U& value) {
    static_assert(is_embeddable_v<P>,
                  "bind<>: a constant argument must be arithmetic, an enum or a string literal; "
                  "pass other values as graph inputs");
    if constexpr (!is_embeddable_v<P>) {
      return {}; // rejected above; nothing more to say
    } else if constexpr (std::is_same_v<P, std::string>) {
      static_assert(std::is_convertible_v<const U&, const char*>,
                    "bind<>: a std::string constant must be a string literal");
      return make_constant<P>(static_cast<const char*>(value));
    } else {
      return make_constant<P>(value);
    }
  }
};
// A view parameter (std::span<const E>, std::string_view) takes the owning
// value: it reads it in place at run time (cg/detail/in_place.hpp). Through a
// class template, whose instantiation Clang keeps: an alias chain alone is
// substituted again at every bind.
// Beyond the method's parameters (an overload of bind with more of them than
// the method has, tried and refused by its arity constraint) the parameter is
// a type nothing converts to, rather than a hard error inside std::tuple.
struct NoSuchParameter {
  NoSuchParameter() = delete;
};
template <auto M, std::size_t I, bool exists = (I < arity_v<M>)> struct arg_of {
  using type = BindArg<graph_value_t<param_t<M, I>>>;
};
template <auto M, std::size_t I> struct arg_of<M, I, false> {
  using type = NoSuchParameter;
};
template <auto M, std::size_t I> using arg_t = typename arg_of<M, I>::type;

template <class R> struct bind_result {
  using type = Value<R>;
};
template <class... E> struct bind_result<std::tuple<E...>> {
  using type = std::tuple<Value<E>...>;
};
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
    return add<M>(loc);
  }
  template <auto M>
    requires(detail::arity_v<M> == 1)
  constexpr auto bind(detail::arg_t<M, 0> a0,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0);
  }
  template <auto M>
    requires(detail::arity_v<M> == 2)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0, a1);
  }
  template <auto M>
    requires(detail::arity_v<M> == 3)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0, a1, a2);
  }
  template <auto M>
    requires(detail::arity_v<M> == 4)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      detail::arg_t<M, 3> a3,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0, a1, a2, a3);
  }
  template <auto M>
    requires(detail::arity_v<M> == 5)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      detail::arg_t<M, 3> a3, detail::arg_t<M, 4> a4,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0, a1, a2, a3, a4);
  }
  template <auto M>
    requires(detail::arity_v<M> == 6)
  constexpr auto bind(detail::arg_t<M, 0> a0, detail::arg_t<M, 1> a1, detail::arg_t<M, 2> a2,
                      detail::arg_t<M, 3> a3, detail::arg_t<M, 4> a4, detail::arg_t<M, 5> a5,
                      std::source_location loc = std::source_location::current()) const {
    return add<M>(loc, a0, a1, a2, a3, a4, a5);
  }

  /// Places this actor on logical host `index` (0: the driver's host, the
  /// default). Channels between actors on different hosts are TCP streams;
  /// a placement file given at launch overrides it (cg/placement.hpp).
  constexpr Actor host(int index, std::source_location loc = std::source_location::current()) const;

  /// Gives this actor `n` GPUs of its own: launch() sets its process's
  /// CUDA_VISIBLE_DEVICES to the next n of the driver's devices (see
  /// cg::LaunchOptions::cuda_devices). `auto a = g.actor<C>("a").gpus(1);`
  constexpr Actor gpus(int n, std::source_location loc = std::source_location::current()) const;

private:
  friend class GraphBuilder;
  constexpr Actor(GraphBuilder* graph, int index) : graph_(graph), index_(index) {}

  template <auto M, class... P>
  constexpr auto add(std::source_location loc, const detail::BindArg<P>&... args) const;

  GraphBuilder* graph_;
  int index_;
};

namespace detail {
struct Probe;
}

/// What a CG_GRAPH function receives. See the file comment.
class GraphBuilder {
public:
  constexpr GraphBuilder() = default;
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  /// Declares an actor instance named `name` (unique in the graph), built
  /// with the constant constructor arguments `args`.
  template <class C, class... Args>
  constexpr Actor<C> actor(Located<ActorName> name, const Args&... args) {
    return add_actor<C>(name.value, name.loc, args...);
  }

  /// Declares the graph's inputs, passed to execute() in this order at run
  /// time: one Value for one type, a std::tuple of Values for several.
  template <class... T>
  constexpr auto input(std::source_location loc = std::source_location::current()) {
    static_assert(sizeof...(T) > 0, "g.input<T...>() needs at least one type");
    static_assert((std::is_same_v<T, std::remove_cvref_t<T>> && ...),
                  "g.input<T>: T must be a plain value type (no reference, no const)");
    if constexpr (sizeof...(T) == 1)
      return add_input<T...>(loc);
    else
      return std::tuple<Value<T>...>{add_input<T>(loc)...};
  }

  /// Declares the graph's outputs, returned by get() in this order.
  template <class... T> constexpr void output(Value<T>... values) {
    static_assert(sizeof...(T) > 0, "g.output() needs at least one value");
    (add_output(values), ...);
  }

  /// Declares the estimated run time of every bind of method M, in any unit
  /// shared by the graph's costs; `cgc --schedule=cost` orders tasks by it.
  /// The last estimate given for a method counts.
  template <auto M>
  constexpr void cost(double estimate, std::source_location loc = std::source_location::current()) {
    static_assert(detail::traits<M>::is_member,
                  "g.cost<&C::method>: the method must be a non-static member function");
    if (!(estimate >= 0 && estimate <= std::numeric_limits<double>::max()))
      detail::graph_error("g.cost<&C::method>(c): a cost must be finite and not negative");
    push({.kind = detail::RecordKind::cost,
          .tag = &detail::method_tag<M>,
          .floating = estimate,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
  }

private:
  template <class C> friend class Actor;
  template <class T> friend class Value;
  friend struct detail::Collectives;
  friend struct detail::Probe;

  // What cgc's probe uses: records and text go into these arrays as far as
  // they fit, and are counted in any case.
  constexpr GraphBuilder(detail::Record* records, std::size_t record_capacity, char* text,
                         std::size_t text_capacity)
      : records_(records), record_capacity_(record_capacity), text_(text),
        text_capacity_(text_capacity) {}

  constexpr void set_gpus(int actor, int n, std::source_location loc) {
    if (n < 0)
      detail::graph_error("gpus(n): n must not be negative");
    push({.kind = detail::RecordKind::gpus,
          .a = actor,
          .b = n,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
  }

  constexpr void set_device_transport(int value, Device device, std::source_location loc) {
    if (device.kind != DeviceKind::cpu && device.kind != DeviceKind::cuda)
      detail::graph_error("with_tensor_transport: unknown device kind");
    if (device.index < 0)
      detail::graph_error("with_tensor_transport: a device index must not be negative");
    push({.kind = detail::RecordKind::transport,
          .a = value,
          .b = detail::kDeviceTransport,
          .c = static_cast<int>(device.kind),
          .integer = device.kind == DeviceKind::cpu ? 0 : device.index,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
  }

  constexpr void set_transport(int value, TensorTransport transport, std::source_location loc) {
    if (transport != TensorTransport::shm && transport != TensorTransport::nccl &&
        transport != TensorTransport::cuda_ipc)
      detail::graph_error("with_tensor_transport: unknown transport");
    push({.kind = detail::RecordKind::transport,
          .a = value,
          .b = static_cast<int>(transport),
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
  }

  // Records a collective over `ranks` (value ids of this graph) and returns
  // the id of rank 0's result; rank r's result is that id + r.
  template <class T>
  constexpr int add_collective(detail::CollectiveKind kind, int op, const Value<T>* ranks,
                               std::size_t count, std::source_location loc) {
    if (count == 0)
      detail::graph_error("a collective needs at least one rank");
    push({.kind = detail::RecordKind::collective,
          .a = static_cast<int>(kind),
          .b = op,
          .c = static_cast<int>(count),
          .tag = &detail::type_tag<T>,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
    int first = value_count_;
    for (std::size_t i = 0; i < count; ++i) {
      check_owner(ranks[i]);
      push({.kind = detail::RecordKind::rank, .a = ranks[i].id(), .b = value_count_++});
    }
    return first;
  }

  template <class C, class... Args>
  constexpr Actor<C> add_actor(const ActorName& name, std::source_location loc,
                               const Args&... args) {
    static_assert(std::is_class_v<C>, "g.actor<C>: C must be a class marked CG_ACTOR");
    // Without arguments, a graph over an actor set names the set's actor,
    // built with the set's: cgc checks those (c = 1 says they are needed).
    static_assert(sizeof...(Args) == 0 || std::is_constructible_v<C, const Args&...>,
                  "g.actor<C>(name, args...): C has no constructor taking these arguments");
    int text = add_text(name.text_, name.size_);
    if (name.index_ >= 0)
      add_decimal(name.index_, ActorName::max_length - name.size_);
    push({.kind = detail::RecordKind::actor,
          .c = std::is_constructible_v<C, const Args&...> ? 0 : 1,
          .tag = &detail::type_tag<C>,
          .text = text,
          .text_size = static_cast<int>(text_size_) - text,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
    (push_constant(constant_of(args)), ...);
    return Actor<C>(this, actor_count_++);
  }

  template <class T> static constexpr detail::Constant constant_of(const T& value) {
    if constexpr (std::is_convertible_v<const T&, const char*>)
      return detail::make_constant<std::string>(static_cast<const char*>(value));
    else {
      static_assert(detail::is_embeddable_v<T>,
                    "g.actor<C>(name, args...): constructor arguments must be arithmetic, "
                    "enums or string literals");
      return detail::make_constant<T>(value);
    }
  }

  template <class T> constexpr Value<T> add_input(std::source_location loc) {
    push({.kind = detail::RecordKind::input,
          .a = value_count_,
          .b = input_count_++,
          .tag = &detail::type_tag<T>,
          .line = loc.line(),
          .column = loc.column(),
          .file = loc.file_name()});
    return Value<T>(this, value_count_++);
  }

  // Appends `size` characters to the text pool; returns where they start.
  constexpr int add_text(const char* text, std::size_t size) {
    auto start = static_cast<int>(text_size_);
    for (std::size_t i = 0; i < size; ++i, ++text_size_)
      if (text_size_ < text_capacity_)
        text_[text_size_] = text[i];
    return start;
  }

  // Appends `value` in decimal, at most `room` digits (the most significant).
  constexpr void add_decimal(int value, std::size_t room) {
    char digits[12] = {};
    std::size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value > 0);
    for (; count > 0 && room > 0; --room, ++text_size_)
      if (text_size_ < text_capacity_)
        text_[text_size_] = digits[--count];
      else
        --count;
  }

  constexpr void push(const detail::Record& r) {
    if (record_count_ < record_capacity_)
      records_[record_count_] = r;
    ++record_count_;
  }

  // Stores a constant, its characters (if any) into the pool.
  constexpr void push_constant(const detail::Constant& constant) {
    if (!constant.string)
      return push(constant.record);
    std::size_t n = 0;
    while (constant.string[n] != '\0')
      ++n;
    detail::Record r = constant.record;
    r.text = add_text(constant.string, n);
    r.text_size = static_cast<int>(n);
    push(r);
  }

  template <class T> constexpr void check_owner(const Value<T>& v) const {
    if (v.graph_ != this)
      detail::graph_error("this value belongs to another graph");
  }
  template <class T> constexpr void add_output(const Value<T>& value) {
    check_owner(value);
    push({.kind = detail::RecordKind::output, .a = value.id()});
  }

  template <class... P>
  constexpr int add_task(int actor, const void* method, std::source_location loc, int results,
                         const detail::BindArg<P>&... args) {
    if (record_count_ < record_capacity_)
      records_[record_count_] = {.kind = detail::RecordKind::task,
                                 .a = actor,
                                 .b = value_count_,
                                 .c = results,
                                 .tag = method,
                                 .line = loc.line(),
                                 .column = loc.column(),
                                 .file = loc.file_name()};
    ++record_count_;
    (add_argument(args), ...);
    int first = value_count_;
    value_count_ += results == 0 ? 1 : results;
    return first;
  }

  template <class P> constexpr void add_argument(const detail::BindArg<P>& arg) {
    if (arg.id < 0)
      return push_constant(arg.constant);
    if (arg.graph != this)
      detail::graph_error("this value belongs to another graph");
    if (record_count_ < record_capacity_)
      records_[record_count_] = {.kind = detail::RecordKind::argument, .a = arg.id};
    ++record_count_;
  }

  detail::Record* records_ = nullptr;
  std::size_t record_capacity_ = 0;
  std::size_t record_count_ = 0;
  char* text_ = nullptr;
  std::size_t text_capacity_ = 0;
  std::size_t text_size_ = 0;
  int actor_count_ = 0;
  int input_count_ = 0;
  int value_count_ = 0;
};

template <class C>
template <auto M, class... P>
constexpr auto Actor<C>::add(std::source_location loc, const detail::BindArg<P>&... args) const {
  using Traits = detail::traits<M>;
  static_assert(Traits::is_member,
                "bind<&C::method>: the method must be a non-static member function");
  if constexpr (Traits::is_member) {
    static_assert(std::is_base_of_v<typename Traits::owner, C>,
                  "bind<&C::method>: the method does not belong to this actor's class");
    using R = std::remove_cvref_t<typename Traits::result>;
    static_assert(!std::is_void_v<R>, "bind<&C::method>: the method must return a value");
    if constexpr (detail::is_tuple<R>::value) {
      int first = graph_->add_task(index_, &detail::method_tag<M>, loc,
                                   static_cast<int>(std::tuple_size_v<R>), args...);
      // The element types from the tuple's pack: std::tuple_element_t<I, R>
      // per element is linear in the tuple's size (a 300-tuple took 30 s).
      return [&]<class... E, std::size_t... I>(std::tuple<E...>*, std::index_sequence<I...>) {
        return std::tuple<Value<E>...>{Value<E>(graph_, first + static_cast<int>(I))...};
      }(static_cast<R*>(nullptr), std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
      return Value<R>(graph_, graph_->add_task(index_, &detail::method_tag<M>, loc, 0, args...));
    }
  } else {
    // Already rejected above; a value of the right type avoids follow-on errors.
    return Value<std::remove_cvref_t<typename Traits::result>>(graph_, -1);
  }
}

template <class C> constexpr Actor<C> Actor<C>::host(int index, std::source_location loc) const {
  if (index < 0 || index > 65535)
    detail::graph_error("actor.host(i): a host index must be 0 to 65535");
  graph_->push({.kind = detail::RecordKind::host,
                .a = index_,
                .b = index,
                .line = loc.line(),
                .column = loc.column(),
                .file = loc.file_name()});
  return *this;
}

template <class T>
constexpr Value<T> Value<T>::with_tensor_transport(TensorTransport transport,
                                                   std::source_location loc) const {
  graph_->set_transport(id_, transport, loc);
  return *this;
}

template <class T>
constexpr Value<T> Value<T>::with_tensor_transport(Device device, std::source_location loc) const {
  graph_->set_device_transport(id_, device, loc);
  return *this;
}

template <class C> constexpr Actor<C> Actor<C>::gpus(int n, std::source_location loc) const {
  graph_->set_gpus(index_, n, loc);
  return *this;
}

namespace detail {

/// What cgc evaluates: the graph's records and text, in arrays of a capacity
/// cgc chooses (at least 1 each: std::array<T, 0> has another layout).
///   constexpr auto ir = cg::detail::encode<&graph, 1 << 20, 1 << 24>();
/// An array the evaluator only materializes as far as it is written costs
/// nothing for its capacity, so one evaluation usually does; a graph that
/// makes more (records > Records or text > Text) is evaluated again with
/// exactly its sizes.

struct Probe {
  template <auto Graph, std::size_t Records, std::size_t Text>
  static constexpr Encoded<Records, Text> encode() {
    Encoded<Records, Text> out{};
    GraphBuilder g(out.records.data(), Records, out.text.data(), Text);
    Graph(g);
    out.record_count = g.record_count_;
    out.text_size = g.text_size_;
    return out;
  }
};

template <auto Graph, std::size_t Records, std::size_t Text>
constexpr Encoded<Records, Text> encode() {
  return Probe::encode<Graph, Records, Text>();
}

} // namespace detail
} // namespace cg

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
