// cg/detail/channel.hpp - a single-writer / multi-reader message ring in (shared) memory.
//
// Actors of a compiled graph exchange values through fixed-size rings that live
// in memory both sides can map (a SharedSegment across processes, or plain memory
// between threads). The ring never allocates for a value that fits a slot and
// never copies per reader: every reader of the channel reads the one copy in
// the slot, and the writer may only reuse a slot once every reader has released it. Waiting is a
// short spin followed by a cross-process futex sleep, so an idle channel costs no CPU and a busy
// one needs no system call.
//
// Layout: config.max_in_flight slots (the executions a channel holds, as
// cg::LaunchOptions names it); message n (0-based) goes to slot n % max_in_flight. Each
// slot header carries n + 1 once message n is published (0 = never used), the
// message kind and its byte size. Each reader owns a "consumed" counter. The
// structures themselves are in shm/channel_layout.hpp.
//
// Values larger than a slot: the writer puts them in an *overflow buffer*, an
// anonymous shared-memory file, and the slot refers to it. Readers map it on
// demand (read-only) and keep the mapping for the next message that buffer
// carries, so a large value is still written once and read in place by every
// reader. The writer keeps a pool of buffers: one is free again once every
// reader has released the message it carried, and the next large value takes
// the smallest free one that holds it (a free one too small is remade larger;
// a new one is made only when none is free). So large values need no extra
// waiting and the ring keeps its capacity: max_in_flight large values may be in
// flight, as max_in_flight small ones. (One buffer per channel would let one unread large value
// stall the writer, and a driver blocked submitting an input cannot collect the result an actor is
// blocked on.) Memory: one buffer per large value in flight (at most max_in_flight), each as large
// as the largest value it carried, until the writer goes away; one large value at a time is one
// buffer. A reader unmaps a buffer it has not read for max_in_flight messages. Nothing is ever
// named in /dev/shm.
//
// Threading contract: at most one ChannelWriter per channel and at most one
// ChannelReader per reader index, each used by one thread at a time. close() and
// closed() may be called from anywhere, any process.
#pragma once

#include <cg/detail/launch_geometry.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace cg {

struct InputPaging; // cg/serialize.hpp

namespace detail {
struct ChannelHeader;
struct SlotHeader;
struct OverflowBuffer;
struct OverflowMapping;
class MessageSource;
class Forwarder;
struct BorrowedRuns; // cg/detail/borrowed_runs.hpp
} // namespace detail

namespace detail {
// Told of each overflow buffer a reader maps (or a writer makes), and of it
// again before it is unmapped: the ports that copy payloads to a GPU (or
// from one) pin these buffers (cudaHostRegister, tensor/pinned_mappings.hpp)
// so that the copy engines reach them directly, at the speed of pinned
// memory. Called from the reader's (writer's) thread; must not throw.
class MappingObserver {
public:
  virtual ~MappingObserver() = default;
  virtual void mapped(std::span<const std::byte> mapping) noexcept = 0;
  virtual void unmapping(std::span<const std::byte> mapping) noexcept = 0;
};
} // namespace detail

// Absolute deadline for blocking calls; Deadline::max() waits forever and
// Deadline::min() only looks once, without spinning or sleeping.
using Deadline = std::chrono::steady_clock::time_point;

enum class ChannelStatus {
  ok,
  closed,     // the channel was closed (by anyone); returned promptly to every waiter
  timeout,    // the deadline passed before the operation could proceed
  too_large,  // the value exceeds slot_bytes and no overflow buffer that large could be made
  corrupt,    // the shared memory holds impossible values (e.g. a size > slot_bytes)
  unmappable, // a message's overflow buffer could not be mapped (its writer is gone?)
};

const char* to_string(ChannelStatus status) noexcept;

enum class MessageKind : std::uint32_t { value = 0, error = 1 };

struct ChannelConfig {
  // Slots of the ring: the messages it holds (>= 1).
  std::uint32_t max_in_flight = detail::kDefaultLaunchGeometry.max_in_flight;
  // Payload capacity of one slot (may be 0).
  std::uint32_t slot_bytes = detail::kDefaultLaunchGeometry.slot_bytes;
  std::uint32_t readers = 1; // number of reader indices (>= 1)
};

// Bytes the channel occupies in memory (a multiple of 64), or 0 when the config
// is invalid (max_in_flight or readers == 0) or the size does not fit a size_t.
std::size_t channel_footprint(const ChannelConfig& config) noexcept;

// A non-owning view of a channel living in memory owned by someone else (the
// memory must outlive every Channel, ChannelWriter and ChannelReader on it).
class Channel {
public:
  Channel() = default;

  // Initialises a new channel in `memory`, which must be 64-byte aligned and at
  // least channel_footprint(config) bytes. Returns an invalid Channel (valid() ==
  // false) if memory is null or misaligned or the config is invalid.
  static Channel create(void* memory, const ChannelConfig& config) noexcept;

  // A view of a channel that create() initialised (possibly in another process).
  // Nothing is checked here: call valid() before trusting memory you did not
  // initialise yourself.
  static Channel attach(void* memory) noexcept;

  // True when the memory carries this implementation's magic number and layout
  // version and a self-consistent configuration.
  bool valid() const noexcept;

  ChannelConfig config() const noexcept; // precondition: valid()

  // Sets the closed flag and wakes every waiting reader and writer, in any
  // process. Closing is a teardown signal, not end-of-stream: from then on every
  // acquire returns `closed`, even when published messages remain unread.
  void close() noexcept;
  bool closed() const noexcept; // also true for a default-constructed Channel

private:
  friend class ChannelWriter;
  friend class ChannelReader;

  explicit Channel(detail::ChannelHeader* header) noexcept : header_(header) {}
  detail::ChannelHeader* header_ = nullptr;
};

// The single writer of a channel. A default-constructed writer (or one made
// from an invalid Channel) reports `closed` from acquire(). Movable, not
// copyable: it owns the overflow buffers of the slots it wrote large values to.
class ChannelWriter {
public:
  ChannelWriter() = default;
  explicit ChannelWriter(Channel channel) noexcept;
  ChannelWriter(ChannelWriter&& other) noexcept;
  ChannelWriter& operator=(ChannelWriter&& other) noexcept;
  ChannelWriter(const ChannelWriter&) = delete;
  ChannelWriter& operator=(const ChannelWriter&) = delete;
  ~ChannelWriter(); // unmaps and closes its overflow buffers (readers keep their mappings)

  // Waits (spin, then futex) until the next slot has been released by every
  // reader, then exposes a payload area of exactly `bytes` bytes: in the slot,
  // or, when bytes > slot_bytes, in the slot's overflow buffer (made or grown
  // here; a cold path that allocates). Returns closed once the channel is
  // closed, timeout when `deadline` passes first, corrupt if a reader's counter
  // is impossible, too_large if no overflow buffer of that size can be made
  // (memory or limits). Acquiring again before publish() returns the same
  // slot, and the same area with what was written there when the size fits
  // where it is (in the slot, or in the same overflow buffer).
  ChannelStatus acquire(std::size_t bytes, std::span<std::byte>& payload,
                        Deadline deadline) noexcept;

  // Publishes the acquired slot as a message of `bytes` bytes (<= the acquired
  // size) and wakes sleeping readers. Precondition: a successful acquire().
  void publish(MessageKind kind, std::size_t bytes) noexcept;

  // As publish(), for a message whose acquired area lacks `borrowed`'s runs
  // (an Encoder made with them: cg/detail/borrowed_runs.hpp). Where every
  // reader is across a stream that can (Forwarder::sends_borrowed), the
  // stream sends the message from where its runs are, while it takes their
  // bytes and at most until `deadline`; what it has not sent then, and
  // everything elsewhere, is copied into the holes first. Either way the
  // runs' memory is no longer needed when this returns.
  void publish_borrowed(MessageKind kind, std::size_t bytes, detail::BorrowedRuns& borrowed,
                        Deadline deadline) noexcept;

  // True when publish_borrowed() sends from the runs' memory (its forwarder
  // can: Forwarder::sends_borrowed); else it copies them first.
  bool sends_borrowed() const noexcept;

  // Messages published so far (the sequence number the next message will get).
  std::uint64_t published() const noexcept { return next_; }

  // From now on `observer` (which must outlive this writer, or be replaced
  // first) hears of each overflow buffer made and unmapped, starting with
  // those made already: as ChannelReader::observe_mappings, for ports that
  // copy from a GPU into the buffers. Null stops it.
  void observe_mappings(detail::MappingObserver* observer) noexcept;

  // From now on publish() tells `forwarder` (which must outlive this writer,
  // or be replaced first) of each message, after the readers: a channel
  // whose readers are on other hosts forwards it to their streams at once
  // (net/scale_out.hpp). Null stops it.
  void forward_with(detail::Forwarder* forwarder) noexcept { forwarder_ = forwarder; }

private:
  void reset() noexcept;
  void retire(detail::OverflowBuffer& buffer) noexcept;
  bool acquired_again(std::size_t bytes, std::span<std::byte>& payload) noexcept;
  ChannelStatus acquire_overflow(std::size_t bytes, std::span<std::byte>& payload) noexcept;

  detail::ChannelHeader* header_ = nullptr;
  std::uint32_t max_in_flight_ = 0;
  std::uint32_t slot_bytes_ = 0;
  std::uint32_t readers_ = 0;
  std::uint64_t stride_ = 0;
  std::uint64_t next_ = 0;       // sequence number of the next message
  std::uint64_t free_until_ = 0; // cached: sequences below this may be written
  std::size_t acquired_ = 0;     // bytes of the acquired, unpublished slot
  bool holding_ = false;
  bool overflowing_ = false;          // the acquired payload is in an overflow buffer
  bool in_header_ = false;            // the acquired payload is on the slot header's line
  std::uint32_t acquired_buffer_ = 0; // which one
  detail::OverflowBuffer* overflow_ =
      nullptr; // the pool: max_in_flight entries, made on the first large value
  detail::MappingObserver* observer_ = nullptr;
  detail::Forwarder* forwarder_ = nullptr;
};

// One reader index of a channel. A default-constructed reader (or one made from
// an invalid Channel or an out-of-range index) reports `closed` from acquire().
// Movable, not copyable: it owns its mappings of the writer's overflow buffers.
class ChannelReader {
public:
  struct Message {
    MessageKind kind;
    std::span<const std::byte> payload; // in the slot or an overflow buffer; valid until release()
    std::uint64_t sequence;             // 0-based: the n-th message published has sequence n
    // For a payload in an overflow buffer (a mapping of the writer's memory),
    // how a decoder may page it as it copies a large value out; else null.
    const InputPaging* paging = nullptr;
  };

  ChannelReader() = default;
  ChannelReader(Channel channel, std::uint32_t reader_index) noexcept; // 0 <= index < readers
  // A reader that takes its messages from `source` instead of a ring (a
  // stream from another host, net/scale_out.hpp), which must outlive it.
  explicit ChannelReader(detail::MessageSource& source) noexcept : source_(&source) {}
  ChannelReader(ChannelReader&& other) noexcept;
  ChannelReader& operator=(ChannelReader&& other) noexcept;
  ChannelReader(const ChannelReader&) = delete;
  ChannelReader& operator=(const ChannelReader&) = delete;
  ~ChannelReader();

  // Waits for this reader's next message. Acquiring again before release()
  // returns the same message. Returns corrupt (without touching the payload) if
  // the slot's size exceeds slot_bytes, its kind or storage is unknown, its
  // sequence is ahead of the expected one, or its overflow reference does not
  // match the buffer it names; unmappable if that buffer cannot be opened.
  ChannelStatus acquire(Message& message, Deadline deadline) noexcept;

  // This reader is done with the acquired message; the writer may reuse its slot
  // once every reader has released it. No-op without an acquired message.
  void release() noexcept;
  /// Messages this reader has released: the next one it takes is this one.
  std::uint64_t consumed() const noexcept { return next_; }

  // From now on `observer` (which must outlive this reader, or be replaced
  // first) hears of each overflow buffer mapped and unmapped, starting with
  // those mapped already. Null stops it.
  void observe_mappings(detail::MappingObserver* observer) noexcept;

private:
  void reset() noexcept;
  void unmap(detail::OverflowMapping& mapping) noexcept;
  ChannelStatus map_overflow(const detail::SlotHeader& slot,
                             std::span<const std::byte>& payload) noexcept;
  void drop_stale_mappings() noexcept;

  detail::ChannelHeader* header_ = nullptr;
  std::uint32_t max_in_flight_ = 0;
  std::uint32_t slot_bytes_ = 0;
  std::uint32_t readers_ = 0;
  std::uint32_t index_ = 0;
  std::uint64_t stride_ = 0;
  std::uint64_t next_ = 0; // sequence number of the next message to read
  bool holding_ = false;
  // Mappings of the writer's buffers: max_in_flight entries, made on the first large value.
  detail::OverflowMapping* overflow_ = nullptr;
  std::uint64_t stale_after_ = UINT64_MAX;  // a mapping may be unused for a ring from here on
  detail::MessageSource* source_ = nullptr; // instead of a ring (then header_ is null)
  detail::MappingObserver* observer_ = nullptr;
};

namespace detail {
/// Where a ChannelReader made from it takes its messages instead of a ring,
/// with the contract of ChannelReader::acquire and release.
class MessageSource {
public:
  virtual ChannelStatus acquire(ChannelReader::Message& message, Deadline deadline) noexcept = 0;
  virtual void release() noexcept = 0;

protected:
  ~MessageSource() = default;
};

/// Told by a ChannelWriter of each message it publishes, on the writer's
/// thread: it may take the message off the ring at once, but must not wait
/// (the writer's schedule does not expect it to).
class Forwarder {
public:
  virtual void published() noexcept = 0;
  /// True when publish_borrowed() sends from the runs' memory: every reader
  /// of the channel is across one stream that can.
  virtual bool sends_borrowed() const noexcept { return false; }
  /// ChannelWriter::publish_borrowed's work where sends_borrowed(): publishes
  /// `writer`'s acquired message without telling published(), sends it with
  /// its runs, and copies into their holes whatever it left unsent.
  virtual void publish_borrowed(ChannelWriter& writer, MessageKind kind, std::size_t bytes,
                                BorrowedRuns& borrowed, Deadline deadline) noexcept = 0;

protected:
  ~Forwarder() = default;
};

/// Where some reader slots of a graph's channels take their messages from,
/// and who forwards what some writers publish (net/scale_out.hpp's relays:
/// streams to and from other hosts).
class MessageSources {
public:
  /// Reader slot `slot` of channel `channel`'s source; null: its ring.
  virtual MessageSource* source(std::uint32_t channel, std::uint32_t slot) const noexcept = 0;
  /// Who the writer of `channel` tells of its messages; null: nobody.
  virtual Forwarder* forwarder(std::uint32_t channel) const noexcept = 0;

protected:
  ~MessageSources() = default;
};
} // namespace detail

} // namespace cg
