// net/scale_out.hpp - Graphs spread over processes that share no memory.
//
// Every process of a launched graph that shares no memory with the driver is
// a *participant* of its own: the driver (with the actors it runs on host 0)
// is participant 0; each other actor process (one per host when the driver
// starts them, one per actor under mpirun/srun) is another, running its
// actors as threads over a private segment laid out as the driver's. Which
// actors share a process is read from the rendezvous table: actors published
// under one endpoint are one participant, those not published are the
// driver's. So the driver and every actor process compute the same plan.
//
// A stream that brings a channel to one reading actor of an actor process,
// or to the driver alone (a result), is *direct*: that actor's reads, or the
// driver's, take each frame from the stream itself, with no relay thread and
// no copy into a ring (Relays::source). Not to the actors of the driver's
// host, which may be processes sharing its segment.
//
// A channel whose writer and some readers are in different participants
// becomes one stream per reading participant (net/host_stream.hpp), carried
// by UCX or by our own TCP stream as the driver chooses
// (host_transport_from_environment); its greeting (net/greeting.hpp) tells
// every actor process which. Either way the stream starts as an authenticated TCP
// channel connection (net/tcp_setup.hpp). Nothing in the generated
// actor programs changes: *relays* move messages between the local rings and
// the streams. On the writer's side a sender relay reads the ring as the
// reader slots of that participant and sends each message as one frame
// (where the ring's writer is a thread of this process, it mostly sends the
// message itself and the relay finishes what it could not: Sender); on
// the reader's side a receiver relay writes each frame into the local ring
// (and consumes the slots of readers who live elsewhere, so the ring never
// fills up with messages nobody here reads). Frames are sequence-numbered and
// checksummed (net/frame.hpp): a lost, reordered or corrupted frame stops
// the graph with cg::ChannelError, never reaches a method.
#pragma once

#include "net/host_stream.hpp"
#include "net/net.hpp"
#include "net/tcp_channel.hpp"
#include "net/tcp_setup.hpp"
#include <cg/detail/channel.hpp>
#include <cg/detail/graph_spec.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace cg::detail {

/// What carries the streams between participants.
enum class HostTransport { tcp, ucx };
const char* to_string(HostTransport transport) noexcept;
/// The driver's choice: CG_HOST_TRANSPORT=tcp or ucx; unset or auto: UCX
/// where the runtime was built with it and this host has an RDMA device (or
/// UCX_TLS is set), else TCP. A LaunchError-worthy sentence in `error` for a
/// value this runtime cannot honour.
bool host_transport_from_environment(HostTransport& transport, std::string& error);

/// The rendezvous name under which the driver publishes its own listener.
inline constexpr const char* driver_rendezvous_name = "@driver";

struct Participants {
  std::vector<int> of_actor;                      // per actor; 0: the driver's
  std::vector<std::vector<std::uint32_t>> actors; // per participant
  std::vector<std::string> names;                 // "driver", or the first actor's name
  std::vector<Endpoint> endpoints;                // per participant, where it listens
};

/// Groups the actors by the endpoint they published (the driver's entry is
/// participant 0, with the actors not in the table); numbered by their
/// lowest actor index.
Participants participants_from_table(const GraphSpec& spec,
                                     const std::map<std::string, Endpoint>& table);

/// One TCP stream: channel `channel` from participant `from` (its writer's)
/// to participant `to`, which reads reader slots `slots`.
struct Stream {
  std::uint32_t channel;
  int from;
  int to;
  std::vector<std::uint32_t> slots;
};

/// The streams of a graph whose actors are grouped as `participants`.
std::vector<Stream> plan_streams(const GraphSpec& spec, const Participants& participants);

/// How both ends name a stream in the TCP handshake.
TcpChannelSpec stream_spec(const GraphSpec& spec, const Participants& participants,
                           const Stream& stream);

/// How participant `me` connects its streams (set_up_channels()). Over our
/// TCP stream the i-th stream (by channel) from `me` to a participant and
/// the i-th from it to `me` share one connection (TcpChannelSpec::returning),
/// which the writer of the lower channel opens: each side's acknowledgements
/// then ride on the other's data. Both sides plan alike.
struct Connections {
  std::vector<Stream> in_streams;  // the streams `me` reads
  std::vector<Stream> out_streams; // the streams `me` writes
  std::vector<TcpChannelSpec> incoming;
  std::vector<TcpOutgoing> outgoing;
  /// The end of in_streams[j] (out_streams[k]) among what set_up_channels() made.
  TcpReader& reader_of(std::size_t j, TcpChannels& made) const;
  TcpWriter& writer_of(std::size_t k, TcpChannels& made) const;

  struct End {
    bool returned = false; // carried back on its partner's connection
    std::size_t index = 0; // into incoming or outgoing: that connection
  };
  std::vector<End> in_ends, out_ends;
};
Connections plan_connections(const GraphSpec& spec, const Participants& participants,
                             const std::vector<Stream>& streams, int me, HostTransport transport);

/// The relays of one participant: a thread per stream it sends or receives,
/// but for the direct streams it receives (above), which its actors read.
class Relays final : public MessageSources {
public:
  /// Why a relay stopped: `corrupt` for a bad frame (lost, reordered,
  /// checksum), false for a peer that went away. Called on the relay's thread.
  using Fault = std::function<void(const std::string& why, bool corrupt)>;

  Relays() = default;
  ~Relays();
  Relays(const Relays&) = delete;
  Relays& operator=(const Relays&) = delete;

  /// Sets up the streams of participant `me` (accepting on `listener`,
  /// connecting to the others' endpoints) within `deadline`, then starts
  /// relaying between them and `local` (this participant's channels).
  /// Returns the set-up error, empty on success.
  std::string start(const GraphSpec& spec, const Participants& participants, int me,
                    TcpChannelListener& listener, HostTransport transport,
                    std::vector<Channel> local, Deadline deadline, Fault fault);

  /// Closes every stream: blocked relays wake and end (any thread).
  void close() noexcept;
  /// close(), then waits for the relay threads.
  void join() noexcept;

  std::size_t streams() const noexcept {
    return senders_.size() + receivers_.size() + directs_.size();
  }
  std::size_t threads() const noexcept { return threads_.size(); }
  bool closing() const noexcept { return closing_.load(); }

  /// The stream reader slot `slot` of `channel` reads directly; null if none.
  MessageSource* source(std::uint32_t channel, std::uint32_t slot) const noexcept override;
  /// What the writer of `channel` must tell of each message (see Sender);
  /// null if its streams' relays wait on its ring.
  Forwarder* forwarder(std::uint32_t channel) const noexcept override;
  /// Frames that ring writers sent whole themselves (see Sender), of all streams.
  std::uint64_t sent_by_writers() const noexcept;
  /// Of those, frames sent whole from the caller's memory (publish_borrowed).
  std::uint64_t sent_borrowed() const noexcept;

private:
  // The writing end of one stream. Where the ring's writer is a thread of
  // this process (an actor process's actors, the driver's inputs) it is
  // *forwarded*: the writer tells it of each message and, when nobody else
  // is sending, starts the message on the stream itself, which saves the
  // relay's wake-up on the way. start() never waits, so the writer still
  // only waits where its schedule says. What the writer cannot finish (a
  // frame the socket did not take whole, a message it found the relay
  // sending, a failure to report) it leaves to the relay with a kick. The
  // relay of a stream that is not forwarded waits on the ring instead.
  struct Sender {
    std::unique_ptr<HostWriter> writer;
    TcpWriter* tcp = nullptr; // the writer, when it is our TCP stream
    std::vector<ChannelReader> readers;
    std::string what;
    Channel ring;
    bool forwarded = false;
    std::mutex busy; // held by whoever moves messages from the ring to the stream
    std::atomic<std::uint32_t> kicks{0};
    std::atomic<std::uint32_t> kick_waiters{0};
    std::atomic<std::uint64_t> by_writer{0}; // frames the ring's writer sent whole
    std::atomic<std::uint64_t> borrowed{0};  // of those, from the caller's memory
  };
  // The senders of one forwarded channel, which its writer tells. A message
  // whose large runs are still in its writer's memory (publish_borrowed:
  // the driver's input bound only for other hosts) is sent from there,
  // where one TCP stream carries it to every reader and is idle.
  struct Forwarding final : Forwarder {
    void published() noexcept override;
    bool sends_borrowed() const noexcept override { return borrows; }
    void publish_borrowed(ChannelWriter& writer, MessageKind kind, std::size_t bytes,
                          BorrowedRuns& borrowed, Deadline deadline) noexcept override;
    Relays* relays = nullptr;
    std::uint32_t channel = 0;
    std::vector<Sender*> senders;
    bool borrows = false;
  };
  struct Receiver {
    std::unique_ptr<HostReader> reader;
    ChannelWriter writer;
    std::vector<ChannelReader> drains;
    std::string what;
  };
  // A direct stream: the reading actor's ChannelReader takes frames from it.
  struct Direct final : MessageSource {
    ChannelStatus acquire(ChannelReader::Message& message, Deadline deadline) noexcept override;
    void release() noexcept override { holding = false; }
    Relays* relays = nullptr;
    std::unique_ptr<HostReader> reader;
    std::uint32_t channel = 0;
    std::uint32_t slot = 0;
    std::string what;
    ChannelReader::Message held{};
    bool holding = false;
  };
  enum class Moved { all, left, stopped };
  Moved move_ready(Sender& s, bool wait) noexcept;
  static void kick(Sender& s) noexcept;
  void send_loop(Sender& s);
  void forward_loop(Sender& s);
  void receive_loop(Receiver& r);

  std::vector<std::unique_ptr<Sender>> senders_;
  std::vector<std::unique_ptr<Forwarding>> forwardings_;
  std::vector<std::unique_ptr<Receiver>> receivers_;
  std::vector<std::unique_ptr<Direct>> directs_;
  std::vector<std::thread> threads_;
  std::vector<Channel> local_;
  std::atomic<bool> closing_{false};
  Fault fault_;
};

} // namespace cg::detail
