// cg/detail/error_codec.hpp - ErrorRecord on the wire.
//
// An error travels in a channel slot marked MessageKind::error, in place of
// the value a failed task would have produced.
#pragma once

#include <cg/errors.hpp>
#include <cg/serialize.hpp>

#include <string_view>

namespace cg {

template <> struct Codec<ErrorRecord> {
  static std::size_t size(const ErrorRecord& r) {
    return encoded_size(r.actor) + encoded_size(r.method) + encoded_size(r.exception_type) +
           encoded_size(r.message);
  }
  static void encode(Encoder& e, const ErrorRecord& r) {
    cg::encode(e, r.actor);
    cg::encode(e, r.method);
    cg::encode(e, r.exception_type);
    cg::encode(e, r.message);
  }
  static ErrorRecord decode(Decoder& d) {
    ErrorRecord r;
    r.actor = cg::decode<std::string>(d);
    r.method = cg::decode<std::string>(d);
    r.exception_type = cg::decode<std::string>(d);
    r.message = cg::decode<std::string>(d);
    return r;
  }
};

namespace detail {
/// Error records must always reach the driver, so one too large for a slot
/// (a huge what()) is shortened to fit; slots hold at least kMinSlotBytes.
inline ErrorRecord fit_to_slot(ErrorRecord record, std::size_t slot_bytes) {
  constexpr std::string_view kCut = " [truncated]";
  std::size_t size = encoded_size(record);
  if (size <= slot_bytes)
    return record;
  std::size_t excess = size - slot_bytes + kCut.size();
  if (excess >= record.message.size())
    record.message.clear();
  else
    record.message.resize(record.message.size() - excess);
  record.message += kCut;
  while (encoded_size(record) > slot_bytes && !record.exception_type.empty())
    record.exception_type.pop_back();
  return record;
}
} // namespace detail

} // namespace cg
