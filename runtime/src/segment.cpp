// segment.cpp - Where each channel of a graph lives in its shared segment.
#include <cg/detail/segment.hpp>

namespace cg::detail {
namespace {
constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }
} // namespace

SegmentLayout segment_layout(const GraphSpec& spec, std::uint32_t slots,
                             std::uint32_t slot_bytes) {
  SegmentLayout layout;
  std::size_t offset = align64(sizeof(SegmentHeader));
  for (const ChannelSpec& channel : spec.channels) {
    layout.channel_offsets.push_back(offset);
    offset += align64(channel_footprint({slots, slot_bytes, channel.readers}));
  }
  layout.total_bytes = offset;
  return layout;
}

} // namespace cg::detail
