// scale_out.cpp - Participants, TCP streams and relays of a graph spread over hosts.
//
// See net/scale_out.hpp for the model. The relays are threads that
// block: a sender in ChannelReader::acquire (woken by the ring's close), a
// forwarded one on its kicks (woken by close()), both in HostWriter::finish;
// a receiver in HostReader::receive (woken by close()) or
// ChannelWriter::acquire. Closing the rings and the streams ends them all.
#include "net/scale_out.hpp"
#include "net/rendezvous.hpp"
#include "shm/wait.hpp"
#if CG_HAVE_UCX
#include "net/ucx_channel.hpp"
#endif
#include "support/deadline.hpp"
#include "support/text.hpp"
#include <cg/errors.hpp>

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
#include <filesystem>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>

namespace cg::detail {

const char* to_string(HostTransport transport) noexcept {
  return transport == HostTransport::ucx ? "ucx" : "tcp";
}

namespace {

// An RDMA device (InfiniBand, RoCE, iWARP) on this host: what UCX can use
// and our TCP stream cannot.
bool have_rdma_device() {
  std::error_code ignored;
  return std::filesystem::directory_iterator("/sys/class/infiniband", ignored) !=
         std::filesystem::directory_iterator();
}

} // namespace

bool host_transport_from_environment(HostTransport& transport, std::string& error) {
  const char* chosen = std::getenv("CG_HOST_TRANSPORT");
  const std::string value = chosen == nullptr ? "" : chosen;
  if (value == "tcp") {
    transport = HostTransport::tcp;
    return true;
  }
  if (value == "ucx") {
#if CG_HAVE_UCX
    transport = HostTransport::ucx;
    return true;
#else
    error = "CG_HOST_TRANSPORT=ucx, but this runtime was built without UCX (CG_WITH_UCX=OFF)";
    return false;
#endif
  }
  if (value.empty() || value == "auto") {
    // UCX where it can beat our TCP stream: with an RDMA device, or when the
    // user picks UCX's transports (UCX_TLS). Over plain TCP our own stream
    // measured faster (docs/performance.md, multihost_bench).
#if CG_HAVE_UCX
    transport = have_rdma_device() || std::getenv("UCX_TLS") != nullptr ? HostTransport::ucx
                                                                        : HostTransport::tcp;
#else
    transport = HostTransport::tcp;
#endif
    return true;
  }
  error = "CG_HOST_TRANSPORT='" + value + "' is none of 'auto', 'ucx' and 'tcp'";
  return false;
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
  auto where = [&](int actor) {
    return actor < 0 ? 0 : participants.of_actor.at(static_cast<std::size_t>(actor));
  };
  for (std::uint32_t c = 0; c < spec.channels.size(); ++c) {
    const ChannelSpec& channel = spec.channels[c];
    const int from = where(channel.writer);
    std::map<int, std::vector<std::uint32_t>> by_participant;
    for (std::uint32_t slot = 0; slot < channel.readers(); ++slot)
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
          participants.names.at(static_cast<std::size_t>(stream.to)), ""};
}

Connections plan_connections(const GraphSpec& spec, const Participants& participants,
                             const std::vector<Stream>& streams, int me, HostTransport transport) {
  Connections plan;
  for (const Stream& s : streams) {
    if (s.to == me)
      plan.in_streams.push_back(s);
    else if (s.from == me)
      plan.out_streams.push_back(s);
  }
  const std::vector<Stream>& ins = plan.in_streams;
  const std::vector<Stream>& outs = plan.out_streams;
  // The i-th stream (by channel: plan_streams() lists them so) from here to
  // a participant and the i-th from it to here are partners.
  constexpr std::size_t none = SIZE_MAX;
  using End = Connections::End;
  std::vector<std::size_t> out_partner(outs.size(), none), in_partner(ins.size(), none);
  if (transport == HostTransport::tcp) {
    for (std::size_t q = 0; q < participants.endpoints.size(); ++q) {
      std::vector<std::size_t> to_q, from_q;
      for (std::size_t k = 0; k < outs.size(); ++k)
        if (outs[k].to == static_cast<int>(q))
          to_q.push_back(k);
      for (std::size_t j = 0; j < ins.size(); ++j)
        if (ins[j].from == static_cast<int>(q))
          from_q.push_back(j);
      for (std::size_t i = 0; i < std::min(to_q.size(), from_q.size()); ++i) {
        out_partner[to_q[i]] = from_q[i];
        in_partner[from_q[i]] = to_q[i];
      }
    }
  }
  plan.out_ends.resize(outs.size());
  plan.in_ends.resize(ins.size());
  // The connection stream `s` opens, carrying its partner (if any) back, the
  // `index`-th of its side's list; none if the partner's carries it instead:
  // the lower channel opens.
  auto connection_of = [&](const Stream& s, const Stream* partner, End* partner_end,
                           std::size_t index) -> std::optional<TcpChannelSpec> {
    if (partner != nullptr && partner->channel < s.channel)
      return std::nullopt;
    TcpChannelSpec connection = stream_spec(spec, participants, s);
    if (partner != nullptr) {
      connection.returning = stream_spec(spec, participants, *partner).channel;
      *partner_end = {true, index};
    }
    return connection;
  };
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const std::size_t j = out_partner[k];
    const std::optional<TcpChannelSpec> connection =
        connection_of(outs[k], j == none ? nullptr : &ins[j],
                      j == none ? nullptr : &plan.in_ends[j], plan.outgoing.size());
    if (!connection)
      continue;
    plan.out_ends[k] = {false, plan.outgoing.size()};
    plan.outgoing.push_back(
        {*connection, participants.endpoints.at(static_cast<std::size_t>(outs[k].to))});
  }
  for (std::size_t j = 0; j < ins.size(); ++j) {
    const std::size_t k = in_partner[j];
    const std::optional<TcpChannelSpec> connection =
        connection_of(ins[j], k == none ? nullptr : &outs[k],
                      k == none ? nullptr : &plan.out_ends[k], plan.incoming.size());
    if (!connection)
      continue;
    plan.in_ends[j] = {false, plan.incoming.size()};
    plan.incoming.push_back(*connection);
  }
  return plan;
}

TcpReader& Connections::reader_of(std::size_t j, TcpChannels& made) const {
  const End& end = in_ends.at(j);
  return end.returned ? made.returned_readers.at(end.index) : made.readers.at(end.index);
}

TcpWriter& Connections::writer_of(std::size_t k, TcpChannels& made) const {
  const End& end = out_ends.at(k);
  return end.returned ? made.returned_writers.at(end.index) : made.writers.at(end.index);
}

// ---- Relays -----------------------------------------------------------------

Relays::~Relays() { join(); }

std::string Relays::start(const GraphSpec& spec, const Participants& participants, int me,
                          TcpChannelListener& listener, HostTransport transport,
                          std::vector<Channel> local, Deadline deadline, Fault fault) {
  local_ = std::move(local);
  fault_ = std::move(fault);
  const Connections plan =
      plan_connections(spec, participants, plan_streams(spec, participants), me, transport);
  const std::vector<Stream>& in_streams = plan.in_streams;
  const std::vector<Stream>& out_streams = plan.out_streams;
  TcpChannels tcp;
  if (set_up_channels(listener, plan.incoming, plan.outgoing, deadline, tcp) != NetStatus::ok)
    return tcp.error;
  std::vector<TcpReader> tcp_readers;
  std::vector<TcpWriter> tcp_writers;
  for (std::size_t j = 0; j < in_streams.size(); ++j)
    tcp_readers.push_back(std::move(plan.reader_of(j, tcp)));
  for (std::size_t k = 0; k < out_streams.size(); ++k)
    tcp_writers.push_back(std::move(plan.writer_of(k, tcp)));
  // Connections dropped on the way (a stranger, a wrong secret) are logged;
  // a failed set-up says them in its error instead.
  for (const std::string& rejection : listener.rejections())
    std::fprintf(stderr, "cg: graph '%s': dropped a %s\n", spec.name, rejection.c_str());
  if (const std::optional<std::string> rest = listener.rejection_summary())
    std::fprintf(stderr, "cg: graph '%s': dropped %s\n", spec.name, rest->c_str());
  const std::string kind = transport == HostTransport::ucx ? "UCX" : "TCP";
  auto describe = [&](const Stream& s) {
    return kind + " channel c" + std::to_string(s.channel) + " (" +
           participants.names.at(static_cast<std::size_t>(s.from)) + " -> " +
           participants.names.at(static_cast<std::size_t>(s.to)) + ") of graph '" + spec.name + "'";
  };
  // UCX streams start on the set-up's connections: every reader offers its
  // worker first, then every writer connects (so no two processes wait for
  // each other).
  std::vector<std::unique_ptr<HostReader>> readers;
  std::vector<std::unique_ptr<HostWriter>> writers;
  for (TcpReader& reader : tcp_readers) {
    if (transport == HostTransport::tcp) {
      readers.push_back(std::make_unique<TcpReader>(std::move(reader)));
      continue;
    }
#if CG_HAVE_UCX
    std::string error;
    readers.push_back(UcxReader::offer(std::move(reader), deadline, error));
    if (!readers.back())
      return error;
#endif
  }
  for (TcpWriter& writer : tcp_writers) {
    if (transport == HostTransport::tcp) {
      writers.push_back(std::make_unique<TcpWriter>(std::move(writer)));
      continue;
    }
#if CG_HAVE_UCX
    std::string error;
    writers.push_back(UcxWriter::connect(std::move(writer), deadline, error));
    if (!writers.back())
      return error;
#endif
  }
  if (readers.size() != in_streams.size() || writers.size() != out_streams.size())
    return "this runtime was built without UCX (CG_WITH_UCX=OFF), but the driver chose it";
  for (std::size_t i = 0; i < out_streams.size(); ++i) {
    const Stream& s = out_streams[i];
    auto sender = std::make_unique<Sender>();
    sender->writer = std::move(writers[i]);
    if (transport == HostTransport::tcp)
      sender->tcp = static_cast<TcpWriter*>(sender->writer.get());
    for (std::uint32_t slot : s.slots)
      sender->readers.emplace_back(local_.at(s.channel), slot);
    sender->what = describe(s);
    sender->ring = local_.at(s.channel);
    // Forwarded where the writer is a thread of this process: every actor of
    // an actor process, and on the driver's host the driver itself (not its
    // host's actors, which may be processes sharing only its segment).
    sender->forwarded = me != 0 || spec.channels[s.channel].writer < 0;
    if (sender->forwarded) {
      auto same = std::find_if(forwardings_.begin(), forwardings_.end(),
                               [&](const auto& f) { return f->channel == s.channel; });
      if (same == forwardings_.end()) {
        forwardings_.push_back(std::make_unique<Forwarding>());
        forwardings_.back()->relays = this;
        forwardings_.back()->channel = s.channel;
        same = forwardings_.end() - 1;
      }
      (*same)->senders.push_back(sender.get());
    }
    senders_.push_back(std::move(sender));
  }
  // A message goes from its writer's memory where one TCP stream reaches
  // every reader of its channel: no reader here reads the message.
  for (auto& forwarding : forwardings_) {
    const Sender& only = *forwarding->senders.front();
    forwarding->borrows = forwarding->senders.size() == 1 && only.tcp != nullptr &&
                          only.readers.size() == only.ring.config().readers;
  }
  for (std::size_t i = 0; i < in_streams.size(); ++i) {
    const Stream& s = in_streams[i];
    const int reading_actor = spec.channels[s.channel].reader_actors[s.slots[0]];
    // Direct: the one reader here is an actor of an actor process, or the
    // driver itself (not an actor of the driver's host: those may be
    // processes of their own, sharing only its segment).
    if (s.slots.size() == 1 && (me != 0 ? reading_actor >= 0 : reading_actor < 0)) {
      auto direct = std::make_unique<Direct>();
      direct->relays = this;
      direct->reader = std::move(readers[i]);
      direct->channel = s.channel;
      direct->slot = s.slots[0];
      direct->what = describe(s);
      directs_.push_back(std::move(direct));
      continue;
    }
    auto receiver = std::make_unique<Receiver>();
    receiver->reader = std::move(readers[i]);
    receiver->writer = ChannelWriter(local_.at(s.channel));
    const ChannelSpec& channel = spec.channels[s.channel];
    for (std::uint32_t slot = 0; slot < channel.readers(); ++slot) {
      int reader = channel.reader_actors[slot];
      int at = reader < 0 ? 0 : participants.of_actor.at(static_cast<std::size_t>(reader));
      if (at != me)
        receiver->drains.emplace_back(local_.at(s.channel), slot);
    }
    receiver->what = describe(s);
    receivers_.push_back(std::move(receiver));
  }
  for (auto& sender : senders_)
    threads_.emplace_back([this, s = sender.get()] {
      if (s->forwarded)
        forward_loop(*s);
      else
        send_loop(*s);
    });
  for (auto& receiver : receivers_)
    threads_.emplace_back([this, r = receiver.get()] { receive_loop(*r); });
  return {};
}

// The relay of a stream that is not forwarded: waits on the ring.
void Relays::send_loop(Sender& s) {
  for (;;) {
    ChannelReader::Message next; // move_ready() acquires it again: the same one
    const ChannelStatus status = s.readers[0].acquire(next, Deadline::max());
    if (status == ChannelStatus::closed || closing_.load())
      return;
    if (status != ChannelStatus::ok) {
      fault_(s.what + ": the local ring is " + to_string(status), true);
      return;
    }
    if (move_ready(s, true) == Moved::stopped)
      return;
  }
}

// Moves the messages ready in s's ring to its stream, s.busy held: the
// relay (`wait`) sends each whole and reports what fails; the ring's writer
// only starts them and returns `left` for whatever it cannot finish without
// waiting (the relay then meets it again: a pending frame, or the same
// failure, since a message stays in the ring until it has gone).
Relays::Moved Relays::move_ready(Sender& s, bool wait) noexcept {
  auto release = [&] {
    for (ChannelReader& reader : s.readers)
      reader.release();
  };
  auto failed = [&](const std::string& why, bool corrupt) {
    if (!wait)
      return Moved::left;
    if (!closing_.load())
      fault_(s.what + ": " + why, corrupt);
    return Moved::stopped;
  };
  if (s.writer->pending()) {
    if (!wait)
      return Moved::left;
    if (s.writer->finish(Deadline::max()) != ChannelStatus::ok)
      return failed(std::string(s.writer->error()), false);
    release();
  }
  for (;;) {
    ChannelReader::Message first;
    ChannelStatus status = s.readers[0].acquire(first, Deadline::min());
    for (std::size_t i = 1; status == ChannelStatus::ok && i < s.readers.size(); ++i) {
      ChannelReader::Message same;
      status = s.readers[i].acquire(same, Deadline::min());
    }
    if (status == ChannelStatus::timeout)
      return Moved::all;
    if (status == ChannelStatus::closed || closing_.load())
      return wait ? Moved::stopped : Moved::left;
    if (status != ChannelStatus::ok)
      return failed(std::string("the local ring is ") + to_string(status), true);
    status = s.writer->start(first.kind, first.payload);
    if (status == ChannelStatus::ok && s.writer->pending()) {
      if (!wait)
        return Moved::left;
      status = s.writer->finish(Deadline::max());
    }
    if (status != ChannelStatus::ok)
      return failed(std::string(s.writer->error()), false);
    if (!wait)
      s.by_writer.fetch_add(1, std::memory_order_relaxed);
    release();
  }
}

// Tells s's relay that there is work for it.
void Relays::kick(Sender& s) noexcept {
  s.kicks.fetch_add(1, std::memory_order_release);
  wake({s.kicks, s.kick_waiters});
}

// On the ring's writer's thread, after each message it publishes.
void Relays::Forwarding::published() noexcept {
  for (Sender* s : senders) {
    Moved moved = Moved::left;
    if (s->busy.try_lock()) {
      moved = relays->move_ready(*s, false);
      s->busy.unlock();
    }
    if (moved != Moved::all)
      kick(*s);
  }
}

// How long a writer sending a message from its memory waits for the
// stream to take more: as long as copying what is left would take at this
// pace (slower than a large memcpy on the machines measured, so the stream
// gets the benefit of the doubt). A stream that stalls longer (its reader is
// busy) is left the copy, so that the writer returns about as soon as it
// would have, had it copied the message to begin with.
constexpr std::size_t copied_bytes_per_us = 4000;
// But not less than a reader's hiccup (a time slice lost to another thread)
// near the end of a message: that costs the relay's wake-up to finish it.
constexpr std::chrono::microseconds least_patience{1000};

// On the ring's writer's thread (net/scale_out.hpp: Forwarding).
void Relays::Forwarding::publish_borrowed(ChannelWriter& writer, MessageKind kind,
                                          std::size_t bytes, BorrowedRuns& borrowed,
                                          Deadline deadline) noexcept {
  Sender& s = *senders.front();
  std::unique_lock busy(s.busy, std::try_to_lock);
  if (!busy.owns_lock() || relays->move_ready(s, false) != Moved::all) {
    // Earlier messages are still on their way: this one waits its turn in
    // the ring, whole, as any other.
    if (busy.owns_lock())
      busy.unlock();
    borrowed.fill_from(0);
    writer.publish(kind, bytes);
    return;
  }
  // Published without telling published(): this thread sends it, busy held.
  writer.forward_with(nullptr);
  writer.publish(kind, bytes);
  writer.forward_with(this);
  ChannelReader::Message message;
  ChannelStatus status = ChannelStatus::ok;
  for (std::size_t i = 0; status == ChannelStatus::ok && i < s.readers.size(); ++i)
    status = s.readers[i].acquire(message, Deadline::min());
  TcpWriter& stream = *s.tcp;
  if (status == ChannelStatus::ok)
    status = stream.start_borrowing(message.kind, message.payload, borrowed.view());
  while (status == ChannelStatus::ok && stream.pending()) {
    const std::size_t left = stream.unsent();
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      break;
    const Deadline patience =
        now + std::max(least_patience, std::chrono::microseconds(left / copied_bytes_per_us));
    status = stream.advance(std::min(deadline, patience));
    if (stream.unsent() == left)
      break; // stalled
  }
  if (status == ChannelStatus::ok && !stream.pending()) {
    for (ChannelReader& reader : s.readers)
      reader.release();
    s.by_writer.fetch_add(1, std::memory_order_relaxed);
    s.borrowed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The relay sends the rest (or meets the same failure, and reports it),
  // from the message, which gets what it lacks from here on.
  borrowed.fill_from(status == ChannelStatus::ok ? stream.payload_sent() : 0);
  stream.forget_runs();
  busy.unlock();
  kick(s);
}

// The relay of a forwarded stream: sends what the writer left, when kicked.
// A kick read before the lock is taken is never missed: one that comes
// later ends the wait at once.
void Relays::forward_loop(Sender& s) {
  for (;;) {
    const std::uint32_t seen = s.kicks.load(std::memory_order_acquire);
    Moved moved;
    {
      std::lock_guard lock(s.busy);
      moved = move_ready(s, true);
    }
    if (moved == Moved::stopped)
      return;
    const WaitOutcome outcome = wait_until(
        {s.kicks, s.kick_waiters}, Deadline::max(),
        [&] { return closing_.load() || s.ring.closed(); },
        [&] { return s.kicks.load(std::memory_order_acquire) != seen; });
    if (outcome != WaitOutcome::ready)
      return;
  }
}

void Relays::receive_loop(Receiver& r) {
  for (;;) {
    HostReader::Message message;
    ChannelStatus status = r.reader->receive(message, Deadline::max());
    if (closing_.load())
      return;
    if (status != ChannelStatus::ok) {
      fault_(r.what + ": " + std::string(r.reader->error()), status != ChannelStatus::closed);
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

Forwarder* Relays::forwarder(std::uint32_t channel) const noexcept {
  for (const auto& forwarding : forwardings_)
    if (forwarding->channel == channel)
      return forwarding.get();
  return nullptr;
}

std::uint64_t Relays::sent_by_writers() const noexcept {
  std::uint64_t sent = 0;
  for (const auto& sender : senders_)
    sent += sender->by_writer.load(std::memory_order_relaxed);
  return sent;
}

std::uint64_t Relays::sent_borrowed() const noexcept {
  std::uint64_t sent = 0;
  for (const auto& sender : senders_)
    sent += sender->borrowed.load(std::memory_order_relaxed);
  return sent;
}

MessageSource* Relays::source(std::uint32_t channel, std::uint32_t slot) const noexcept {
  for (const auto& direct : directs_)
    if (direct->channel == channel && direct->slot == slot)
      return direct.get();
  return nullptr;
}

// On the reading actor's thread. A frame stays valid until the next receive,
// so until release(); acquiring again before that gives the same one.
ChannelStatus Relays::Direct::acquire(ChannelReader::Message& message, Deadline deadline) noexcept {
  if (!holding) {
    const ChannelStatus status = reader->receive(held, deadline);
    if (status == ChannelStatus::timeout)
      return status;
    if (status != ChannelStatus::ok) {
      // As a relay would: the fault says what happened to the stream (the
      // actor's own report of a bad read comes second and is dropped).
      if (relays->closing())
        return ChannelStatus::closed;
      relays->fault_(what + ": " + std::string(reader->error()), status != ChannelStatus::closed);
      return status == ChannelStatus::too_large ? ChannelStatus::corrupt : status;
    }
    holding = true;
  }
  message = held;
  return ChannelStatus::ok;
}

void Relays::close() noexcept {
  closing_.store(true);
  for (Channel& channel : local_)
    channel.close();
  for (auto& sender : senders_) {
    sender->writer->close();
    if (sender->forwarded)
      kick(*sender);
  }
  for (auto& receiver : receivers_)
    receiver->reader->close();
  for (auto& direct : directs_)
    direct->reader->close();
}

void Relays::join() noexcept {
  close();
  for (std::thread& thread : threads_)
    if (thread.joinable())
      thread.join();
  threads_.clear();
}

} // namespace cg::detail
