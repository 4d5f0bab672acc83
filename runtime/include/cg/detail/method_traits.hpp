// cg/detail/method_traits.hpp - What the graph builder reads off a bound method's type.
//
// a.bind<&C::m>(args...) checks its arguments against m's parameters and
// types its result from m's return type; a static method or free function
// has traits too, so bind<> reaches the static_assert that says what is
// wrong instead of failing deep inside the builder.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

namespace cg::detail {

template <class M> struct method_traits {
  static constexpr bool is_member = false;
  using params = std::tuple<>;
};
// A static method or free function: it has an arity, so bind<> reaches the
// static_assert that explains what is wrong.
template <class R, class... P> struct method_traits<R (*)(P...)> {
  static constexpr bool is_member = false;
  using result = R;
  using params = std::tuple<P...>;
};
template <class R, class... P>
struct method_traits<R (*)(P...) noexcept> : method_traits<R (*)(P...)> {};
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

template <class T> struct is_tuple : std::false_type {};
template <class... T> struct is_tuple<std::tuple<T...>> : std::true_type {};

} // namespace cg::detail
