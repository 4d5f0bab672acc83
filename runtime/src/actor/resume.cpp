// actor/resume.cpp - A restarted actor process takes over its channels where the dead one left
// them.
//
// The rings, their cursors and each slot's sequence number live in the
// graph's shared memory, so the dead process's ends are where it left them:
// a message it published stays published, one it was writing is not (the
// slot's sequence is stored last) and is written again, one it took but did
// not release is taken again. What differs from channel to channel is how
// far the dead process got; resume_channels() evens that out, so that the
// actor's program, which reads and writes every channel once per execution,
// starts with all of them at the same execution. A reader takes message n
// only when its slot says n (ChannelReader::acquire), so no message of one
// execution is ever taken as another's.
#include "actor/restart.hpp"

#include <cg/detail/error_codec.hpp>
#include <cg/ports.hpp>
#include <cg/serialize.hpp>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace cg::detail {

std::uint64_t first_unfinished(const GraphSpec& spec, std::uint32_t actor, std::uint64_t from,
                               const std::function<Channel(std::uint32_t)>& channel) {
  // Ends made only to read their cursors: they take nothing.
  std::uint64_t first = from;
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    if (spec.channels[c].writer == static_cast<int>(actor))
      first = std::min(first, ChannelWriter(channel(c)).published());
    for (std::uint32_t slot = 0; slot < spec.channels[c].readers(); ++slot)
      if (spec.channels[c].reader_actors[slot] == static_cast<int>(actor))
        first = std::min(first, ChannelReader(channel(c), slot).consumed());
  }
  return first;
}

std::optional<std::uint64_t> resume_channels(const GraphSpec& spec, std::uint32_t actor,
                                             std::uint64_t from, const std::string& note,
                                             std::uint32_t slot_bytes,
                                             const std::function<Channel(std::uint32_t)>& channel) {
  std::vector<ChannelWriter> writers;
  std::vector<std::uint32_t> written; // per writer: its channel
  std::vector<ChannelReader> readers;
  std::vector<std::uint32_t> read; // per reader: its channel
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    if (spec.channels[c].writer == static_cast<int>(actor)) {
      writers.emplace_back(channel(c));
      written.push_back(c);
    }
    for (std::uint32_t slot = 0; slot < spec.channels[c].readers(); ++slot)
      if (spec.channels[c].reader_actors[slot] == static_cast<int>(actor)) {
        readers.emplace_back(channel(c), slot);
        read.push_back(c);
      }
  }
  const std::uint64_t first = first_unfinished(spec, actor, from, channel);
  // The dead process cannot have gone past the last execution begun, which
  // `from` counts; a cursor beyond it would be a broken channel.
  for (std::size_t i = 0; i < writers.size(); ++i)
    if (writers[i].published() > from)
      throw ActorFailure("channel " + std::to_string(written[i]) + " has " +
                         std::to_string(writers[i].published()) +
                         " messages published, more than the " + std::to_string(from) +
                         " executions begun");
  const ErrorRecord lost = fit_to_slot(restart_record(spec.actors[actor].name, note), slot_bytes);
  const std::size_t lost_bytes = encoded_size(lost);
  for (std::uint64_t execution = first; execution < from; ++execution) {
    for (std::size_t i = 0; i < writers.size(); ++i) {
      if (writers[i].published() != execution)
        continue; // published before the death
      std::span<std::byte> payload;
      const ChannelStatus status = writers[i].acquire(lost_bytes, payload, Deadline::max());
      if (status == ChannelStatus::closed)
        return std::nullopt;
      if (status != ChannelStatus::ok)
        channel_failure("cannot write the error of a lost execution", written[i], status);
      Encoder encoder(payload);
      encode(encoder, lost);
      writers[i].publish(MessageKind::error, encoder.written());
    }
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if (readers[i].consumed() != execution)
        continue; // taken and released before the death
      ChannelReader::Message message;
      const ChannelStatus status = readers[i].acquire(message, Deadline::max());
      if (status == ChannelStatus::closed)
        return std::nullopt;
      if (status != ChannelStatus::ok)
        channel_failure("cannot drop the input of a lost execution", read[i], status);
      readers[i].release();
    }
  }
  return from;
}

} // namespace cg::detail
