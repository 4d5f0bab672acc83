// profile_trace.cpp - Profile rings to a Chrome trace (actor/profile_trace.hpp).
#include "actor/profile_trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

namespace cg::detail {
namespace {

// `text` as a JSON string, quotes included.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

bool in_time_order(const ProfileEvent& a, const ProfileEvent& b) {
  return std::tie(a.start, a.end) < std::tie(b.start, b.end);
}

// Nanoseconds since `origin` as trace microseconds ("12.345").
std::string micros(std::int64_t ns, std::int64_t origin) {
  char text[32];
  const std::int64_t since = ns - origin;
  std::snprintf(text, sizeof text, "%" PRId64 ".%03" PRId64, since / 1000, since % 1000);
  return text;
}

class TraceWriter {
public:
  TraceWriter(std::ostream& out, const GraphSpec& spec, std::span<const ProfileTrack> tracks,
              std::uint32_t profile_every)
      : out_(out), spec_(spec), tracks_(tracks), profile_every_(profile_every) {
    for (const ProfileTrack& track : tracks) {
      for (const ProfileEvent& event : track.events)
        origin_ = std::min(origin_, event.start);
      for (const ProfileRestart& restart : track.restarts)
        origin_ = std::min(origin_, restart.ns);
    }
    if (origin_ == std::numeric_limits<std::int64_t>::max())
      origin_ = 0;
  }

  void write() {
    out_ << "{\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"graph\": " << quoted(spec_.name)
         << ", \"clock\": \"CLOCK_MONOTONIC\", \"origin_ns\": " << origin_
         << ", \"profile_every\": " << profile_every_ << ", \"dropped_events\": {";
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      out_ << (t ? ", " : "") << quoted(tracks_[t].name) << ": " << tracks_[t].dropped;
    out_ << "}, \"clock_uncertainty_ns\": {";
    bool first = true;
    for (const ProfileTrack& track : tracks_)
      if (track.clock_uncertainty_ns != 0)
        out_ << (std::exchange(first, false) ? "" : ", ") << quoted(track.name) << ": "
             << track.clock_uncertainty_ns;
    out_ << "}},\n\"traceEvents\": [\n";
    metadata("process_name", 0, "\"name\": " + quoted(std::string("graph ") + spec_.name));
    for (std::size_t t = 0; t < tracks_.size(); ++t) {
      metadata("thread_name", tid(t), "\"name\": " + quoted(tracks_[t].name));
      metadata("thread_sort_index", tid(t), "\"sort_index\": " + std::to_string(2 * tid(t)));
      if (std::any_of(tracks_[t].events.begin(), tracks_[t].events.end(),
                      [](const ProfileEvent& e) { return timed_on_device(e.op); })) {
        // Its GPU's work on a track of its own, just below it in a viewer.
        metadata("thread_name", gpu_tid(t), "\"name\": " + quoted(tracks_[t].name + " (GPU)"));
        metadata("thread_sort_index", gpu_tid(t),
                 "\"sort_index\": " + std::to_string(2 * tid(t) + 1));
      }
    }
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      for (const ProfileEvent& event : tracks_[t].events)
        complete(t, event);
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      for (const ProfileRestart& restart : tracks_[t].restarts)
        restarted(t, restart);
    flows();
    out_ << "\n]\n}\n";
  }

private:
  // The driver's track comes first in a viewer: tid 0; actor a is a + 1.
  std::uint32_t tid(std::size_t track) const {
    return track + 1 == tracks_.size() ? 0 : static_cast<std::uint32_t>(track + 1);
  }
  bool is_driver(std::size_t track) const { return track + 1 == tracks_.size(); }
  // An actor's GPU track: its device work (DEVICE_READ, DEVICE_WRITE).
  static std::uint32_t gpu_tid(std::size_t track) {
    return kGpuTids + static_cast<std::uint32_t>(track + 1);
  }
  static constexpr std::uint32_t kGpuTids = 1'000'000;

  void separator() {
    if (!first_)
      out_ << ",\n";
    first_ = false;
  }

  void metadata(const char* what, std::uint32_t tid, const std::string& args) {
    separator();
    out_ << "{\"ph\": \"M\", \"name\": \"" << what << "\", \"pid\": 1, \"tid\": " << tid
         << ", \"args\": {" << args << "}}";
  }

  std::string channel_name(std::uint32_t channel) const {
    std::string name = "c" + std::to_string(channel);
    if (channel < spec_.names.channels.size())
      name += std::string(" (") + spec_.names.channels[channel] + ")";
    return name;
  }

  const ComputeName* compute_name(std::size_t track, std::uint32_t index) const {
    if (is_driver(track) || track >= spec_.names.computes.size() ||
        index >= spec_.names.computes[track].size())
      return nullptr;
    return &spec_.names.computes[track][index];
  }

  void complete(std::size_t track, const ProfileEvent& event) {
    std::string name, category, args = "\"execution\": " + std::to_string(event.execution);
    std::uint32_t on = tid(track);
    switch (event.op) {
    case ProfiledOp::device_read:
    case ProfiledOp::device_write:
      name = (event.op == ProfiledOp::device_read ? "GPU READ " : "GPU WRITE ") +
             channel_name(event.index);
      category = "device";
      args += ", \"channel\": " + std::to_string(event.index) +
              ", \"bytes\": " + std::to_string(event.bytes);
      on = gpu_tid(track);
      break;
    case ProfiledOp::read:
    case ProfiledOp::write:
      name = (event.op == ProfiledOp::read ? "READ " : "WRITE ") + channel_name(event.index);
      category = event.op == ProfiledOp::read ? "read" : "write";
      args += ", \"channel\": " + std::to_string(event.index) +
              ", \"bytes\": " + std::to_string(event.bytes);
      break;
    case ProfiledOp::compute:
      category = "compute";
      if (const ComputeName* compute = compute_name(track, event.index)) {
        name = compute->task;
        args += ", \"loc\": " + quoted(compute->loc);
      } else {
        name = tracks_[track].name + ".compute#" + std::to_string(event.index);
      }
      break;
    case ProfiledOp::execute:
      name = category = "execute";
      break;
    case ProfiledOp::get:
      name = category = "get";
      break;
    default:
      return; // nothing the driver wrote: a ring an actor scribbled over
    }
    separator();
    out_ << "{\"ph\": \"X\", \"name\": " << quoted(name) << ", \"cat\": \"" << category
         << "\", \"pid\": 1, \"tid\": " << on << ", \"ts\": " << micros(event.start, origin_)
         << ", \"dur\": " << micros(std::max(event.end, event.start), event.start)
         << ", \"args\": {" << args << "}}";
  }

  // An instant on the actor's own track ("s": "t"), so a viewer shows it
  // among the operations of the process that died and of the one after it.
  void restarted(std::size_t track, const ProfileRestart& restart) {
    const std::uint64_t lost =
        restart.lost_until > restart.lost_from ? restart.lost_until - restart.lost_from : 0;
    const std::string executions = lost == 0   ? "none"
                                   : lost == 1 ? std::to_string(restart.lost_from)
                                               : std::to_string(restart.lost_from) + "-" +
                                                     std::to_string(restart.lost_until - 1);
    separator();
    out_ << "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"restart\", \"cat\": \"restart\", "
            "\"pid\": 1, \"tid\": "
         << tid(track) << ", \"ts\": " << micros(restart.ns, origin_)
         << ", \"args\": {\"count\": " << restart.count << ", \"of\": " << restart.of
         << ", \"cause\": " << quoted(restart.cause)
         << ", \"lost_executions\": " << quoted(executions) << ", \"lost\": " << lost << "}}";
  }

  // From each WRITE to each READ of the same message (channel, execution),
  // each end bound to its slice ("s" to the WRITE, "f" with "bp": "e" to the
  // READ), and never ending before it starts: a READ that waited from long
  // before the WRITE has its middle before the WRITE's (flow_times()).
  void flows() {
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::pair<std::size_t, const ProfileEvent*>>
        writes;
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      for (const ProfileEvent& event : tracks_[t].events)
        if (event.op == ProfiledOp::write)
          writes[{event.index, event.execution}] = {t, &event};
    std::uint64_t id = 0;
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      for (const ProfileEvent& read : tracks_[t].events) {
        if (read.op != ProfiledOp::read)
          continue;
        auto found = writes.find({read.index, read.execution});
        if (found == writes.end())
          continue; // written before the writer's ring kept it
        const auto [writer_track, write] = found->second;
        const auto [from, to] = flow_times(*write, read);
        const std::string name = quoted(channel_name(read.index));
        ++id;
        separator();
        out_ << "{\"ph\": \"s\", \"name\": " << name << ", \"cat\": \"flow\", \"id\": " << id
             << ", \"pid\": 1, \"tid\": " << tid(writer_track)
             << ", \"ts\": " << micros(from, origin_) << "},\n";
        out_ << "{\"ph\": \"f\", \"bp\": \"e\", \"name\": " << name
             << ", \"cat\": \"flow\", \"id\": " << id << ", \"pid\": 1, \"tid\": " << tid(t)
             << ", \"ts\": " << micros(to, origin_) << "}";
      }
  }

  static std::int64_t middle(const ProfileEvent& event) {
    return event.start + (std::max(event.end, event.start) - event.start) / 2;
  }

  // Where a flow leaves its WRITE and reaches its READ: the middle of each
  // (inside the slice, which a viewer binds it to), with the READ's end
  // moved to no earlier than the WRITE's. The message was out before the
  // WRITE recorded its end, so a fast reader can be done before that: the
  // flow then leaves at the READ's end, which on one clock is still inside
  // the WRITE (after its start). Only clocks that disagree (another host's,
  // off by its clock_uncertainty_ns) can put a READ's end before its WRITE's
  // start; the flow then leaves at the WRITE's start and reaches the READ
  // there too, just after the READ's slice, rather than point back in time.
  static std::pair<std::int64_t, std::int64_t> flow_times(const ProfileEvent& write,
                                                          const ProfileEvent& read) {
    const std::int64_t read_end = std::max(read.end, read.start);
    const std::int64_t from = std::max(write.start, std::min(middle(write), read_end));
    return {from, std::max(middle(read), from)};
  }

  std::ostream& out_;
  const GraphSpec& spec_;
  std::span<const ProfileTrack> tracks_;
  std::uint32_t profile_every_;
  std::int64_t origin_ = std::numeric_limits<std::int64_t>::max();
  bool first_ = true;
};

} // namespace

ProfileTrack read_profile_rings(std::initializer_list<const ProfileRing*> rings, std::string name) {
  ProfileTrack track;
  track.name = std::move(name);
  for (const ProfileRing* ring : rings) {
    if (!ring)
      continue;
    const std::uint64_t capacity = ring->capacity;
    const std::uint64_t written = ring->written.load(std::memory_order_acquire);
    const std::uint64_t kept = std::min(written, capacity);
    track.dropped += written - kept;
    const auto* events = reinterpret_cast<const ProfileEvent*>(ring + 1);
    for (std::uint64_t n = written - kept; n < written; ++n)
      track.events.push_back(events[n % capacity]);
  }
  // In time order: the rings are two threads', and the driver records an
  // execute() or a get() after the operations inside it.
  std::stable_sort(track.events.begin(), track.events.end(), in_time_order);
  return track;
}

std::string encode_profile_track(const ProfileTrack& track) {
  std::string out(sizeof track.dropped + track.events.size() * sizeof(ProfileEvent), '\0');
  std::memcpy(out.data(), &track.dropped, sizeof track.dropped);
  if (!track.events.empty())
    std::memcpy(out.data() + sizeof track.dropped, track.events.data(),
                track.events.size() * sizeof(ProfileEvent));
  return out;
}

bool decode_profile_track(std::string_view payload, std::int64_t offset_ns, ProfileTrack& track) {
  if (payload.size() < sizeof track.dropped ||
      (payload.size() - sizeof track.dropped) % sizeof(ProfileEvent) != 0)
    return false;
  std::memcpy(&track.dropped, payload.data(), sizeof track.dropped);
  track.events.resize((payload.size() - sizeof track.dropped) / sizeof(ProfileEvent));
  if (!track.events.empty())
    std::memcpy(track.events.data(), payload.data() + sizeof track.dropped,
                track.events.size() * sizeof(ProfileEvent));
  for (ProfileEvent& event : track.events) {
    event.start -= offset_ns;
    event.end -= offset_ns;
  }
  return true;
}

void ticks_to_ns(std::span<ProfileTrack> tracks, ProfileClocks origin, ProfileClocks now) {
  const double ns_per_tick =
      now.ticks > origin.ticks
          ? static_cast<double>(now.ns - origin.ns) / static_cast<double>(now.ticks - origin.ticks)
          : 1.0;
  auto convert = [&](std::int64_t ticks) {
    return origin.ns + std::llround(static_cast<double>(ticks - origin.ticks) * ns_per_tick);
  };
  for (ProfileTrack& track : tracks) {
    bool device_work = false;
    for (ProfileEvent& event : track.events) {
      if (timed_on_device(event.op)) {
        device_work = true;
        continue; // nanoseconds already
      }
      event.start = convert(event.start);
      event.end = convert(event.end);
    }
    if (device_work) // sorted by ticks and nanoseconds mixed: in time order again
      std::stable_sort(track.events.begin(), track.events.end(), in_time_order);
  }
}

void write_chrome_trace(std::ostream& out, const GraphSpec& spec,
                        std::span<const ProfileTrack> tracks, std::uint32_t profile_every) {
  TraceWriter(out, spec, tracks, profile_every).write();
}

} // namespace cg::detail
