// segment.cpp - Where each channel and communicator group of a graph lives in its shared segment.
#include <cg/detail/segment.hpp>
#include <cg/host_communicator.hpp>

namespace cg::detail {
namespace {
constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }
} // namespace

SegmentLayout segment_layout(const GraphSpec& spec, std::uint32_t slots,
                             std::uint32_t slot_bytes, std::uint64_t communicator_bytes) {
  SegmentLayout layout;
  std::size_t offset = align64(sizeof(SegmentHeader));
  for (const ChannelSpec& channel : spec.channels) {
    layout.channel_offsets.push_back(offset);
    offset += align64(channel_footprint({slots, slot_bytes, channel.readers}));
  }
  for (const CommunicatorSpec& group : spec.communicators) {
    layout.communicator_offsets.push_back(offset);
    offset += align64(host_group_footprint(
        {static_cast<int>(group.actors.size()), static_cast<std::size_t>(communicator_bytes)}));
  }
  layout.total_bytes = offset;
  return layout;
}

} // namespace cg::detail
