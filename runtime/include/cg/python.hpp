// cg/python.hpp - A compiled graph driven from Python (pybind11).
//
// add_compiled_graph(<t> SOURCE ... PYTHON) builds a Python extension module
// named <t> from a file cgc writes, <t>.python.cpp, which is one call per
// graph to bind_graph() below and one to bind_module(). A driver in Python:
//
//   import t
//   with t.launch("chain", max_in_flight=8, mode="threads") as g:
//       print(g.execute("hello").get())
//
// Each graph is a class of the module (t.chain), made by launching: its
// keyword arguments are cg::LaunchOptions' fields (timeouts in seconds; a
// misspelled one gets a "did you mean"). execute(*inputs) takes the graph's
// inputs in order and returns a Ref, which keeps the graph alive;
// Ref.get(timeout=None) waits for the result (a tuple for several outputs).
// Both wait with the GIL released and stay interruptible by Ctrl-C
// (cg/detail/python_waits.hpp); `await graph.execute_async(*inputs)` waits
// in an asyncio loop instead (the loop watches results_fd():
// runtime/python/cg/__init__.py). Values cross as pybind11 converts them
// (numbers, str, list, tuple, dict, None for an empty std::optional), except
// that std::vector<std::uint8_t> is bytes, a buffer of T's (a numpy array)
// enters a std::vector<T> in one copy, and a cg::Tensor comes from any object
// with __dlpack__ and goes back as a cg.Tensor module class that
// numpy.from_dlpack() and torch.from_dlpack() take, with no copy either way.
// graph.stats() is cg::GraphStats, and each class's docstring gives the
// graph's signature in C++ types.
// The user's plain structs are classes of the module, built like dataclasses
// (bind_struct). An input of the wrong
// type is a TypeError naming the graph, the input and its C++ type. The
// errors of cg/errors.hpp are raised as the classes of the Python package
// `cg` (runtime/python/cg/__init__.py): cg.TaskError with .actor, .method,
// .exception_type and .message, cg.ActorDiedError with .actor, and so on.
//
// One file over 700 lines: each part binds one side of the same typed driver
// (conversions, options, refs, graphs, tensors, structs, stats), and a
// generated module includes this header alone.
#pragma once

#include <cg/cpu_binding.hpp>
#include <cg/detail/python_waits.hpp>
#include <cg/driver.hpp>
#include <cg/errors.hpp>
#include <cg/tensor.hpp>

#include <dlpack/dlpack.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace cg::python {

namespace py = pybind11;

namespace detail {

template <class T> struct IsTuple : std::false_type {};
template <class... T> struct IsTuple<std::tuple<T...>> : std::true_type {};

/// C++ to Python: as pybind11 converts, except that bytes are bytes (also
/// inside the tuple of several outputs).
template <class T> py::object to_python(T&& value) {
  using V = std::decay_t<T>;
  if constexpr (std::is_same_v<V, std::vector<std::uint8_t>>) {
    return py::bytes(reinterpret_cast<const char*>(value.data()), value.size());
  } else if constexpr (IsTuple<V>::value) {
    return std::apply(
        [](auto&&... items) { return py::object(py::make_tuple(to_python(std::move(items))...)); },
        std::forward<T>(value));
  } else {
    return py::cast(std::forward<T>(value));
  }
}

/// A cg::Tensor from any object with __dlpack__ (numpy, torch, cupy): the
/// same memory, no copy; nullopt for an object without it. TypeError for a
/// tensor cg::Tensor cannot hold.
inline std::optional<cg::Tensor> tensor_from_python(py::handle object) {
  if (!py::hasattr(object, "__dlpack__"))
    return std::nullopt;
  py::object capsule = object.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr)
    throw py::error_already_set();
  // Consumed: the capsule no longer frees it (the DLPack protocol).
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  PyCapsule_SetDestructor(capsule.ptr(), nullptr);
  try {
    return cg::Tensor::from_dlpack(managed); // runs the deleter itself when it throws
  } catch (const cg::TensorError& e) {
    throw py::type_error(e.what());
  }
}

/// A capsule named "dltensor" holding `tensor`'s DLPack export; freed with
/// it unless a consumer took it (renamed it).
inline py::capsule dlpack_capsule(const cg::Tensor& tensor) {
  DLManagedTensor* managed = tensor.to_dlpack();
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* unused = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (unused->deleter != nullptr)
        unused->deleter(unused);
    }
  });
}

template <class T> struct IsNumberVector : std::false_type {};
template <class T> struct VectorElement {
  using type = void; // named in a branch not taken (StagedInput), never used
};
template <class T> struct VectorElement<std::vector<T>> {
  using type = T;
};
template <class T>
struct IsNumberVector<std::vector<T>>
    : std::bool_constant<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>> {};

/// Whether a buffer's struct-module format (as numpy gives it: "f", "<i4",
/// "=q") holds elements of T: the same kind and size.
template <class T> bool buffer_holds(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr || itemsize != static_cast<Py_ssize_t>(sizeof(T)))
    return false;
  if (*format == '@' || *format == '=' || *format == '<')
    ++format; // native order (a little-endian host's "<" too)
  if (format[0] == '\0' || format[1] != '\0')
    return false;
  constexpr const char* floats = "efd";
  constexpr const char* signed_ints = "bhilq";
  constexpr const char* unsigned_ints = "BHILQ";
  if constexpr (std::is_floating_point_v<T>)
    return std::strchr(floats, *format) != nullptr;
  else if constexpr (std::is_signed_v<T>)
    return std::strchr(signed_ints, *format) != nullptr;
  else
    return std::strchr(unsigned_ints, *format) != nullptr;
}

/// A one-dimensional C-contiguous buffer of T's (a numpy array of the same
/// dtype, array.array, a memoryview) as a std::vector<T>, in one copy;
/// nullopt for anything else (then converted element by element).
template <class T> std::optional<std::vector<T>> numbers_from_buffer(py::handle object) {
  if (!PyObject_CheckBuffer(object.ptr()) || PyBytes_Check(object.ptr()) ||
      PyByteArray_Check(object.ptr()))
    return std::nullopt;
  Py_buffer view;
  if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    return std::nullopt;
  }
  std::optional<std::vector<T>> numbers;
  if (view.ndim == 1 && buffer_holds<T>(view.format, view.itemsize)) {
    const T* first = static_cast<const T*>(view.buf);
    numbers.emplace(first, first + view.len / view.itemsize); // one pass, no zero-fill
  }
  PyBuffer_Release(&view);
  return numbers;
}

/// A one-dimensional C-contiguous buffer of T's, held (its exporter cannot
/// resize it meanwhile): what execute() encodes straight into the graph's
/// memory where a std::vector<T> input is given such a buffer, as the vector
/// would be encoded (cg::Codec below), with no vector between. Made and
/// released with the GIL held.
template <class T> class HeldNumbers {
public:
  /// `object`'s buffer, or nullopt when it is not one of T's.
  static std::optional<HeldNumbers> of(py::handle object) {
    if (!PyObject_CheckBuffer(object.ptr()) || PyBytes_Check(object.ptr()) ||
        PyByteArray_Check(object.ptr()))
      return std::nullopt;
    HeldNumbers held;
    if (PyObject_GetBuffer(object.ptr(), &held.view_, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      return std::nullopt;
    }
    held.held_ = true;
    if (held.view_.ndim != 1 || !buffer_holds<T>(held.view_.format, held.view_.itemsize))
      return std::nullopt;
    return held;
  }
  HeldNumbers(HeldNumbers&& other) noexcept : view_(other.view_), held_(other.held_) {
    other.held_ = false;
  }
  HeldNumbers& operator=(HeldNumbers&&) = delete;
  ~HeldNumbers() {
    if (held_)
      PyBuffer_Release(&view_);
  }

  const T* data() const noexcept { return static_cast<const T*>(view_.buf); }
  std::size_t size() const noexcept { return static_cast<std::size_t>(view_.len / view_.itemsize); }

private:
  HeldNumbers() = default;
  Py_buffer view_{};
  bool held_ = false;
};

} // namespace detail
} // namespace cg::python

/// Held numbers encode as the std::vector<T> they stand for (serialize.hpp:
/// the count, then the elements as one block); only ever encoded.
template <class T> struct cg::Codec<cg::python::detail::HeldNumbers<T>> {
  static std::size_t size(const cg::python::detail::HeldNumbers<T>& v) noexcept {
    return sizeof(std::uint64_t) + v.size() * sizeof(T);
  }
  static void encode(Encoder& e, const cg::python::detail::HeldNumbers<T>& v) noexcept {
    detail::encode_length(e, v.size());
    e.write(v.data(), v.size() * sizeof(T));
  }
};

namespace cg::python {
namespace detail {

/// Python to C++, or nullopt when `object` does not convert.
template <class T> std::optional<T> from_python(py::handle object) {
  if constexpr (std::is_same_v<T, cg::Tensor>)
    return tensor_from_python(object);
  if constexpr (std::is_same_v<T, std::vector<std::uint8_t>>) {
    if (PyBytes_Check(object.ptr()) || PyByteArray_Check(object.ptr()) ||
        PyMemoryView_Check(object.ptr())) {
      Py_buffer view; // one copy, straight out of the object's memory
      if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_SIMPLE) == 0) {
        const auto* first = static_cast<const std::uint8_t*>(view.buf);
        T bytes(first, first + view.len);
        PyBuffer_Release(&view);
        return bytes;
      }
      PyErr_Clear(); // not contiguous: as a sequence below
    }
  }
  if constexpr (IsNumberVector<T>::value) {
    if (std::optional<T> numbers = numbers_from_buffer<typename T::value_type>(object))
      return numbers;
  }
  try {
    return object.cast<T>();
  } catch (const py::cast_error&) {
    return std::nullopt;
  }
}

/// What a generated execute() takes and gives: its inputs, decayed, and the
/// type its Ref holds.
template <class Method> struct ExecuteTraits;
template <class Graph, class T, class... Args>
struct ExecuteTraits<cg::Ref<T> (Graph::*)(Args...)> {
  using Inputs = std::tuple<std::decay_t<Args>...>;
  using Result = T;
};

/// The cg package's exception classes, by C++ error.
inline py::object cg_error(const char* name) { return py::module_::import("cg").attr(name); }

/// Raises the Python form of the cg::Error in flight.
inline void translate(std::exception_ptr error) {
  const auto raise = [](py::object type, py::object instance) {
    PyErr_SetObject(type.ptr(), instance.ptr());
  };
  try {
    std::rethrow_exception(error);
  } catch (const cg::TaskError& e) {
    py::object type = cg_error("TaskError");
    raise(type, type(e.what(), e.actor(), e.method(), e.exception_type(), e.message()));
  } catch (const cg::ActorDiedError& e) {
    py::object type = cg_error("ActorDiedError");
    raise(type, type(e.what(), e.actor(), e.restarted()));
  } catch (const cg::TimeoutError& e) {
    PyErr_SetString(cg_error("TimeoutError").ptr(), e.what());
  } catch (const cg::CapacityExceeded& e) {
    PyErr_SetString(cg_error("CapacityExceeded").ptr(), e.what());
  } catch (const cg::ChannelClosedError& e) {
    PyErr_SetString(cg_error("ChannelClosedError").ptr(), e.what());
  } catch (const cg::ChannelError& e) {
    PyErr_SetString(cg_error("ChannelError").ptr(), e.what());
  } catch (const cg::LaunchError& e) {
    PyErr_SetString(cg_error("LaunchError").ptr(), e.what());
  } catch (const cg::Error& e) {
    PyErr_SetString(cg_error("Error").ptr(), e.what());
  }
}

/// launch()'s keyword arguments: cg::LaunchOptions' fields that Python sets.
inline constexpr std::array<const char*, 23> launch_option_names = {"mode",
                                                                    "cpu_binding",
                                                                    "communicator",
                                                                    "max_in_flight",
                                                                    "slot_bytes",
                                                                    "spin_when_cpus_suffice",
                                                                    "start_timeout",
                                                                    "get_timeout",
                                                                    "submit_timeout",
                                                                    "partition_timeout",
                                                                    "actor_host",
                                                                    "communicator_bytes",
                                                                    "placement",
                                                                    "rendezvous",
                                                                    "tcp_everywhere",
                                                                    "profile",
                                                                    "record_profile",
                                                                    "profile_executions",
                                                                    "profile_every",
                                                                    "max_restarts",
                                                                    "actor_max_restarts",
                                                                    "tag_actor_output",
                                                                    "actor_logs"};

/// "; did you mean 'x'?" for the one name of `known` within two edits of
/// `name` (a typo, a transposition), else nothing.
template <std::size_t N>
std::string did_you_mean(const std::string& name, const std::array<const char*, N>& known) {
  const auto distance = [&](const std::string& other) {
    std::vector<std::size_t> row(other.size() + 1);
    for (std::size_t j = 0; j <= other.size(); ++j)
      row[j] = j;
    for (std::size_t i = 1; i <= name.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= other.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min(
            {row[j] + 1, row[j - 1] + 1, diagonal + (name[i - 1] == other[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row.back();
  };
  std::string best;
  std::size_t best_distance = 3;
  for (const char* candidate : known)
    if (const std::size_t d = distance(candidate); d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

/// cg::LaunchOptions from launch()'s keyword arguments (its fields, by
/// name; timeouts in seconds; enums by name); TypeError for one it does not
/// know or a value of the wrong type, ValueError for a bad name.
inline LaunchOptions launch_options(const py::kwargs& kwargs) {
  LaunchOptions options;
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    const auto cast = [&]<class T>(T& field) {
      try {
        field = value.cast<T>();
      } catch (const py::cast_error&) {
        throw py::type_error("launch() option " + name + " cannot be " +
                             std::string(py::repr(value)) + " (a Python " +
                             std::string(py::str(py::type::handle_of(value).attr("__name__"))) +
                             ")");
      }
    };
    const auto seconds = [&](std::chrono::milliseconds& field) {
      double s = 0;
      cast(s);
      if (!(s >= 0))
        throw py::value_error("launch() option " + name + " must be seconds, at least 0");
      field = seconds_to_milliseconds(s);
    };
    const auto choice = [&](const char* first, const char* second) {
      std::string text;
      cast(text);
      if (text != first && text != second)
        throw py::value_error("launch() option " + name + " is '" + first + "' or '" + second +
                              "', not '" + text + "'");
      return text == first;
    };
    if (name == "mode")
      options.mode = choice("processes", "threads") ? Mode::processes : Mode::threads;
    else if (name == "cpu_binding")
      options.cpu_binding = choice("none", "cores") ? CpuBinding::none : CpuBinding::cores;
    else if (name == "communicator")
      options.communicator =
          choice("host", "nccl") ? CommunicatorKind::host : CommunicatorKind::nccl;
    else if (name == "max_in_flight")
      cast(options.max_in_flight);
    else if (name == "slot_bytes")
      cast(options.slot_bytes);
    else if (name == "spin_when_cpus_suffice")
      cast(options.spin_when_cpus_suffice);
    else if (name == "start_timeout")
      seconds(options.start_timeout);
    else if (name == "get_timeout")
      seconds(options.get_timeout);
    else if (name == "submit_timeout")
      seconds(options.submit_timeout);
    else if (name == "partition_timeout")
      seconds(options.partition_timeout);
    else if (name == "actor_host")
      cast(options.actor_host);
    else if (name == "communicator_bytes")
      cast(options.communicator_bytes);
    else if (name == "placement")
      cast(options.placement);
    else if (name == "rendezvous")
      cast(options.rendezvous);
    else if (name == "tcp_everywhere")
      cast(options.tcp_everywhere);
    else if (name == "profile")
      cast(options.profile);
    else if (name == "record_profile")
      cast(options.record_profile);
    else if (name == "profile_executions")
      cast(options.profile_executions);
    else if (name == "profile_every")
      cast(options.profile_every);
    else if (name == "max_restarts")
      cast(options.max_restarts);
    else if (name == "actor_max_restarts")
      cast(options.actor_max_restarts);
    else if (name == "tag_actor_output")
      cast(options.tag_actor_output);
    else if (name == "actor_logs")
      cast(options.actor_logs);
    else
      throw py::type_error("launch() got an unexpected keyword argument '" + name + "'" +
                           did_you_mean(name, launch_option_names));
  }
  return options;
}

/// A result being waited for: Ref.get() and Ref.ready() in Python; a type
/// of its own per graph (GraphFunction), named after it.
template <class T, auto GraphFunction> class PyRef {
public:
  PyRef(cg::Ref<T> ref, std::chrono::milliseconds get_timeout, std::shared_ptr<Flight> flight)
      : ref_(std::move(ref)), get_timeout_(get_timeout), flight_(std::move(flight)) {}
  PyRef(PyRef&&) noexcept = default;
  PyRef& operator=(PyRef&&) = delete;
  ~PyRef() {
    if (flight_ && !taken_)
      flight_->abandoned.push_back(ref_.sequence());
  }

  /// Waits for the result, `timeout` seconds (math.inf: no limit) or the
  /// graph's get_timeout, with the GIL released, in slices of wait_slice:
  /// between them Python runs its signal handlers, so Ctrl-C ends the wait
  /// with KeyboardInterrupt. A slice that the driver ends at once (an actor
  /// it found stopped before) is slept out, not retried.
  py::object get(std::optional<double> timeout) {
    using namespace std::chrono;
    const std::optional<milliseconds> total =
        timeout ? get_wait(*timeout) : std::optional<milliseconds>(get_timeout_);
    const auto start = steady_clock::now();
    SlicedTimeout timed_out;
    for (bool first = true;; first = false) {
      const auto slice_start = steady_clock::now();
      const milliseconds left =
          total ? ceil<milliseconds>(start + *total - slice_start) : milliseconds::max();
      const milliseconds slice = std::clamp(left, milliseconds(0), wait_slice);
      std::optional<T> value;
      std::string what;
      {
        py::gil_scoped_release unlocked;
        try {
          value.emplace(ref_.get(slice));
        } catch (const cg::TimeoutError& e) {
          what = e.what();
        } catch (const cg::TaskError&) {
          taken_ = true; // delivered: the result was this error
          throw;
        }
        if (!value && !(first && SlicedTimeout::stalled_before(what)))
          std::this_thread::sleep_until(slice_start + slice);
      }
      if (value) {
        taken_ = true;
        return to_python(std::move(*value));
      }
      if (first && SlicedTimeout::stalled_before(what))
        throw cg::TimeoutError(what); // as C++ answers it
      timed_out.saw(what, slice_start, slice);
      if (left <= wait_slice)
        throw timed_out.error(*total);
      if (PyErr_CheckSignals() != 0)
        throw py::error_already_set();
    }
  }

  bool ready() const { return ref_.ready(); }

private:
  cg::Ref<T> ref_;
  std::chrono::milliseconds get_timeout_;
  std::shared_ptr<Flight> flight_;
  bool taken_ = false;
};

/// The dtype named `name` ("float32", as cg::to_string spells it);
/// ValueError naming them all for another name.
inline DType dtype_named(const std::string& name) {
  std::string names;
  for (int d = 0; d < dtype_count; ++d) {
    const auto dtype = static_cast<DType>(d);
    if (name == to_string(dtype))
      return dtype;
    names += (names.empty() ? "" : ", ") + std::string(to_string(dtype));
  }
  throw py::value_error("no dtype '" + name + "': one of " + names);
}

/// A launched graph, as Python holds it.
template <auto GraphFunction> class PyGraph {
public:
  using Graph = cg::Graph<GraphFunction>;
  using Traits = ExecuteTraits<decltype(&Graph::execute)>;
  using Inputs = typename Traits::Inputs;
  using Result = typename Traits::Result;

  PyGraph(const char* name, std::vector<const char*> input_types, const py::kwargs& kwargs)
      : name_(name), input_types_(std::move(input_types)) {
    LaunchOptions options = launch_options(kwargs);
    get_timeout_ = options.get_timeout;
    submit_timeout_ = options.submit_timeout;
    max_in_flight_ = options.max_in_flight;
    py::gil_scoped_release unlocked;
    graph_ = std::make_unique<Launched>(std::move(options));
  }

  using Ref = PyRef<Result, GraphFunction>;

  /// Submits one execution, with the GIL released; first waits for room
  /// (executions whose refs were dropped still running) in slices that let
  /// Ctrl-C through, where C++ would wait for it all at once.
  Ref execute(const py::args& args) {
    constexpr std::size_t count = std::tuple_size_v<Inputs>;
    if (args.size() != count)
      throw py::type_error("graph '" + name_ + "' takes " + std::to_string(count) + " input" +
                           (count == 1 ? "" : "s") + ", not " + std::to_string(args.size()));
    // Destroyed after the GIL is back: held buffers are released with it.
    Staged inputs = stage(args, std::make_index_sequence<count>());
    wait_for_room();
    std::optional<cg::Ref<Result>> ref;
    {
      py::gil_scoped_release unlocked;
      ref.emplace(submit(inputs, std::make_index_sequence<count>()));
    }
    flight_->submitted = ref->sequence() + 1;
    return Ref(*std::move(ref), get_timeout_, flight_);
  }

  GraphStats stats() const { return graph().stats(); }
  std::map<std::string, std::uint32_t> restarts() const { return graph().restarts(); }

  void teardown() {
    if (!graph_)
      return;
    py::gil_scoped_release unlocked;
    graph_->teardown();
  }

  /// input_tensor(dtype, shape, input=None): a host tensor made where input
  /// #input (by default the graph's first cg::Tensor input) travels, as the
  /// C++ graph's input_tensor<I>() makes it; execute() of it, or of an array
  /// viewing it (numpy.asarray(t), torch.from_dlpack(t)), copies nothing.
  cg::Tensor input_tensor(const std::string& dtype, const std::vector<std::int64_t>& shape,
                          std::optional<std::size_t> input) {
    constexpr std::size_t count = std::tuple_size_v<Inputs>;
    const std::size_t which = input ? *input : first_tensor_input();
    if (which == count && !input)
      throw py::type_error("graph '" + name_ + "' has no cg::Tensor input");
    if (which >= count)
      throw py::index_error("graph '" + name_ + "' has no input #" + std::to_string(which));
    return make_input_tensor(which, dtype_named(dtype), shape, std::make_index_sequence<count>());
  }

  int results_fd() { return graph().results_fd(); }
  void write_profile(const std::string& path) const { graph().write_profile(path); }
  std::vector<std::string> channel_transports() const { return graph().channel_transports(); }

private:
  // The graph, with its runtime in reach (results_ready(), for the room).
  class Launched final : public Graph {
  public:
    using Graph::Graph;
    cg::detail::GraphRuntime& runtime() const { return *this->runtime_; }
    const std::shared_ptr<cg::detail::GraphRuntime>& shared_runtime() const {
      return this->runtime_;
    }
  };

  Launched& graph() const {
    if (!graph_)
      throw cg::ChannelClosedError("graph '" + name_ + "' was torn down");
    return *graph_;
  }

  // Whether execute() would wait for room: max_in_flight executions are in
  // the channels, some of them abandoned (otherwise it throws
  // CapacityExceeded at once). results_ready() collects what has arrived.
  bool waits_for_room() {
    Flight& flight = *flight_;
    if (flight.submitted < max_in_flight_)
      return false;
    cg::detail::GraphRuntime& runtime = graph().runtime();
    std::erase_if(flight.abandoned, [&](std::uint64_t seq) { return runtime.results_ready(seq); });
    return !flight.abandoned.empty() && !runtime.results_ready(flight.submitted - max_in_flight_);
  }

  // Waits, up to the submit timeout, until execute() would not. A look
  // every 2 ms, the GIL released between looks (nothing to
  // block on: the results eventfd belongs to asyncio's watch), and Python's
  // signal handlers run every wait_slice.
  void wait_for_room() {
    using namespace std::chrono;
    const auto deadline = steady_clock::now() + submit_timeout_;
    auto handlers_run = steady_clock::now();
    while (waits_for_room()) {
      const auto now = steady_clock::now();
      if (now >= deadline) // as the driver words it (driver.cpp, begin_execution)
        throw cg::TimeoutError("execution " + std::to_string(flight_->submitted) + " of graph '" +
                               std::string(graph().runtime().spec().name) +
                               "' could not be submitted within " +
                               std::to_string(submit_timeout_.count()) +
                               " ms: executions whose refs were dropped are still running");
      {
        py::gil_scoped_release unlocked;
        std::this_thread::sleep_until(std::min(deadline, now + milliseconds(2)));
      }
      if (steady_clock::now() - handlers_run >= wait_slice) {
        handlers_run = steady_clock::now();
        if (PyErr_CheckSignals() != 0)
          throw py::error_already_set();
      }
    }
  }

  template <std::size_t I>
  static constexpr bool is_tensor_input = std::is_same_v<std::tuple_element_t<I, Inputs>, Tensor>;

  // The position of the first cg::Tensor input; the number of inputs if none.
  static std::size_t first_tensor_input() {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      std::size_t first = sizeof...(I);
      ((first = first == sizeof...(I) && is_tensor_input<I> ? I : first), ...);
      return first;
    }(std::make_index_sequence<std::tuple_size_v<Inputs>>());
  }

  // Input `input` made in place by the typed graph, whose input_tensor<I>()
  // exists for its cg::Tensor inputs only.
  template <std::size_t... I>
  Tensor make_input_tensor(std::size_t input, DType dtype, const std::vector<std::int64_t>& shape,
                           std::index_sequence<I...>) {
    std::optional<Tensor> made;
    (
        [&] {
          if constexpr (is_tensor_input<I>) {
            if (input == I)
              made = graph().template input_tensor<I>(dtype, shape);
          }
        }(),
        ...);
    if (!made)
      throw py::type_error("graph '" + name_ + "' input #" + std::to_string(input) + " takes " +
                           input_types_.at(input) + " (C++), not a tensor");
    return *std::move(made);
  }

  static constexpr bool has_tensor_input = []<std::size_t... I>(std::index_sequence<I...>) {
    return (is_tensor_input<I> || ...);
  }(std::make_index_sequence<std::tuple_size_v<Inputs>>());

  // Input I as execute() holds it until it is written: its C++ value, or,
  // for a std::vector of numbers given a buffer of them, the buffer itself
  // (HeldNumbers), encoded into the graph's memory with no vector between.
  // Not in a graph with cg::Tensor inputs, whose writes cgc's execute() may
  // route through the host (a device tensor's .to(cpu)).
  template <std::size_t I, class T = std::tuple_element_t<I, Inputs>>
  using StagedInput =
      std::conditional_t<IsNumberVector<T>::value && !has_tensor_input,
                         std::variant<T, HeldNumbers<typename VectorElement<T>::type>>, T>;
  template <class Sequence> struct StagedOf;
  template <std::size_t... I> struct StagedOf<std::index_sequence<I...>> {
    using type = std::tuple<StagedInput<I>...>;
  };
  using Staged = typename StagedOf<std::make_index_sequence<std::tuple_size_v<Inputs>>>::type;

  template <std::size_t... I> Staged stage(const py::args& args, std::index_sequence<I...>) {
    return Staged{staged<I>(args[I])...};
  }

  template <std::size_t I> StagedInput<I> staged(py::handle object) {
    using T = std::tuple_element_t<I, Inputs>;
    if constexpr (!std::is_same_v<StagedInput<I>, T>) {
      using Held = HeldNumbers<typename VectorElement<T>::type>;
      if (std::optional<Held> held = Held::of(object))
        return StagedInput<I>(std::in_place_index<1>, std::move(*held));
      return StagedInput<I>(std::in_place_index<0>, input<I>(object));
    } else {
      return input<I>(object);
    }
  }

  template <std::size_t I> static bool is_held(const Staged& inputs) {
    if constexpr (std::is_same_v<StagedInput<I>, std::tuple_element_t<I, Inputs>>)
      return false;
    else
      return std::get<I>(inputs).index() == 1;
  }

  template <std::size_t I> static const auto& value_of(const Staged& inputs) {
    if constexpr (std::is_same_v<StagedInput<I>, std::tuple_element_t<I, Inputs>>)
      return std::get<I>(inputs);
    else
      return std::get<0>(std::get<I>(inputs));
  }

  // The execution, as cgc's execute() submits it (begin, each input in
  // order, the ref), where an input is a held buffer; else through it.
  template <std::size_t... I>
  cg::Ref<Result> submit(const Staged& inputs, std::index_sequence<I...>) {
    if (!(is_held<I>(inputs) || ... || false))
      return graph().execute(value_of<I>(inputs)...);
    cg::detail::GraphRuntime& runtime = graph().runtime();
    const std::uint64_t seq = runtime.begin_execution();
    (write<I>(runtime, inputs), ...);
    return cg::Ref<Result>(graph().shared_runtime(), seq);
  }

  template <std::size_t I>
  static void write(cg::detail::GraphRuntime& runtime, const Staged& inputs) {
    if constexpr (std::is_same_v<StagedInput<I>, std::tuple_element_t<I, Inputs>>)
      runtime.write_input(I, std::get<I>(inputs));
    else
      std::visit([&](const auto& value) { runtime.write_input(I, value); }, std::get<I>(inputs));
  }

  template <std::size_t I> std::tuple_element_t<I, Inputs> input(py::handle object) {
    using T = std::tuple_element_t<I, Inputs>;
    if (std::optional<T> value = from_python<T>(object))
      return std::move(*value);
    throw py::type_error("graph '" + name_ + "' input #" + std::to_string(I) + " takes " +
                         input_types_.at(I) + " (C++); a Python " +
                         std::string(py::str(py::type::handle_of(object).attr("__name__"))) +
                         " does not convert to it");
  }

  std::string name_;
  std::vector<const char*> input_types_;
  std::chrono::milliseconds get_timeout_{10'000};
  std::chrono::milliseconds submit_timeout_{10'000};
  std::uint32_t max_in_flight_ = 1;
  std::shared_ptr<Flight> flight_ = std::make_shared<Flight>();
  std::unique_ptr<Launched> graph_;
};

} // namespace detail

/// The user's plain struct S as a Python class of `module` named `name`, as
/// a dataclass is: S(x, y, label=...) by position or field name (the others
/// default as S{} has them), each field an attribute, repr() and == by field.
/// `fields` are the members in declaration order, named by `names`.
template <class S, class... F>
void bind_struct(py::module_& module, const char* name, std::array<const char*, sizeof...(F)> names,
                 F S::*... fields) {
  const std::string type = name;
  auto init = [type, names, fields...](const py::args& args, const py::kwargs& kwargs) {
    if (args.size() > sizeof...(F))
      throw py::type_error(type + "() takes at most " + std::to_string(sizeof...(F)) +
                           " arguments, not " + std::to_string(args.size()));
    S value{};
    std::size_t given = 0;
    std::size_t i = 0;
    const auto set = [&](auto& field) {
      using T = std::decay_t<decltype(field)>;
      const char* field_name = names[i];
      py::object from;
      if (i < args.size())
        from = args[i];
      if (kwargs.contains(field_name)) {
        if (from)
          throw py::type_error(type + "() got two values for field " + field_name);
        from = kwargs[field_name];
      }
      ++i;
      if (!from)
        return;
      ++given;
      std::optional<T> converted = detail::from_python<T>(from);
      if (!converted)
        throw py::type_error(type + "." + field_name + " cannot be a Python " +
                             std::string(py::str(py::type::handle_of(from).attr("__name__"))));
      field = std::move(*converted);
    };
    (set(value.*fields), ...);
    if (given - std::min(args.size(), sizeof...(F)) != kwargs.size())
      for (const auto& [key, unused] : kwargs)
        if (std::find_if(names.begin(), names.end(), [&](const char* n) {
              return std::string(py::str(key)) == n;
            }) == names.end())
          throw py::type_error(type + "() has no field '" + std::string(py::str(key)) + "'");
    return value;
  };
  py::class_<S> cls(module, name, py::module_local());
  cls.def(py::init(init));
  std::size_t i = 0;
  ((cls.def_readwrite(names[i++], fields)), ...);
  cls.def("__repr__", [type, names, fields...](const S& value) {
    std::string out = type + "(";
    std::size_t i = 0;
    ((out += (i == 0 ? "" : ", ") + std::string(names[i]) + "=" +
             std::string(py::repr(detail::to_python(value.*fields))),
      ++i),
     ...);
    return out + ")";
  });
  cls.def("__eq__", [fields...](const S& a, py::object other) {
    if (!py::isinstance<S>(other))
      return false;
    const S& b = other.cast<const S&>();
    return (detail::to_python(a.*fields).equal(detail::to_python(b.*fields)) && ...);
  });
}

/// A host tensor as numpy's array interface (version 3) describes it:
/// numpy.asarray(t) is then a writable array of the same memory, which keeps
/// t alive (numpy.from_dlpack() gives a read-only one before numpy 2).
/// TypeError for what numpy cannot view: a CUDA tensor, bfloat16 (DLPack:
/// torch.from_dlpack(t)), an undefined tensor. (Not the buffer protocol:
/// pybind11 2.10 cannot raise from it.)
inline py::dict array_interface(const cg::Tensor& t) {
  if (!t.defined())
    throw py::type_error("an undefined tensor has no elements to view");
  if (t.device().kind != DeviceKind::cpu)
    throw py::type_error("a tensor on " + to_string(t.device()) +
                         " is not in host memory: use DLPack (torch.from_dlpack(t))");
  static constexpr std::array<const char*, dtype_count> typestrs = {
      "<f2", nullptr, "<f4", "<f8", "|i1", "<i4", "<i8", "|u1", "|b1"};
  const char* typestr = typestrs.at(static_cast<std::size_t>(t.dtype()));
  if (typestr == nullptr)
    throw py::type_error("numpy has no " + std::string(to_string(t.dtype())) +
                         ": use DLPack (torch.from_dlpack(t))");
  py::list strides;
  for (const std::int64_t stride : t.strides())
    strides.append(stride * static_cast<std::int64_t>(t.element_size()));
  py::dict interface;
  interface["version"] = 3;
  interface["shape"] = py::tuple(py::cast(t.shape()));
  interface["typestr"] = typestr;
  interface["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(t.data_ptr()), false);
  interface["strides"] = py::tuple(strides);
  return interface;
}

/// cg.Tensor of the module: what a cg::Tensor result (or an input made in
/// place) is in Python, shared with numpy, torch or cupy without a copy,
/// through DLPack (torch.from_dlpack(t)) or, for numpy, the array interface
/// (numpy.asarray(t)); .data_ptr, .shape, .dtype and .device say what it is.
inline void bind_tensor(py::module_& module) {
  py::class_<cg::Tensor>(module, "Tensor", py::module_local())
      .def_property_readonly("__array_interface__", &array_interface)
      .def(
          "__dlpack__",
          [](const cg::Tensor& t, py::object /*stream*/) { return detail::dlpack_capsule(t); },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const cg::Tensor& t) {
             return py::make_tuple(t.device().kind == DeviceKind::cuda ? int(kDLCUDA) : int(kDLCPU),
                                   t.device().index);
           })
      .def_property_readonly(
          "data_ptr",
          [](const cg::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()); })
      .def_property_readonly("shape",
                             [](const cg::Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype",
                             [](const cg::Tensor& t) { return std::string(to_string(t.dtype())); })
      .def_property_readonly("device", [](const cg::Tensor& t) { return to_string(t.device()); })
      .def("__repr__", [](const cg::Tensor& t) {
        std::string shape;
        for (std::int64_t extent : t.shape())
          shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
        return "cg.Tensor(" + std::string(to_string(t.dtype())) + ", [" + shape + "], " +
               to_string(t.device()) + ")";
      });
}

/// cg/stats.hpp's structs as read-only classes of the module, fields by
/// name as in C++; str() of a GraphStats is cg::format_stats()'s table.
inline void bind_stats(py::module_& module) {
  py::class_<Percentiles>(module, "Percentiles", py::module_local())
      .def_readonly("count", &Percentiles::count)
      .def_readonly("p50_us", &Percentiles::p50_us)
      .def_readonly("p90_us", &Percentiles::p90_us)
      .def_readonly("p99_us", &Percentiles::p99_us)
      .def("__repr__", [](const Percentiles& p) {
        return "Percentiles(count=" + std::to_string(p.count) +
               ", p50_us=" + std::string(py::repr(py::float_(p.p50_us))) +
               ", p90_us=" + std::string(py::repr(py::float_(p.p90_us))) +
               ", p99_us=" + std::string(py::repr(py::float_(p.p99_us))) + ")";
      });
  py::class_<TaskStats>(module, "TaskStats", py::module_local())
      .def_readonly("task", &TaskStats::task)
      .def_readonly("actor", &TaskStats::actor)
      .def_readonly("loc", &TaskStats::loc)
      .def_readonly("compute", &TaskStats::compute)
      .def_readonly("read_wait", &TaskStats::read_wait)
      .def("__repr__", [](const TaskStats& t) {
        return "TaskStats(task=" + std::string(py::repr(py::str(t.task))) + ")";
      });
  py::class_<GraphStats>(module, "GraphStats", py::module_local())
      .def_readonly("graph", &GraphStats::graph)
      .def_readonly("tasks", &GraphStats::tasks)
      .def_readonly("latency", &GraphStats::latency)
      .def_readonly("dropped_events", &GraphStats::dropped_events)
      .def_readonly("profile_every", &GraphStats::profile_every)
      .def_readonly("restarts", &GraphStats::restarts)
      .def("__str__", [](const GraphStats& stats) { return format_stats(stats); });
}

/// The module-wide parts: the error translation and launch(name, **options),
/// which launches the graph class of that name. Call after bind_graph().
inline void bind_module(py::module_& module) {
  bind_tensor(module);
  bind_stats(module);
  py::register_local_exception_translator([](std::exception_ptr error) {
    if (error)
      detail::translate(error);
  });
  py::object graphs = module.attr("graphs");
  const std::string module_name = py::str(module.attr("__name__"));
  // Now, so that a missing package is an ImportError at import, and one that
  // names it and where Python looked: pybind11 reports a Python error raised
  // here as "initialization failed", but an exception's own text as it is.
  try {
    py::module_::import("cg");
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_ModuleNotFoundError) ||
        std::string(py::str(e.value().attr("name"))) != "cg")
      throw;
    throw py::import_error(
        "module '" + module_name + "' needs the Python package 'cg', which is in no folder of " +
        "sys.path " + std::string(py::repr(py::module_::import("sys").attr("path"))) +
        ": keep the link 'cg' that add_compiled_graph() puts beside the module, or put "
        "<install prefix>/lib/python3/dist-packages on PYTHONPATH");
  }
  module.def(
      "launch",
      [graphs, module_name](const std::string& name, const py::kwargs& kwargs) {
        if (!graphs.contains(name)) {
          std::string known;
          for (const auto& [graph, type] : py::dict(graphs))
            known += (known.empty() ? "" : ", ") + std::string(py::str(graph));
          throw py::value_error("module " + module_name + " has no graph '" + name + "' (it has " +
                                known + ")");
        }
        return graphs[py::str(name)](**kwargs);
      },
      py::arg("graph"), "Launches graph `graph` with cg::LaunchOptions given by name");
}

namespace detail {

/// "int", "tuple[int, std::string]": how a docstring spells what crosses.
inline std::string spelled(const std::vector<const char*>& types, bool as_result) {
  std::string joined;
  for (const char* type : types)
    joined += (joined.empty() ? "" : ", ") + std::string(type);
  if (as_result && types.size() != 1)
    return types.empty() ? "None" : "tuple[" + joined + "]";
  return joined;
}

} // namespace detail

/// Graph `name` as class `name` of `module`; `input_types` and
/// `output_types` spell the graph's inputs and outputs in C++ (for
/// TypeErrors and the docstrings), `where` is its definition ("g.cg.cpp:12").
template <auto GraphFunction>
void bind_graph(py::module_& module, const char* name, std::vector<const char*> input_types,
                std::vector<const char*> output_types, const char* where) {
  using Graph = detail::PyGraph<GraphFunction>;
  using Ref = typename Graph::Ref;
  const std::string ref_name = std::string(name) + "_ref";
  const std::string result = detail::spelled(output_types, true);
  const std::string execute_signature =
      "execute(" + detail::spelled(input_types, false) + ") -> " + ref_name;
  const std::string get_signature = "get(timeout=None) -> " + result;
  const std::string class_doc = std::string(name) + "(**options): launches graph '" + name +
                                "' of " + where + " (options: those of launch())\n\n" +
                                execute_signature + "\n" + ref_name + "." + get_signature +
                                "\n\nTypes as C++ spells them.";
  // The signatures above, in C++ types, rather than pybind11's (*args).
  py::options signatures;
  signatures.disable_function_signatures();
  // Local to the module: two modules of one graph source bind the same types.
  py::class_<Ref>(
      module, ref_name.c_str(), py::module_local(),
      ("The result of one execution of graph '" + std::string(name) + "': " + get_signature)
          .c_str())
      .def("get", &Ref::get, py::arg("timeout") = py::none(),
           (get_signature + "\n\nThe result, waiting up to `timeout` seconds (None: the graph's "
                            "get_timeout; math.inf: no limit); Ctrl-C interrupts the wait")
               .c_str())
      .def("ready", &Ref::ready, "ready() -> bool\n\nTrue when get() would not wait");
  // Tearing down ends an asyncio watch first (cg._close_async).
  const auto teardown = [](py::object self) {
    py::module_::import("cg").attr("_close_async")(self);
    self.cast<Graph&>().teardown();
  };
  // dynamic_attr: execute_async keeps its watch on the graph (cg._AsyncResults).
  py::class_<Graph>(module, name, py::module_local(), py::dynamic_attr(), class_doc.c_str())
      .def(py::init([name, input_types](const py::kwargs& kwargs) {
        return std::make_unique<Graph>(name, input_types, kwargs);
      }))
      // A ref keeps its graph alive: launch(...).execute(x).get() works.
      .def("execute", &Graph::execute, py::keep_alive<0, 1>(),
           (execute_signature + "\n\nSubmits one execution; .get() on the result waits for it")
               .c_str())
      .def("input_tensor", &Graph::input_tensor, py::arg("dtype"), py::arg("shape"),
           py::arg("input") = py::none(),
           "input_tensor(dtype, shape, input=None) -> Tensor\n\n"
           "A host tensor made where an input travels: fill it (numpy.asarray(t)), then "
           "execute() copies none of it")
      .def(
          "execute_async",
          [](py::object self, const py::args& args) {
            return py::module_::import("cg").attr("_execute_async")(self, *args);
          },
          ("execute_async(" + detail::spelled(input_types, false) + ") -> asyncio.Future[" +
           result + "]\n\nSubmits one execution; an asyncio future of its result (await it)")
              .c_str())
      .def("results_fd", &Graph::results_fd,
           "results_fd() -> int\n\n"
           "An eventfd, readable while results are in (starts the graph's collector thread)")
      .def("stats", &Graph::stats,
           "stats() -> GraphStats\n\n"
           "Per task and per graph, percentiles of what the profile recorded so far (launch "
           "with record_profile=True or profile=...); str() of it is cg::format_stats()'s table")
      .def("restarts", &Graph::restarts,
           "restarts() -> dict\n\n"
           "Per actor name, how many times its process was restarted (launch with "
           "max_restarts=N or actor_max_restarts={name: N}); actors never restarted are left "
           "out")
      .def("teardown", teardown, "teardown()\n\nStops the actors; idempotent")
      .def("write_profile", &Graph::write_profile, py::arg("path"),
           "write_profile(path)\n\nWrites the profile recorded so far as a Chrome trace")
      .def("channel_transports", &Graph::channel_transports,
           "channel_transports() -> list[str]\n\nHow each channel travels: 'shm' or 'tcp'")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [teardown](py::object self, py::args) {
        teardown(self);
        return false;
      });
  if (!py::hasattr(module, "graphs"))
    module.attr("graphs") = py::dict();
  module.attr("graphs")[name] = module.attr(name);
}

} // namespace cg::python
