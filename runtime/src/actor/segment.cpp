// segment.cpp - Writing and reading a launched graph's shared segment (actor/segment.hpp).
#include "actor/segment.hpp"

#include <cg/actor.hpp>

#include <algorithm>
#include <cstring>
#include <new>
#include <string_view>

namespace cg::detail {
namespace {

constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }

// Where the tables after the channels and groups go.
struct Tables {
  std::size_t constructor_table = 0; // 0: none
  std::vector<ConstructorArgs> constructor_args;
  std::size_t nccl_ids = 0; // 0: none
  std::size_t actor_records = 0;
  std::size_t profile_rings = 0;              // the rings' offset table; 0: none
  std::vector<std::uint64_t> ring_offsets;    // per participant
  std::vector<std::uint64_t> ring_capacities; // events, per participant
  std::size_t total_bytes = 0;
};

Tables place_tables(const GraphSpec& spec, const SegmentLayout& layout,
                    const SegmentContents& contents) {
  Tables tables;
  std::size_t end = layout.total_bytes;
  if (!contents.constructor_args.empty()) {
    tables.constructor_table = align64(end);
    end = tables.constructor_table + contents.constructor_args.size() * sizeof(ConstructorArgs);
    for (const auto& args : contents.constructor_args) {
      tables.constructor_args.push_back({args ? end : 0, args ? args->size() : 0});
      end += args ? args->size() : 0;
    }
  }
  if (!contents.nccl_ids.empty()) {
    tables.nccl_ids = align64(end);
    end = tables.nccl_ids + contents.nccl_ids.size() * kNcclIdBytes;
  }
  tables.actor_records = align64(end);
  end = tables.actor_records + spec.actors.size() * kActorRecordBytes;
  if (contents.geometry.profile_executions != 0) {
    const std::size_t participants = ProfileParticipant::count(spec.actors.size());
    tables.profile_rings = align64(end);
    end = align64(tables.profile_rings + participants * sizeof(std::uint64_t));
    for (std::uint32_t who = 0; who < participants; ++who) {
      const std::uint64_t capacity = std::uint64_t{contents.geometry.profile_executions} *
                                     profile_events_per_execution(spec, who);
      tables.ring_offsets.push_back(end);
      tables.ring_capacities.push_back(capacity);
      end = align64(end + sizeof(ProfileRing) + capacity * sizeof(ProfileEvent));
    }
  }
  tables.total_bytes = end;
  return tables;
}

} // namespace

SegmentLayout segment_layout(const GraphSpec& spec, const LaunchGeometry& geometry) {
  SegmentLayout layout;
  std::size_t offset = align64(sizeof(SegmentHeader));
  for (const ChannelSpec& channel : spec.channels) {
    layout.channel_offsets.push_back(offset);
    offset += align64(
        channel_footprint({geometry.max_in_flight, geometry.slot_bytes, channel.readers()}));
  }
  for (const CommunicatorSpec& group : spec.communicators) {
    layout.communicator_offsets.push_back(offset);
    offset +=
        align64(host_group_footprint({static_cast<int>(group.actors.size()),
                                      static_cast<std::size_t>(geometry.communicator_bytes)}));
  }
  layout.total_bytes = offset;
  return layout;
}

std::size_t segment_bytes(const GraphSpec& spec, const SegmentContents& contents) {
  const SegmentLayout layout = segment_layout(spec, contents.geometry);
  return place_tables(spec, layout, contents).total_bytes;
}

WrittenSegment write_segment(std::span<std::byte> memory, const GraphSpec& spec,
                             const SegmentContents& contents) {
  if (contents.communicator == CommunicatorKind::nccl &&
      contents.nccl_ids.size() != spec.communicators.size())
    throw std::runtime_error(
        "graph '" + std::string(spec.name) + "' has " + std::to_string(spec.communicators.size()) +
        " communicator groups and NCCL ids for " + std::to_string(contents.nccl_ids.size()));
  const SegmentLayout layout = segment_layout(spec, contents.geometry);
  const Tables tables = place_tables(spec, layout, contents);
  std::byte* base = memory.data();

  WrittenSegment out;
  out.header = new (base) SegmentHeader{};
  SegmentHeader& header = *out.header;
  header.magic = kSegmentMagic;
  header.geometry = contents.geometry;
  header.communicator = contents.communicator;
  header.actor_count = static_cast<std::uint32_t>(spec.actors.size());
  header.channel_count = static_cast<std::uint32_t>(spec.channels.size());
  header.communicator_count = static_cast<std::uint32_t>(spec.communicators.size());
  std::strncpy(header.graph, spec.name, sizeof(header.graph) - 1);

  if (tables.constructor_table != 0) {
    header.constructor_args = tables.constructor_table;
    std::memcpy(base + tables.constructor_table, tables.constructor_args.data(),
                tables.constructor_args.size() * sizeof(ConstructorArgs));
    for (std::size_t i = 0; i < tables.constructor_args.size(); ++i)
      if (const auto& args = contents.constructor_args[i])
        std::memcpy(base + tables.constructor_args[i].offset, args->data(), args->size());
  }
  if (tables.nccl_ids != 0) {
    header.nccl_ids = tables.nccl_ids;
    for (std::size_t i = 0; i < contents.nccl_ids.size(); ++i)
      std::memcpy(base + tables.nccl_ids + i * kNcclIdBytes, contents.nccl_ids[i].data(),
                  kNcclIdBytes);
  }

  header.actor_records = tables.actor_records;
  for (std::size_t i = 0; i < spec.actors.size(); ++i)
    new (base + tables.actor_records + i * kActorRecordBytes) ActorRecord{};

  if (tables.profile_rings != 0) {
    header.profile_rings = tables.profile_rings;
    const ProfileClocks origin = ProfileClocks::now();
    header.profile_origin_ticks = origin.ticks;
    header.profile_origin_ns = origin.ns;
    std::memcpy(base + tables.profile_rings, tables.ring_offsets.data(),
                tables.ring_offsets.size() * sizeof(std::uint64_t));
    for (std::size_t who = 0; who < tables.ring_offsets.size(); ++who)
      new (base + tables.ring_offsets[who]) ProfileRing{{0}, tables.ring_capacities[who]};
  }

  for (std::size_t i = 0; i < spec.channels.size(); ++i)
    out.channels.push_back(
        Channel::create(base + layout.channel_offsets[i],
                        {contents.geometry.max_in_flight, contents.geometry.slot_bytes,
                         spec.channels[i].readers()}));
  if (contents.geometry.communicator_bytes == 0)
    return out;
  for (std::size_t i = 0; i < spec.communicators.size(); ++i) {
    HostGroup group =
        HostGroup::create(base + layout.communicator_offsets[i],
                          {static_cast<int>(spec.communicators[i].actors.size()),
                           static_cast<std::size_t>(contents.geometry.communicator_bytes)});
    if (!group.valid())
      throw std::runtime_error(
          "cannot create communicator group " + std::to_string(i) + " of " + "graph '" + spec.name +
          "' (" + std::to_string(contents.geometry.communicator_bytes) + " bytes per message)");
    out.groups.push_back(group);
  }
  return out;
}

SegmentView read_segment(std::span<std::byte> memory, const GraphSpec& spec, std::uint32_t actor,
                         const std::string& name) {
  if (memory.size() < sizeof(SegmentHeader))
    throw ActorFailure("segment " + name + " is too small to be a graph segment");
  SegmentView view;
  view.header = reinterpret_cast<SegmentHeader*>(memory.data());
  const SegmentHeader& header = *view.header;
  if (header.magic != kSegmentMagic || header.channel_count != spec.channels.size() ||
      header.actor_count != spec.actors.size() ||
      header.communicator_count != spec.communicators.size() ||
      std::string_view(header.graph) != std::string_view(spec.name))
    throw ActorFailure("segment " + name + " was not made for graph '" + spec.name +
                       "' of this build");
  if (header.communicator != CommunicatorKind::host &&
      header.communicator != CommunicatorKind::nccl)
    throw ActorFailure("segment " + name + " names communicator kind " +
                       std::to_string(static_cast<int>(header.communicator)) +
                       ", which this build does not know");
  if (header.communicator == CommunicatorKind::nccl && header.communicator_count != 0 &&
      header.nccl_ids == 0)
    throw ActorFailure("segment " + name +
                       " has NCCL communicator groups and no NCCL ids to join them by");
  view.layout = segment_layout(spec, header.geometry);
  if (view.layout.total_bytes > memory.size())
    throw ActorFailure("segment " + name + " is smaller than its channels need");
  if (header.constructor_args != 0) {
    const std::uint64_t table = header.constructor_args;
    const std::uint64_t size = memory.size();
    if (table < view.layout.total_bytes || table > size ||
        (size - table) / sizeof(ConstructorArgs) < spec.actors.size())
      throw ActorFailure("segment " + name + " has an impossible constructor-argument table");
    ConstructorArgs args;
    std::memcpy(&args, memory.data() + table + actor * sizeof args, sizeof args);
    if (args.offset != 0) {
      if (args.offset > size || args.bytes > size - args.offset)
        throw ActorFailure("segment " + name + " places the constructor arguments of actor '" +
                           spec.actors[actor].name + "' outside itself");
      view.constructor_args = std::span<const std::byte>(memory.data() + args.offset, args.bytes);
    }
  }
  return view;
}

ActorRecord* actor_record(std::span<const std::byte> memory, const SegmentHeader& header,
                          std::uint32_t actor) {
  const std::uint64_t at = header.actor_records + std::uint64_t{actor} * kActorRecordBytes;
  if (header.actor_records == 0 || actor >= header.actor_count || at > memory.size() ||
      memory.size() - at < kActorRecordBytes)
    return nullptr;
  return reinterpret_cast<ActorRecord*>(const_cast<std::byte*>(memory.data() + at));
}

void say_last_words(ActorRecord& record, std::string_view words) noexcept {
  const std::size_t bytes = std::min(words.size(), sizeof record.last_words);
  std::memcpy(record.last_words, words.data(), bytes);
  record.bytes.store(static_cast<std::uint32_t>(bytes), std::memory_order_release);
}

std::string last_words(const ActorRecord& record) {
  const std::uint32_t bytes = record.bytes.load(std::memory_order_acquire);
  return std::string(record.last_words, std::min<std::size_t>(bytes, sizeof record.last_words));
}

std::uint64_t profile_events_per_execution(const GraphSpec& spec, std::uint32_t who) {
  std::uint64_t events = 0;
  if (who >= ProfileParticipant::driver(spec.actors.size())) {
    for (std::size_t c = 0; c < spec.channels.size(); ++c)
      events += spec.channels[c].driver_reader() >= 0 ? 1 : 0;
    if (who == ProfileParticipant::driver(spec.actors.size()))
      events += spec.input_channels.size() + 2;
    return std::max<std::uint64_t>(events, 1);
  }
  for (const ChannelSpec& channel : spec.channels) {
    events += channel.writer == static_cast<int>(who) ? 1 : 0;
    for (int reader : channel.reader_actors)
      events += reader == static_cast<int>(who) ? 1 : 0;
  }
  // Its computes as cgc named them; without names, as many as it has
  // channels (every task of an actor reads or writes one). Never none: a
  // ring holds at least one event.
  events += who < spec.names.computes.size() ? spec.names.computes[who].size() : events;
  return std::max<std::uint64_t>(events, 1);
}

ProfileRing* profile_ring(std::span<std::byte> memory, const SegmentHeader& header,
                          std::uint32_t who) {
  const std::uint64_t entry = header.profile_rings + std::uint64_t{who} * sizeof(std::uint64_t);
  if (header.profile_rings == 0 || who >= ProfileParticipant::count(header.actor_count) ||
      entry > memory.size() || memory.size() - entry < sizeof(std::uint64_t))
    return nullptr;
  std::uint64_t at = 0;
  std::memcpy(&at, memory.data() + entry, sizeof at);
  if (at % alignof(ProfileRing) != 0 || at > memory.size() ||
      memory.size() - at < sizeof(ProfileRing))
    return nullptr;
  auto* ring = reinterpret_cast<ProfileRing*>(memory.data() + at);
  const std::uint64_t room = (memory.size() - at - sizeof(ProfileRing)) / sizeof(ProfileEvent);
  if (ring->capacity == 0 || ring->capacity > room)
    return nullptr;
  return ring;
}

std::span<const std::byte, kNcclIdBytes> nccl_id(std::span<const std::byte> memory,
                                                 const SegmentHeader& header, std::uint32_t group) {
  const std::uint64_t at = header.nccl_ids + std::uint64_t{group} * kNcclIdBytes;
  if (header.nccl_ids == 0 || at > memory.size() || memory.size() - at < kNcclIdBytes)
    throw ActorFailure("segment places the NCCL id of communicator group " + std::to_string(group) +
                       " outside itself");
  return memory.subspan(at).first<kNcclIdBytes>();
}

} // namespace cg::detail
