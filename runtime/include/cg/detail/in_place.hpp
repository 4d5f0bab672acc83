// cg/detail/in_place.hpp - Which values a task may read in place, from the
// channel slot that carries them, instead of decoding a copy.
//
// A method parameter of a view type reads the value where it arrived:
//
//   struct CG_ACTOR Sink {
//     std::uint64_t absorb(std::span<const float> samples);   // no copy
//   };
//   sink.bind<&Sink::absorb>(v);   // v: a cg::Value<std::vector<float>>
//
// | the graph's value            | the parameter may be        |
// |------------------------------|-----------------------------|
// | std::vector<E>, E arithmetic | std::span<const E>          |
// | std::string                  | std::string_view            |
// | cg::Tensor (on the host)     | cg::TensorView              |
//
// The view is valid for the call; the slot is held until the task is done
// (see cg::Received in cg/ports.hpp).
#pragma once

#include <cg/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cg::detail {

/// A value written as a u64 count, then `count` elements of E: how
/// std::vector<E> and std::string are encoded.
template <class E, class View> struct CountedInPlace {
  using view = View;
  using element = E;

  /// Checks that `bytes` hold exactly one such value, as decode_all would,
  /// without copying the elements.
  static void validate(std::span<const std::byte> bytes) {
    std::uint64_t count = 0;
    if (bytes.size() < sizeof count)
      throw DecodeError("cg: " + std::to_string(bytes.size()) +
                        " bytes cannot hold a length prefix");
    std::memcpy(&count, bytes.data(), sizeof count);
    const std::size_t rest = bytes.size() - sizeof count;
    if (count > rest / sizeof(E))
      throw DecodeError("cg: length prefix " + std::to_string(count) + " exceeds the " +
                        std::to_string(rest) + " remaining bytes");
    if (count * sizeof(E) != rest)
      throw DecodeError("cg: " + std::to_string(rest - count * sizeof(E)) +
                        " trailing bytes after the value");
  }

  /// The elements of validated bytes, in place; nullopt when they are not
  /// aligned for E (then the caller decodes a copy).
  static std::optional<View> view_of(std::span<const std::byte> bytes) {
    const std::byte* first = bytes.data() + sizeof(std::uint64_t);
    const std::size_t count = (bytes.size() - sizeof(std::uint64_t)) / sizeof(E);
    if (reinterpret_cast<std::uintptr_t>(first) % alignof(E) != 0)
      return std::nullopt;
    return View(reinterpret_cast<const E*>(first), count);
  }
};

/// InPlace<T>: how a value of type T is read in place, if it can be: its
/// view type, validate(bytes) (throws DecodeError where decode_all<T> would)
/// and view_of(bytes) (the view of validated bytes, or nullopt when they
/// cannot be viewed where they are). cg::Tensor's is in cg/tensor.hpp.
template <class T> struct InPlace {};
template <class E>
  requires is_plain_scalar_v<E>
struct InPlace<std::vector<E>> : CountedInPlace<E, std::span<const E>> {};
template <> struct InPlace<std::string> : CountedInPlace<char, std::string_view> {};

template <class T>
inline constexpr bool readable_in_place_v = requires { typename InPlace<T>::view; };

/// The graph value type a method parameter of type P reads: the owning type
/// for a view parameter, P itself otherwise.
template <class P> struct graph_value {
  using type = P;
};
template <class E>
  requires is_plain_scalar_v<E>
struct graph_value<std::span<const E>> {
  using type = std::vector<E>;
};
template <> struct graph_value<std::string_view> {
  using type = std::string;
};
template <class P> using graph_value_t = typename graph_value<P>::type;

/// Checks that `bytes` hold exactly one encoded T, as decode_all<T> would,
/// without copying its elements.
template <class T>
  requires readable_in_place_v<T>
void validate_in_place(std::span<const std::byte> bytes) {
  InPlace<T>::validate(bytes);
}

/// The value of validated bytes as its view, in place; nullopt when it
/// cannot be viewed there (then the caller decodes a copy).
template <class T>
  requires readable_in_place_v<T>
std::optional<typename InPlace<T>::view> view_in_place(std::span<const std::byte> bytes) {
  return InPlace<T>::view_of(bytes);
}

} // namespace cg::detail
