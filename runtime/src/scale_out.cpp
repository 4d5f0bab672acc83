// scale_out.cpp - Participants, TCP streams and relays of a graph spread over hosts.
//
// See cg/detail/scale_out.hpp for the model. The relays are threads that
// block: a sender in ChannelReader::acquire (woken by the ring's close) or
// TcpWriter::send, a receiver in TcpReader::receive (woken by close()) or
// ChannelWriter::acquire. Closing the rings and the streams ends them all.
// remote_actor_main() is the actor executable's main() for a process that is
// not the driver's child: rendezvous, private segment, relays, actor threads,
// then it lives until the driver's rendezvous connection closes.
#include <cg/detail/scale_out.hpp>
#include <cg/actor.hpp>
#include <cg/detail/launcher.hpp>
#include <cg/errors.hpp>
#include <cg/rendezvous.hpp>
#include <cg/shm.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <stdexcept>

namespace cg::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names)
    out += (out.empty() ? "" : ",") + name;
  return out;
}

// "slots=10 slot_bytes=65536" -> the two numbers; false if malformed.
bool parse_greeting(const std::string& text, std::uint32_t& slots, std::uint32_t& slot_bytes) {
  unsigned long a = 0, b = 0;
  if (std::sscanf(text.c_str(), "slots=%lu slot_bytes=%lu", &a, &b) != 2 || a == 0 ||
      a > 1u << 20 || b < kMinSlotBytes || b > 1ul << 30)
    return false;
  slots = static_cast<std::uint32_t>(a);
  slot_bytes = static_cast<std::uint32_t>(b);
  return true;
}

} // namespace

std::string geometry_greeting(std::uint32_t slots, std::uint32_t slot_bytes) {
  return "slots=" + std::to_string(slots) + " slot_bytes=" + std::to_string(slot_bytes);
}

Participants participants_from_table(const GraphSpec& spec,
                                     const std::map<std::string, Endpoint>& table) {
  Participants p;
  p.of_actor.assign(spec.actors.size(), 0);
  p.actors.emplace_back();
  p.names.push_back("driver");
  auto driver = table.find(driver_rendezvous_name);
  p.endpoints.push_back(driver == table.end() ? Endpoint{} : driver->second);
  for (std::uint32_t a = 0; a < spec.actors.size(); ++a) {
    auto entry = table.find(spec.actors[a].name);
    if (entry == table.end()) {
      p.actors[0].push_back(a);
      continue;
    }
    auto same = std::find(p.endpoints.begin() + 1, p.endpoints.end(), entry->second);
    if (same == p.endpoints.end()) {
      p.endpoints.push_back(entry->second);
      p.actors.emplace_back();
      p.names.push_back(spec.actors[a].name);
      same = p.endpoints.end() - 1;
    }
    const int index = static_cast<int>(same - p.endpoints.begin());
    p.of_actor[a] = index;
    p.actors[static_cast<std::size_t>(index)].push_back(a);
  }
  return p;
}

std::vector<Stream> plan_streams(const GraphSpec& spec, const Participants& participants) {
  std::vector<Stream> streams;
  auto where = [&](int actor) { return actor < 0 ? 0 : participants.of_actor.at(static_cast<std::size_t>(actor)); };
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    const ChannelSpec& channel = spec.channels[c];
    if (channel.reader_actors.size() != channel.readers)
      throw std::runtime_error("graph '" + std::string(spec.name) +
                               "' was compiled without the readers of its channels; rebuild it "
                               "with this version's cgc to place actors on several hosts");
    const int from = where(channel.writer);
    std::map<int, std::vector<std::uint32_t>> by_participant;
    for (std::uint32_t slot = 0; slot < channel.readers; ++slot)
      if (int to = where(channel.reader_actors[slot]); to != from)
        by_participant[to].push_back(slot);
    for (auto& [to, slots] : by_participant)
      streams.push_back({c, from, to, std::move(slots)});
  }
  return streams;
}

TcpChannelSpec stream_spec(const GraphSpec& spec, const Participants& participants,
                           const Stream& stream) {
  return {spec.name, "c" + std::to_string(stream.channel),
          participants.names.at(static_cast<std::size_t>(stream.from)),
          participants.names.at(static_cast<std::size_t>(stream.to))};
}

std::vector<Channel> init_segment(std::span<std::byte> memory, const GraphSpec& spec,
                                  std::uint32_t slots, std::uint32_t slot_bytes,
                                  const SegmentLayout& layout) {
  auto* header = new (memory.data()) SegmentHeader{};
  header->magic = kSegmentMagic;
  header->slots = slots;
  header->slot_bytes = slot_bytes;
  header->actor_count = static_cast<std::uint32_t>(spec.actors.size());
  header->channel_count = static_cast<std::uint32_t>(spec.channels.size());
  header->communicator_count = static_cast<std::uint32_t>(spec.communicators.size());
  header->communicator_bytes = 0;
  std::strncpy(header->graph, spec.name, sizeof(header->graph) - 1);
  std::vector<Channel> channels;
  for (std::size_t i = 0; i < spec.channels.size(); ++i)
    channels.push_back(Channel::create(memory.data() + layout.channel_offsets[i],
                                       {slots, slot_bytes, spec.channels[i].readers}));
  return channels;
}

// ---- Relays -----------------------------------------------------------------

Relays::~Relays() { join(); }

std::string Relays::start(const GraphSpec& spec, const Participants& participants, int me,
                          TcpChannelListener& listener, std::vector<Channel> local,
                          Deadline deadline, Fault fault) {
  local_ = std::move(local);
  fault_ = std::move(fault);
  std::vector<Stream> streams = plan_streams(spec, participants);
  std::vector<TcpChannelSpec> incoming;
  std::vector<TcpOutgoing> outgoing;
  std::vector<const Stream*> in_streams, out_streams;
  for (const Stream& s : streams) {
    if (s.to == me) {
      incoming.push_back(stream_spec(spec, participants, s));
      in_streams.push_back(&s);
    } else if (s.from == me) {
      outgoing.push_back({stream_spec(spec, participants, s),
                          participants.endpoints.at(static_cast<std::size_t>(s.to))});
      out_streams.push_back(&s);
    }
  }
  TcpChannels tcp;
  if (set_up_channels(listener, incoming, outgoing, deadline, tcp) != NetStatus::ok)
    return tcp.error;
  auto describe = [&](const Stream& s) {
    return "TCP channel c" + std::to_string(s.channel) + " (" +
           participants.names.at(static_cast<std::size_t>(s.from)) + " -> " +
           participants.names.at(static_cast<std::size_t>(s.to)) + ") of graph '" + spec.name +
           "'";
  };
  for (std::size_t i = 0; i < out_streams.size(); ++i) {
    const Stream& s = *out_streams[i];
    auto sender = std::make_unique<Sender>();
    sender->writer = std::move(tcp.writers[i]);
    for (std::uint32_t slot : s.slots)
      sender->readers.emplace_back(local_.at(s.channel), slot);
    sender->what = describe(s);
    senders_.push_back(std::move(sender));
  }
  for (std::size_t i = 0; i < in_streams.size(); ++i) {
    const Stream& s = *in_streams[i];
    auto receiver = std::make_unique<Receiver>();
    receiver->reader = std::move(tcp.readers[i]);
    receiver->writer = ChannelWriter(local_.at(s.channel));
    const ChannelSpec& channel = spec.channels[s.channel];
    for (std::uint32_t slot = 0; slot < channel.readers; ++slot) {
      int reader = channel.reader_actors[slot];
      int at = reader < 0 ? 0 : participants.of_actor.at(static_cast<std::size_t>(reader));
      if (at != me)
        receiver->drains.emplace_back(local_.at(s.channel), slot);
    }
    receiver->what = describe(s);
    receivers_.push_back(std::move(receiver));
  }
  for (auto& sender : senders_)
    threads_.emplace_back([this, s = sender.get()] { send_loop(*s); });
  for (auto& receiver : receivers_)
    threads_.emplace_back([this, r = receiver.get()] { receive_loop(*r); });
  return {};
}

void Relays::send_loop(Sender& s) {
  for (;;) {
    ChannelReader::Message first;
    ChannelStatus status = s.readers[0].acquire(first, Deadline::max());
    for (std::size_t i = 1; status == ChannelStatus::ok && i < s.readers.size(); ++i) {
      ChannelReader::Message same;
      status = s.readers[i].acquire(same, Deadline::max());
    }
    if (status == ChannelStatus::closed || closing_.load())
      return;
    if (status != ChannelStatus::ok) {
      fault_(s.what + ": the local ring is " + to_string(status), true);
      return;
    }
    if (s.writer.send(first.kind, first.payload, Deadline::max()) != ChannelStatus::ok) {
      if (!closing_.load())
        fault_(s.what + ": " + std::string(s.writer.error()), false);
      return;
    }
    for (ChannelReader& reader : s.readers)
      reader.release();
  }
}

void Relays::receive_loop(Receiver& r) {
  for (;;) {
    TcpReader::Message message;
    ChannelStatus status = r.reader.receive(message, Deadline::max());
    if (closing_.load())
      return;
    if (status != ChannelStatus::ok) {
      fault_(r.what + ": " + std::string(r.reader.error()), status != ChannelStatus::closed);
      return;
    }
    std::span<std::byte> slot;
    status = r.writer.acquire(message.payload.size(), slot, Deadline::max());
    if (status == ChannelStatus::closed)
      return;
    if (status != ChannelStatus::ok) {
      fault_(r.what + ": the local ring is " + to_string(status), true);
      return;
    }
    std::memcpy(slot.data(), message.payload.data(), message.payload.size());
    r.writer.publish(message.kind, message.payload.size());
    for (ChannelReader& drain : r.drains) {
      ChannelReader::Message skipped;
      if (drain.acquire(skipped, Deadline::max()) != ChannelStatus::ok)
        return;
      drain.release();
    }
  }
}

void Relays::close() noexcept {
  closing_.store(true);
  for (Channel& channel : local_)
    channel.close();
  for (auto& sender : senders_)
    sender->writer.close();
  for (auto& receiver : receivers_)
    receiver->reader.close();
}

void Relays::join() noexcept {
  close();
  for (std::thread& thread : threads_)
    if (thread.joinable())
      thread.join();
  threads_.clear();
}

// ---- An actor process that is not the driver's child ------------------------

int remote_actor_main(const GraphSpec& spec, const std::vector<std::string>& names) {
  const std::string who = std::string(spec.name) + "/" + join_names(names);
  auto fail = [&](const std::string& why, int code = 2) {
    std::fprintf(stderr, "cg actor %s: %s\n", who.c_str(), why.c_str());
    return code;
  };
  std::vector<std::uint32_t> mine;
  for (const std::string& name : names) {
    std::uint32_t a = 0;
    while (a < spec.actors.size() && name != spec.actors[a].name)
      ++a;
    if (a == spec.actors.size())
      return fail("graph '" + std::string(spec.name) + "' has no actor '" + name + "'", 64);
    mine.push_back(a);
  }
  const std::optional<Endpoint> server = rendezvous_from_env();
  if (!server)
    return fail(std::string(rendezvous_variable) +
                    " is not set to host:port (the driver's rendezvous); the driver's launcher, "
                    "mpirun -x or srun --export sets it",
                64);
  if (!spec.communicators.empty())
    return fail("graphs with NCCL edges or collectives cannot run on several hosts yet");
  const Deadline deadline = Clock::now() + std::chrono::seconds(60);

  RendezvousClient client;
  if (client.connect(*server, spec.name, deadline) != NetStatus::ok)
    return fail(client.error());
  std::uint32_t slots = 0, slot_bytes = 0;
  if (!parse_greeting(client.greeting(), slots, slot_bytes))
    return fail("the rendezvous at " + to_string(*server) + " sent no channel geometry ('" +
                client.greeting() + "')");
  TcpChannelListener listener;
  if (listener.listen({"0.0.0.0", 0}) != NetStatus::ok)
    return fail(listener.error());
  const Endpoint self{client.local_host(), listener.endpoint().port};
  for (const std::string& name : names)
    if (client.publish(name, self, deadline) != NetStatus::ok)
      return fail(client.error());
  if (client.wait_for_table(deadline) != NetStatus::ok)
    return fail(client.error());
  const Participants participants = participants_from_table(spec, client.table());
  const int me = participants.of_actor[mine[0]];

  const SegmentLayout layout = segment_layout(spec, slots, slot_bytes, 0);
  SharedSegment segment = SharedSegment::create_anonymous(std::string("cg.") + spec.name,
                                                          layout.total_bytes);
  std::span<std::byte> memory(static_cast<std::byte*>(segment.data()), segment.size());
  std::vector<Channel> channels = init_segment(memory, spec, slots, slot_bytes, layout);

  // Faults of relays and actor threads reach the main thread through `wake`.
  const int wake = ::eventfd(0, EFD_CLOEXEC);
  std::mutex mutex;
  std::string failure;
  bool corrupt = false;
  auto report = [&](const std::string& why, bool bad_frame) {
    {
      std::lock_guard lock(mutex);
      if (!failure.empty())
        return;
      failure = why;
      corrupt = bad_frame;
    }
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
  };

  Relays relays;
  std::string setup = relays.start(spec, participants, me, listener, channels, deadline, report);
  if (!setup.empty())
    return fail(setup);
  std::vector<std::thread> threads;
  for (std::uint32_t actor : mine)
    threads.emplace_back([&, actor] {
      try {
        ActorProcess process(spec, actor, memory);
        spec.actors[actor].run(process);
      } catch (const GraphStopped&) {
      } catch (const std::exception& e) {
        if (!relays.closing())
          report(std::string("actor '") + spec.actors[actor].name + "' failed: " + e.what(), false);
      }
    });
  auto stop = [&] {
    relays.close();
    for (std::thread& thread : threads)
      thread.join();
    relays.join();
    ::close(wake);
  };
  auto failed = [&] {
    std::lock_guard lock(mutex);
    return !failure.empty();
  };

  auto* header = reinterpret_cast<SegmentHeader*>(memory.data());
  while (header->ready.load(std::memory_order_acquire) < mine.size() && !failed()) {
    if (Clock::now() > deadline) {
      report("actors did not start within 60 s", false);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  if (!failed())
    for (const std::string& name : names)
      if (client.ready(name, deadline) != NetStatus::ok)
        report(client.error(), false);

  // Run until the driver closes the connection (teardown, or it died), or a fault.
  bool driver_gone = false;
  while (!driver_gone && !failed()) {
    pollfd fds[2] = {{client.fd(), POLLIN, 0}, {wake, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0)
      continue;
    if (fds[0].revents) {
      char buffer[256];
      ssize_t n = ::recv(client.fd(), buffer, sizeof buffer, MSG_DONTWAIT);
      driver_gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
    }
  }
  if (driver_gone) {
    stop();
    return 0;
  }
  // A peer that went away is usually the driver tearing down: give its
  // rendezvous connection a moment to close before calling it a failure.
  if (!corrupt) {
    pollfd control{client.fd(), POLLIN, 0};
    char buffer[256];
    auto until = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < until && ::poll(&control, 1, 100) >= 0) {
      if (control.revents && ::recv(client.fd(), buffer, sizeof buffer, MSG_DONTWAIT) <= 0) {
        stop();
        return 0;
      }
    }
  }
  std::string why;
  {
    std::lock_guard lock(mutex);
    why = failure;
  }
  client.report_failure((corrupt ? "channel " : "actor ") + why);
  stop();
  return fail(why);
}

} // namespace cg::detail
