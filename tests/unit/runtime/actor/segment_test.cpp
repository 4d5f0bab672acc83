// segment_test.cpp - tests of the segment header's geometry and communicator kind.
//
// The header keeps the geometry as launched and names what carries the
// communicator groups; an actor reads the kind from there, and refuses a
// segment whose kind it does not know or whose NCCL groups have no ids.
#include "actor/segment.hpp"
#include <cg/ports.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int run_nothing(cg::ActorProcess&) { return 0; }

// r0 and r1: one communicator group of two ranks, no channels.
constexpr std::array<cg::detail::ActorSpec, 2> kActors{
    {{"r0", &run_nothing}, {"r1", &run_nothing}}};
constexpr std::array<std::uint32_t, 2> kRanks{0, 1};
constexpr std::array<cg::detail::CommunicatorSpec, 1> kGroup{{{kRanks}}};
constexpr cg::detail::GraphSpec kSpec{"pair", kActors, {}, {}, {}, kGroup};

// A segment of kSpec written with `contents`, in 64-byte aligned memory.
struct Written {
  explicit Written(const cg::detail::SegmentContents& contents)
      : memory(cg::detail::segment_bytes(kSpec, contents) + 64),
        segment(memory.data() + (64 - reinterpret_cast<std::uintptr_t>(memory.data()) % 64) % 64,
                memory.size() - 64),
        header(cg::detail::write_segment(segment, kSpec, contents).header) {}
  std::vector<std::byte> memory;
  std::span<std::byte> segment;
  cg::detail::SegmentHeader* header;
};

cg::detail::SegmentContents contents_for(cg::CommunicatorKind kind,
                                         std::span<const cg::detail::NcclIdBytes> ids) {
  cg::detail::SegmentContents contents;
  contents.geometry = {.max_in_flight = 3,
                       .slot_bytes = 512,
                       .communicator_bytes = 4096,
                       .profile_executions = 0,
                       .profile_every = 4};
  contents.communicator = kind;
  contents.nccl_ids = ids;
  return contents;
}

// What read_segment() throws for actor r0 of `written`; "" if nothing.
std::string refusal(Written& written) {
  try {
    cg::detail::read_segment(written.segment, kSpec, 0, "s");
  } catch (const cg::detail::ActorFailure& e) {
    return e.what();
  }
  return "";
}

TEST(Segment, HeaderKeepsTheGeometryAsLaunchedAndNamesTheCommunicatorKind) {
  Written host(contents_for(cg::CommunicatorKind::host, {}));
  EXPECT_EQ(host.header->geometry.max_in_flight, 3u);
  EXPECT_EQ(host.header->geometry.slot_bytes, 512u);
  EXPECT_EQ(host.header->geometry.communicator_bytes, 4096u);
  EXPECT_EQ(host.header->geometry.profile_executions, 0u);
  EXPECT_EQ(host.header->geometry.profile_every, 4u);
  EXPECT_EQ(host.header->communicator, cg::CommunicatorKind::host);
  EXPECT_EQ(host.header->nccl_ids, 0u);
  EXPECT_EQ(refusal(host), "");

  const std::array<cg::detail::NcclIdBytes, 1> ids{};
  Written nccl(contents_for(cg::CommunicatorKind::nccl, ids));
  EXPECT_EQ(nccl.header->communicator, cg::CommunicatorKind::nccl);
  EXPECT_NE(nccl.header->nccl_ids, 0u);
  EXPECT_EQ(refusal(nccl), "");
}

TEST(Segment, NcclCommunicatorsWithoutAnIdPerGroupAreNotWritten) {
  try {
    Written written(contents_for(cg::CommunicatorKind::nccl, {}));
    FAIL() << "written";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "graph 'pair' has 1 communicator groups and NCCL ids for 0");
  }
}

TEST(Segment, AnActorRefusesAnUnknownCommunicatorKindOrNcclGroupsWithoutIds) {
  const std::array<cg::detail::NcclIdBytes, 1> ids{};
  Written written(contents_for(cg::CommunicatorKind::nccl, ids));
  written.header->nccl_ids = 0;
  EXPECT_EQ(refusal(written), "segment s has NCCL communicator groups and no NCCL ids to join "
                              "them by");
  written.header->communicator = static_cast<cg::CommunicatorKind>(7);
  EXPECT_EQ(refusal(written),
            "segment s names communicator kind 7, which this build does not know");
}

} // namespace
