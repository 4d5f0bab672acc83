// cg/codecs.hpp - Codecs for the standard containers beyond string and vector.
//
//   std::array<T, N>, std::pair<A, B>, std::tuple<T...>, std::optional<T>,
//   std::variant<T...>, std::map<K, V>, std::unordered_map<K, V>,
//   std::set<K>, std::unordered_set<K>, std::deque<T>,
//   std::chrono::duration<Rep, Period>
//
// Each is serializable when its elements are. Generated driver headers
// include this, so graphs may pass these types between actors. Counts are
// checked against the bytes left before anything is allocated, as in
// cg/serialize.hpp.
#pragma once

#include <cg/serialize.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

namespace cg {

template <class T, std::size_t N>
struct Codec<std::array<T, N>, std::enable_if_t<is_serializable_v<T>>> {
  static std::size_t size(const std::array<T, N>& a) {
    std::size_t total = 0;
    for (const T& v : a)
      total += encoded_size(v);
    return total;
  }
  static void encode(Encoder& e, const std::array<T, N>& a) {
    for (const T& v : a)
      cg::encode(e, v);
  }
  static std::array<T, N> decode(Decoder& d) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      // Braced initialisation evaluates left to right.
      return std::array<T, N>{((void)I, cg::decode<T>(d))...};
    }(std::make_index_sequence<N>{});
  }
};

template <class A, class B>
struct Codec<std::pair<A, B>, std::enable_if_t<is_serializable_v<A> && is_serializable_v<B>>> {
  static std::size_t size(const std::pair<A, B>& p) {
    return encoded_size(p.first) + encoded_size(p.second);
  }
  static void encode(Encoder& e, const std::pair<A, B>& p) {
    cg::encode(e, p.first);
    cg::encode(e, p.second);
  }
  static std::pair<A, B> decode(Decoder& d) {
    A first = cg::decode<A>(d);
    return {std::move(first), cg::decode<B>(d)};
  }
};

template <class... T>
struct Codec<std::tuple<T...>, std::enable_if_t<(is_serializable_v<T> && ...)>> {
  static std::size_t size(const std::tuple<T...>& t) {
    return std::apply([](const T&... v) { return (std::size_t{0} + ... + encoded_size(v)); }, t);
  }
  static void encode(Encoder& e, const std::tuple<T...>& t) {
    std::apply([&](const T&... v) { (cg::encode(e, v), ...); }, t);
  }
  static std::tuple<T...> decode(Decoder& d) { return std::tuple<T...>{cg::decode<T>(d)...}; }
};

template <class T> struct Codec<std::optional<T>, std::enable_if_t<is_serializable_v<T>>> {
  static std::size_t size(const std::optional<T>& o) { return 1 + (o ? encoded_size(*o) : 0); }
  static void encode(Encoder& e, const std::optional<T>& o) {
    std::uint8_t present = o.has_value();
    e.write(&present, 1);
    if (o)
      cg::encode(e, *o);
  }
  static std::optional<T> decode(Decoder& d) {
    std::uint8_t present = 0;
    d.read(&present, 1);
    if (present > 1)
      throw DecodeError("cg: corrupted std::optional flag " + std::to_string(present));
    if (!present)
      return std::nullopt;
    return cg::decode<T>(d);
  }
};

// A u32 index, then the alternative it names. A variant left valueless by an
// exception holds nothing to send: sizing it throws, before any byte is written.
template <class... T>
struct Codec<std::variant<T...>, std::enable_if_t<(is_serializable_v<T> && ...)>> {
  using Variant = std::variant<T...>;
  static std::size_t size(const Variant& v) {
    if (v.valueless_by_exception())
      throw std::invalid_argument("cg: a valueless std::variant cannot be sent");
    return sizeof(std::uint32_t) +
           std::visit([](const auto& alternative) { return encoded_size(alternative); }, v);
  }
  static void encode(Encoder& e, const Variant& v) {
    const std::uint32_t index = static_cast<std::uint32_t>(v.index());
    e.write(&index, sizeof index);
    std::visit([&](const auto& alternative) { cg::encode(e, alternative); }, v);
  }
  static Variant decode(Decoder& d) {
    std::uint32_t index = 0;
    d.read(&index, sizeof index);
    if (index >= sizeof...(T))
      throw DecodeError("cg: corrupted std::variant index " + std::to_string(index) + " of " +
                        std::to_string(sizeof...(T)) + " alternatives");
    // By index, not by type: a variant may hold the same type twice.
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      using Decode = Variant (*)(Decoder&);
      const Decode by_index[] = {+[](Decoder& in) {
        return Variant(std::in_place_index<I>,
                       cg::decode<std::variant_alternative_t<I, Variant>>(in));
      }...};
      return by_index[index](d);
    }(std::index_sequence_for<T...>{});
  }
};

// The count as its Rep: the Period is in the type, on both sides.
template <class Rep, class Period>
struct Codec<std::chrono::duration<Rep, Period>, std::enable_if_t<is_serializable_v<Rep>>> {
  using Duration = std::chrono::duration<Rep, Period>;
  static std::size_t size(const Duration& v) { return encoded_size(v.count()); }
  static void encode(Encoder& e, const Duration& v) { cg::encode(e, v.count()); }
  static Duration decode(Decoder& d) { return Duration(cg::decode<Rep>(d)); }
};

// std::deque<T>: u64 count, then the elements (its storage is in pieces, so
// they go one by one even when plain).
template <class T, class A> struct Codec<std::deque<T, A>, std::enable_if_t<is_serializable_v<T>>> {
  static std::size_t size(const std::deque<T, A>& q) {
    std::size_t total = sizeof(std::uint64_t);
    for (const T& v : q)
      total += encoded_size(v);
    return total;
  }
  static void encode(Encoder& e, const std::deque<T, A>& q) {
    detail::encode_length(e, q.size());
    for (const T& v : q)
      cg::encode(e, v);
  }
  static std::deque<T, A> decode(Decoder& d) {
    const std::size_t n = detail::decode_length(d, 1);
    std::deque<T, A> q;
    for (std::size_t i = 0; i < n; ++i)
      q.push_back(cg::decode<T>(d));
    return q;
  }
};

namespace detail {
// Shared by the set codecs: a u64 count, then the elements.
template <class Set> struct SetCodec {
  using K = typename Set::key_type;
  static std::size_t size(const Set& s) {
    std::size_t total = sizeof(std::uint64_t);
    for (const K& k : s)
      total += encoded_size(k);
    return total;
  }
  static void encode(Encoder& e, const Set& s) {
    encode_length(e, s.size());
    for (const K& k : s)
      cg::encode(e, k);
  }
  static Set decode(Decoder& d) {
    // Every element takes at least one byte: a larger count is corruption.
    const std::size_t n = decode_length(d, 1);
    Set s;
    for (std::size_t i = 0; i < n; ++i)
      if (!s.insert(cg::decode<K>(d)).second)
        throw DecodeError("cg: corrupted set: duplicate element");
    return s;
  }
};

// Shared by the map codecs: a u64 count, then key, value, key, value...
template <class Map> struct MapCodec {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  static std::size_t size(const Map& m) {
    std::size_t total = sizeof(std::uint64_t);
    for (const auto& [k, v] : m)
      total += encoded_size(k) + encoded_size(v);
    return total;
  }
  static void encode(Encoder& e, const Map& m) {
    std::uint64_t count = m.size();
    e.write(&count, sizeof count);
    for (const auto& [k, v] : m) {
      cg::encode(e, k);
      cg::encode(e, v);
    }
  }
  static Map decode(Decoder& d) {
    std::uint64_t count = 0;
    d.read(&count, sizeof count);
    // Every entry takes at least one byte: a larger count is corruption.
    if (count > d.remaining())
      throw DecodeError("cg: corrupted map count " + std::to_string(count));
    Map m;
    for (std::uint64_t i = 0; i < count; ++i) {
      K key = cg::decode<K>(d);
      V value = cg::decode<V>(d);
      if (!m.emplace(std::move(key), std::move(value)).second)
        throw DecodeError("cg: corrupted map: duplicate key");
    }
    return m;
  }
};
} // namespace detail

template <class K, class V, class C, class A>
struct Codec<std::map<K, V, C, A>, std::enable_if_t<is_serializable_v<K> && is_serializable_v<V>>>
    : detail::MapCodec<std::map<K, V, C, A>> {};

template <class K, class V, class H, class E, class A>
struct Codec<std::unordered_map<K, V, H, E, A>,
             std::enable_if_t<is_serializable_v<K> && is_serializable_v<V>>>
    : detail::MapCodec<std::unordered_map<K, V, H, E, A>> {};

template <class K, class C, class A>
struct Codec<std::set<K, C, A>, std::enable_if_t<is_serializable_v<K>>>
    : detail::SetCodec<std::set<K, C, A>> {};

template <class K, class H, class E, class A>
struct Codec<std::unordered_set<K, H, E, A>, std::enable_if_t<is_serializable_v<K>>>
    : detail::SetCodec<std::unordered_set<K, H, E, A>> {};

} // namespace cg
