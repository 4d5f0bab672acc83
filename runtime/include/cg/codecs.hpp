// cg/codecs.hpp - Codecs for the standard containers beyond string and vector.
//
//   std::array<T, N>, std::pair<A, B>, std::tuple<T...>, std::optional<T>,
//   std::map<K, V>, std::unordered_map<K, V>
//
// Each is serializable when its elements are. Generated driver headers
// include this, so graphs may pass these types between actors. Counts are
// checked against the bytes left before anything is allocated, as in
// cg/serialize.hpp.
#pragma once

#include <cg/serialize.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

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

namespace detail {
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

} // namespace cg
