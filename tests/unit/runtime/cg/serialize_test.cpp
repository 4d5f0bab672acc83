// serialize_test.cpp - round trips and malformed-input handling of cg/serialize.hpp
// and of the standard containers' codecs (cg/codecs.hpp).
//
// The decoder is the first thing to touch bytes that another process wrote, so
// besides round trips these tests feed it truncated, oversized and over-long
// input and require a DecodeError rather than a crash or a huge allocation.
#include <cg/codecs.hpp>
#include <cg/detail/in_place.hpp>
#include <cg/serialize.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace {

enum class Color : std::uint8_t { red = 1, green = 2, blue = 200 };
enum Plain { plain_a = -5, plain_b = 70000 };

struct Unsupported {};

template <class T> std::vector<std::byte> encode_to_bytes(const T& value) {
  std::vector<std::byte> out(cg::encoded_size(value));
  cg::Encoder e(out);
  cg::encode(e, value);
  EXPECT_EQ(e.written(), out.size()) << "encoded_size must match what encode writes";
  return out;
}

template <class T> T round_trip(const T& value) {
  return cg::decode_all<T>(encode_to_bytes(value));
}

std::vector<std::byte> length_prefix(std::uint64_t n) {
  std::vector<std::byte> out(sizeof n);
  std::memcpy(out.data(), &n, sizeof n);
  return out;
}

TEST(Serialize, ScalarsRoundTrip) {
  EXPECT_EQ(round_trip(42), 42);
  EXPECT_EQ(round_trip(-7), -7);
  EXPECT_EQ(round_trip(std::numeric_limits<std::int64_t>::min()),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(round_trip(std::uint16_t{65535}), 65535);
  EXPECT_DOUBLE_EQ(round_trip(3.25), 3.25);
  EXPECT_FLOAT_EQ(round_trip(-1.5f), -1.5f);
  EXPECT_EQ(round_trip('x'), 'x');
  EXPECT_EQ(cg::encoded_size(1.0), sizeof(double));
}

TEST(Serialize, BoolRoundTripsAndRejectsInvalidBytes) {
  EXPECT_TRUE(round_trip(true));
  EXPECT_FALSE(round_trip(false));
  EXPECT_EQ(cg::encoded_size(true), 1u);
  const std::vector<std::byte> bad{std::byte{2}};
  EXPECT_THROW(cg::decode_all<bool>(bad), cg::DecodeError);
}

TEST(Serialize, EnumsRoundTrip) {
  EXPECT_EQ(round_trip(Color::blue), Color::blue);
  EXPECT_EQ(round_trip(Color::red), Color::red);
  EXPECT_EQ(round_trip(plain_b), plain_b);
  EXPECT_EQ(round_trip(plain_a), plain_a);
}

TEST(Serialize, StringsRoundTrip) {
  EXPECT_EQ(round_trip(std::string()), "");
  EXPECT_EQ(round_trip(std::string("hello")), "hello");
  std::string with_nul("a\0b", 3);
  EXPECT_EQ(round_trip(with_nul), with_nul);
  std::string long_string(1 << 20, '\0');
  for (std::size_t i = 0; i < long_string.size(); ++i)
    long_string[i] = static_cast<char>(i * 31 + 7);
  EXPECT_EQ(round_trip(long_string), long_string);
  EXPECT_EQ(cg::encoded_size(std::string("abc")), 8u + 3u);
}

TEST(Serialize, VectorsRoundTrip) {
  EXPECT_EQ(round_trip(std::vector<int>{}), std::vector<int>{});
  const std::vector<int> ints{1, -2, 3, 1 << 30};
  EXPECT_EQ(round_trip(ints), ints);
  EXPECT_EQ(cg::encoded_size(ints), 8u + 4 * sizeof(int));

  const std::vector<std::string> strings{"", "one", std::string(1000, 'z'), "three"};
  EXPECT_EQ(round_trip(strings), strings);

  const std::vector<std::vector<double>> nested{{}, {1.5}, {2.5, -3.5, 1e300}};
  EXPECT_EQ(round_trip(nested), nested);

  const std::vector<bool> bools{true, false, true, true};
  EXPECT_EQ(round_trip(bools), bools);

  const std::vector<Color> colors{Color::green, Color::blue};
  EXPECT_EQ(round_trip(colors), colors);
}

TEST(Serialize, SequentialValuesShareOneBuffer) {
  const int a = 7;
  const std::string b = "bee";
  std::vector<std::byte> buffer(cg::encoded_size(a) + cg::encoded_size(b));
  cg::Encoder e(buffer);
  cg::encode(e, a);
  cg::encode(e, b);
  ASSERT_EQ(e.written(), buffer.size());
  cg::Decoder d(buffer);
  EXPECT_EQ(cg::decode<int>(d), 7);
  EXPECT_EQ(cg::decode<std::string>(d), "bee");
  EXPECT_EQ(d.remaining(), 0u);
}

TEST(Serialize, TruncatedInputThrows) {
  const auto full = encode_to_bytes(std::vector<std::string>{"alpha", "beta"});
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    const std::span<const std::byte> prefix(full.data(), cut);
    EXPECT_THROW(cg::decode_all<std::vector<std::string>>(prefix), cg::DecodeError)
        << "cut at " << cut;
  }
  const auto d = encode_to_bytes(2.0);
  EXPECT_THROW(cg::decode_all<double>(std::span<const std::byte>(d.data(), 7)), cg::DecodeError);
}

TEST(Serialize, HugeLengthPrefixThrowsWithoutAllocating) {
  // If any of these allocated first, they would throw std::bad_alloc (or
  // exhaust memory) instead of DecodeError.
  auto bytes = length_prefix(std::numeric_limits<std::uint64_t>::max() / 2);
  bytes.resize(bytes.size() + 16);
  EXPECT_THROW(cg::decode_all<std::string>(bytes), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<std::vector<int>>(bytes), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<std::vector<std::string>>(bytes), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<std::vector<std::vector<double>>>(bytes), cg::DecodeError);

  // Just one element too many for the bytes present: still rejected up front.
  auto three_ints = length_prefix(4);
  three_ints.resize(three_ints.size() + 3 * sizeof(int));
  EXPECT_THROW(cg::decode_all<std::vector<int>>(three_ints), cg::DecodeError);
}

TEST(Serialize, DecodeAllRejectsTrailingBytes) {
  auto bytes = encode_to_bytes(5);
  bytes.push_back(std::byte{0});
  EXPECT_THROW(cg::decode_all<int>(bytes), cg::DecodeError);
  cg::Decoder d(bytes); // a plain decode leaves them for the caller
  EXPECT_EQ(cg::decode<int>(d), 5);
  EXPECT_EQ(d.remaining(), 1u);
}

TEST(Serialize, DecoderTakeIsBoundsChecked) {
  const std::vector<std::byte> bytes(4);
  cg::Decoder d(bytes);
  EXPECT_EQ(d.take(3).size(), 3u);
  EXPECT_THROW(d.take(2), cg::DecodeError);
  EXPECT_EQ(d.remaining(), 1u);
}

// What a paged input's let_go was called with, in order.
std::vector<std::pair<const std::byte*, std::size_t>> let_go_calls;
void record_let_go(const std::byte* first, std::size_t bytes) noexcept {
  let_go_calls.emplace_back(first, bytes);
}
constexpr cg::InputPaging kRecordedPaging{record_let_go};

// A large vector out of a paged input (a channel's shared buffer, for the
// driver) is copied in pieces of kPagedPiece bytes, each let go once copied,
// in order and without a gap, so that the reader's pages of it go as its own
// copy grows; aligned or not. A small one is copied at once, nothing let go.
TEST(Serialize, ALargeVectorOutOfAPagedInputIsCopiedInPiecesEachLetGoOnceCopied) {
  constexpr std::size_t piece = cg::Decoder::kPagedPiece;
  std::vector<std::uint16_t> value((2 * piece + 6) / sizeof(std::uint16_t));
  for (std::size_t i = 0; i < value.size(); ++i)
    value[i] = static_cast<std::uint16_t>(i * 7919);
  const std::vector<std::byte> encoded = encode_to_bytes(value);
  for (std::size_t offset : {0, 1}) { // 1: the elements misaligned
    std::vector<std::byte> input(offset);
    input.insert(input.end(), encoded.begin(), encoded.end());
    const std::span<const std::byte> bytes = std::span<const std::byte>(input).subspan(offset);
    let_go_calls.clear();
    EXPECT_EQ(cg::decode_all<std::vector<std::uint16_t>>(bytes, &kRecordedPaging), value)
        << "offset " << offset;
    const std::byte* elements = bytes.data() + sizeof(std::uint64_t);
    const std::vector<std::pair<const std::byte*, std::size_t>> expected{
        {elements, piece}, {elements + piece, piece}, {elements + 2 * piece, 6}};
    EXPECT_EQ(let_go_calls, expected) << "offset " << offset;
  }

  let_go_calls.clear();
  const std::vector<std::uint16_t> small(piece / sizeof(std::uint16_t), 3);
  EXPECT_EQ(cg::decode_all<std::vector<std::uint16_t>>(encode_to_bytes(small), &kRecordedPaging),
            small);
  EXPECT_TRUE(let_go_calls.empty()) << "a piece or less is copied at once";
}

TEST(Serialize, ALargeStringOutOfAPagedInputIsCopiedInPiecesEachLetGoOnceCopied) {
  constexpr std::size_t piece = cg::Decoder::kPagedPiece;
  std::string value(piece + 1, 'x');
  value.back() = 'y';
  const std::vector<std::byte> encoded = encode_to_bytes(value);
  let_go_calls.clear();
  EXPECT_EQ(cg::decode_all<std::string>(encoded, &kRecordedPaging), value);
  const std::byte* text = encoded.data() + sizeof(std::uint64_t);
  const std::vector<std::pair<const std::byte*, std::size_t>> expected{{text, piece},
                                                                       {text + piece, 1}};
  EXPECT_EQ(let_go_calls, expected);
}

// The driver's encoder for a value only other hosts read: runs of at least
// BorrowedRuns::min_bytes are recorded where they are (their holes left in
// the buffer), smaller ones copied, and filling the holes gives the bytes a
// plain encoder writes.
TEST(Serialize, AnEncoderWithBorrowedRunsLeavesLargeRunsWhereTheyAreUntilFilled) {
  using cg::detail::BorrowedRuns;
  const std::vector<std::uint8_t> large(BorrowedRuns::min_bytes, 7);
  const std::vector<std::uint8_t> small(BorrowedRuns::min_bytes - 1, 9);
  const auto value = std::make_tuple(large, small, large);
  const std::size_t size = cg::encoded_size(value);
  std::vector<std::byte> plain(size), borrowing(size, std::byte{0xee});
  cg::Encoder all(plain);
  cg::encode(all, value);
  BorrowedRuns runs;
  cg::Encoder encoder(borrowing, &runs);
  cg::encode(encoder, value);
  EXPECT_EQ(encoder.written(), size);
  ASSERT_EQ(runs.count, 2u);
  EXPECT_EQ(runs.runs[0].offset, 8u); // after the first vector's count
  EXPECT_EQ(runs.runs[0].bytes, reinterpret_cast<const std::byte*>(std::get<0>(value).data()));
  EXPECT_EQ(runs.runs[0].size, large.size());
  EXPECT_EQ(runs.runs[1].offset, size - large.size());
  EXPECT_EQ(borrowing[8], std::byte{0xee}) << "a borrowed run was copied";
  EXPECT_NE(borrowing, plain);
  runs.fill_from(0);
  EXPECT_EQ(borrowing, plain);
}

TEST(Serialize, SerializabilityIsDetectable) {
  static_assert(cg::is_serializable_v<int>);
  static_assert(cg::is_serializable_v<bool>);
  static_assert(cg::is_serializable_v<Color>);
  static_assert(cg::is_serializable_v<std::string>);
  static_assert(cg::is_serializable_v<std::vector<std::vector<std::string>>>);
  static_assert(!cg::is_serializable_v<Unsupported>);
  static_assert(!cg::is_serializable_v<std::vector<Unsupported>>);
  static_assert(!cg::is_serializable_v<int*>);
  static_assert(cg::is_serializable_v<std::variant<int, std::set<std::string>>>);
  static_assert(cg::is_serializable_v<std::deque<std::optional<std::chrono::milliseconds>>>);
  static_assert(!cg::is_serializable_v<std::variant<int, Unsupported>>);
  static_assert(!cg::is_serializable_v<std::set<Unsupported>>);
  static_assert(!cg::is_serializable_v<std::deque<Unsupported>>);
  SUCCEED();
}

// ---- the standard containers (cg/codecs.hpp) --------------------------------

TEST(Codecs, AVariantRoundTripsEachAlternativeByItsIndex) {
  using V = std::variant<int, std::string, int>;
  EXPECT_EQ(round_trip(V(std::in_place_index<0>, 7)).index(), 0u);
  EXPECT_EQ(std::get<0>(round_trip(V(std::in_place_index<0>, 7))), 7);
  EXPECT_EQ(std::get<1>(round_trip(V("text"))), "text");
  // The same type twice: the index, not the type, says which.
  const V third(std::in_place_index<2>, -9);
  EXPECT_EQ(round_trip(third).index(), 2u);
  EXPECT_EQ(std::get<2>(round_trip(third)), -9);
  EXPECT_EQ(cg::encoded_size(V("text")), sizeof(std::uint32_t) + 8u + 4u);
}

TEST(Codecs, AVariantIndexPastItsAlternativesIsADecodeError) {
  auto bytes = encode_to_bytes(std::variant<int, std::string>(5));
  const std::uint32_t bad = 2;
  std::memcpy(bytes.data(), &bad, sizeof bad);
  try {
    cg::decode_all<std::variant<int, std::string>>(bytes);
    FAIL() << "expected cg::DecodeError";
  } catch (const cg::DecodeError& e) {
    EXPECT_STREQ(e.what(), "cg: corrupted std::variant index 2 of 2 alternatives");
  }
}

TEST(Codecs, AValuelessVariantRefusesToBeSizedRatherThanSendNothing) {
  // Made in place (no temporary, as for a std::deque), the new alternative's
  // throw leaves the variant valueless.
  struct Throws {
    operator std::deque<int>() const { throw std::runtime_error("no value"); }
  };
  std::variant<int, std::deque<int>> v(3);
  EXPECT_THROW(v.emplace<1>(Throws{}), std::runtime_error);
  ASSERT_TRUE(v.valueless_by_exception());
  try {
    (void)cg::encoded_size(v);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cg: a valueless std::variant cannot be sent");
  }
}

TEST(Codecs, SetsRoundTripAndADuplicateElementIsADecodeError) {
  const std::set<std::string> ordered{"", "b", "a", std::string(300, 'z')};
  EXPECT_EQ(round_trip(ordered), ordered);
  EXPECT_EQ(round_trip(std::set<int>{}), std::set<int>{});
  const std::unordered_set<int> unordered{3, -1, 40000};
  EXPECT_EQ(round_trip(unordered), unordered);

  // Two elements, both 7: no set holds that.
  auto bytes = length_prefix(2);
  for (int i = 0; i < 2; ++i) {
    const auto seven = encode_to_bytes(7);
    bytes.insert(bytes.end(), seven.begin(), seven.end());
  }
  try {
    cg::decode_all<std::set<int>>(bytes);
    FAIL() << "expected cg::DecodeError";
  } catch (const cg::DecodeError& e) {
    EXPECT_STREQ(e.what(), "cg: corrupted set: duplicate element");
  }
  EXPECT_THROW(cg::decode_all<std::unordered_set<int>>(bytes), cg::DecodeError);
}

TEST(Codecs, DequesRoundTripInOrder) {
  const std::deque<double> plain{1.5, -2.0, 1e300};
  EXPECT_EQ(round_trip(plain), plain);
  const std::deque<std::string> strings{"x", "", "yz"};
  EXPECT_EQ(round_trip(strings), strings);
  EXPECT_EQ(round_trip(std::deque<int>{}), std::deque<int>{});
  EXPECT_EQ(cg::encoded_size(plain), 8u + 3 * sizeof(double));
}

TEST(Codecs, ADurationGoesAsItsCount) {
  using namespace std::chrono_literals;
  EXPECT_EQ(round_trip(1500ms), 1500ms);
  EXPECT_EQ(round_trip(std::chrono::duration<double>(-0.25)), std::chrono::duration<double>(-0.25));
  EXPECT_EQ(encode_to_bytes(42ns), encode_to_bytes(std::chrono::nanoseconds::rep{42}));
}

TEST(Codecs, NestedStandardTypesRoundTrip) {
  using namespace std::chrono_literals;
  using Entry = std::variant<int, std::set<std::string>>;
  const std::map<std::string, Entry> tagged{{"count", 3},
                                            {"tags", std::set<std::string>{"red", "blue"}},
                                            {"none", std::set<std::string>{}}};
  EXPECT_EQ(round_trip(tagged), tagged);

  const std::deque<std::optional<std::chrono::milliseconds>> timings{20ms, std::nullopt, 0ms};
  EXPECT_EQ(round_trip(timings), timings);

  const std::array<std::variant<std::deque<int>, std::chrono::seconds>, 2> mixed{
      std::deque<int>{1, 2}, std::chrono::seconds(9)};
  EXPECT_EQ(round_trip(mixed), mixed);

  // Any cut of a nested value is a DecodeError, never a crash.
  using Tagged = std::map<std::string, Entry>;
  const auto full = encode_to_bytes(tagged);
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    const std::span<const std::byte> prefix(full.data(), cut);
    EXPECT_THROW(cg::decode_all<Tagged>(prefix), cg::DecodeError) << "cut at " << cut;
  }
}

TEST(Codecs, HugeCountsOfSetsAndDequesThrowWithoutAllocating) {
  auto bytes = length_prefix(std::numeric_limits<std::uint64_t>::max() / 2);
  bytes.resize(bytes.size() + 16);
  EXPECT_THROW(cg::decode_all<std::set<int>>(bytes), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<std::unordered_set<std::string>>(bytes), cg::DecodeError);
  EXPECT_THROW(cg::decode_all<std::deque<int>>(bytes), cg::DecodeError);
}

// ---- reading in place (cg/detail/in_place.hpp) ----------------------------

template <class T> std::vector<std::byte> encoded(const T& value) {
  std::vector<std::byte> bytes(cg::encoded_size(value));
  cg::Encoder e(bytes);
  cg::encode(e, value);
  return bytes;
}

TEST(InPlace, ViewParametersReadTheOwningGraphValues) {
  static_assert(
      std::is_same_v<cg::detail::graph_value_t<std::span<const float>>, std::vector<float>>);
  static_assert(std::is_same_v<cg::detail::graph_value_t<std::string_view>, std::string>);
  static_assert(std::is_same_v<cg::detail::graph_value_t<std::span<float>>, std::span<float>>);
  static_assert(cg::detail::readable_in_place_v<std::vector<double>>);
  static_assert(!cg::detail::readable_in_place_v<std::vector<bool>>);
  static_assert(!cg::detail::readable_in_place_v<std::vector<std::string>>);
  SUCCEED();
}

TEST(InPlace, AnAlignedVectorIsViewedWhereItLies) {
  alignas(8) std::vector<std::byte> bytes = encoded(std::vector<double>{1.5, -2.0, 4.25});
  cg::detail::validate_in_place<std::vector<double>>(bytes);
  auto view = cg::detail::view_in_place<std::vector<double>>(bytes);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(reinterpret_cast<const std::byte*>(view->data()), bytes.data() + 8);
  EXPECT_EQ(std::vector<double>(view->begin(), view->end()),
            (std::vector<double>{1.5, -2.0, 4.25}));
}

TEST(InPlace, AMisalignedVectorIsNotViewed) {
  std::vector<std::byte> bytes = encoded(std::vector<double>{1.5});
  bytes.insert(bytes.begin(), std::byte{0}); // shift by one byte
  std::span<const std::byte> shifted(bytes.data() + 1, bytes.size() - 1);
  cg::detail::validate_in_place<std::vector<double>>(shifted);
  ASSERT_NE(reinterpret_cast<std::uintptr_t>(shifted.data() + 8) % alignof(double), 0u);
  EXPECT_FALSE(cg::detail::view_in_place<std::vector<double>>(shifted).has_value());
}

TEST(InPlace, ValidationRejectsWhatDecodingWouldReject) {
  std::vector<std::byte> bytes = encoded(std::string("hello"));
  bytes.pop_back();
  try {
    cg::detail::validate_in_place<std::string>(bytes);
    FAIL() << "expected cg::DecodeError";
  } catch (const cg::DecodeError& e) {
    EXPECT_STREQ(e.what(), "cg: length prefix 5 exceeds the 4 remaining bytes");
  }
  bytes = encoded(std::vector<std::int32_t>{1, 2});
  bytes.push_back(std::byte{0});
  try {
    cg::detail::validate_in_place<std::vector<std::int32_t>>(bytes);
    FAIL() << "expected cg::DecodeError";
  } catch (const cg::DecodeError& e) {
    EXPECT_STREQ(e.what(), "cg: 1 trailing bytes after the value");
  }
  EXPECT_THROW(
      cg::detail::validate_in_place<std::string>(std::span<const std::byte>(bytes.data(), 7)),
      cg::DecodeError);
}

} // namespace
