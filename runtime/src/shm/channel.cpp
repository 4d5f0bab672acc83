// channel.cpp - the shared-memory message ring: slot hand-off, waiting and waking
// (the buffers that carry values larger than a slot are shm/overflow.hpp's).
//
// Synchronisation is two monotonic counters per hand-off: a slot's sequence
// (writer -> readers) and each reader's consumed count (reader -> writer), both
// with release/acquire ordering so that payload bytes are visible before the
// counter that announces them. Sleeping uses a futex word per direction plus a
// waiter count, so the side that makes progress only pays for a FUTEX_WAKE when
// somebody actually sleeps. The waiter count and the counters follow the
// store-buffer (Dekker) pattern, hence the seq_cst fences on both sides: either
// the sleeper sees the progress, or the waker sees the sleeper.
#include <cg/detail/borrowed_runs.hpp>
#include <cg/detail/channel.hpp>
#include <cg/serialize.hpp>

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <new>
#include <utility>

#include "shm/channel_layout.hpp"
#include "shm/overflow.hpp"
#include "shm/shm.hpp"
#include "shm/wait.hpp"

namespace cg {

namespace {

using detail::ChannelHeader;
using detail::OverflowBuffer;
using detail::OverflowHeader;
using detail::OverflowMapping;
using detail::SlotHeader;
using detail::Storage;

constexpr std::uint64_t round_up(std::uint64_t n, std::uint64_t to) noexcept {
  return (n + to - 1) / to * to;
}

enum class Probe { ready, pending, corrupt };

// Waits (shm/wait.hpp) until probe() stops answering `pending`, the channel
// closes, or the deadline passes. Closed wins over everything, as the
// contract promises.
template <class ProbeFn>
ChannelStatus wait_for_channel(ChannelHeader& h, detail::WaitWords words, Deadline deadline,
                               ProbeFn probe) noexcept {
  Probe last = Probe::pending;
  const detail::WaitOutcome outcome = detail::wait_until(
      words, deadline, [&] { return h.closed.load(std::memory_order_acquire) != 0; },
      [&] { return (last = probe()) != Probe::pending; });
  switch (outcome) {
  case detail::WaitOutcome::stopped:
    return ChannelStatus::closed;
  case detail::WaitOutcome::timeout:
    return ChannelStatus::timeout;
  case detail::WaitOutcome::ready:
    break;
  }
  return last == Probe::corrupt ? ChannelStatus::corrupt : ChannelStatus::ok;
}

} // namespace

const char* to_string(ChannelStatus status) noexcept {
  switch (status) {
  case ChannelStatus::ok:
    return "ok";
  case ChannelStatus::closed:
    return "closed";
  case ChannelStatus::timeout:
    return "timeout";
  case ChannelStatus::too_large:
    return "too_large";
  case ChannelStatus::corrupt:
    return "corrupt";
  case ChannelStatus::unmappable:
    return "unmappable";
  }
  return "unknown";
}

std::size_t channel_footprint(const ChannelConfig& config) noexcept {
  if (config.max_in_flight == 0 || config.readers == 0)
    return 0;
  const std::uint64_t stride = sizeof(SlotHeader) + round_up(config.slot_bytes, detail::cache_line);
  std::uint64_t slots_total = 0;
  if (__builtin_mul_overflow(stride, std::uint64_t{config.max_in_flight}, &slots_total))
    return 0;
  const std::uint64_t fixed =
      sizeof(ChannelHeader) + std::uint64_t{config.readers} * sizeof(detail::ReaderState);
  std::uint64_t total = 0;
  if (__builtin_add_overflow(fixed, slots_total, &total))
    return 0;
  if (total > SIZE_MAX)
    return 0;
  return static_cast<std::size_t>(total);
}

// ---- Channel ---------------------------------------------------------------

Channel Channel::create(void* memory, const ChannelConfig& config) noexcept {
  const std::size_t footprint = channel_footprint(config);
  if (memory == nullptr || footprint == 0 ||
      reinterpret_cast<std::uintptr_t>(memory) % detail::cache_line != 0) {
    return Channel{};
  }
  // Only headers and counters need initialising; payload bytes are never read
  // before a publish has written them.
  auto* h = new (memory) ChannelHeader{};
  h->version = detail::channel_version;
  h->max_in_flight = config.max_in_flight;
  h->slot_bytes = config.slot_bytes;
  h->readers = config.readers;
  h->slot_stride = sizeof(SlotHeader) + round_up(config.slot_bytes, detail::cache_line);
  h->footprint = footprint;
  for (std::uint32_t r = 0; r < config.readers; ++r)
    new (detail::reader_state(h, r)) detail::ReaderState{};
  for (std::uint32_t s = 0; s < config.max_in_flight; ++s) {
    new (detail::slot_header(h, config.readers, h->slot_stride, s)) SlotHeader{};
  }
  // Last, so that whoever sees the magic (with acquire) sees an initialised channel.
  h->magic.store(detail::channel_magic, std::memory_order_release);
  return Channel{h};
}

Channel Channel::attach(void* memory) noexcept {
  return Channel{static_cast<ChannelHeader*>(memory)};
}

bool Channel::valid() const noexcept {
  if (header_ == nullptr)
    return false;
  if (header_->magic.load(std::memory_order_acquire) != detail::channel_magic)
    return false;
  if (header_->version != detail::channel_version)
    return false;
  const ChannelConfig c = config();
  return header_->footprint != 0 && header_->footprint == channel_footprint(c) &&
         header_->slot_stride == sizeof(SlotHeader) + round_up(c.slot_bytes, detail::cache_line);
}

ChannelConfig Channel::config() const noexcept {
  assert(header_ != nullptr);
  return ChannelConfig{header_->max_in_flight, header_->slot_bytes, header_->readers};
}

void Channel::close() noexcept {
  if (header_ == nullptr)
    return;
  header_->closed.store(1, std::memory_order_seq_cst);
  // Bump both words unconditionally: a waiter that read a word just before the
  // bump then fails its FUTEX_WAIT instead of sleeping.
  header_->reader_futex.fetch_add(1, std::memory_order_seq_cst);
  header_->writer_futex.fetch_add(1, std::memory_order_seq_cst);
  detail::futex_wake_all(header_->reader_futex);
  detail::futex_wake_all(header_->writer_futex);
}

bool Channel::closed() const noexcept {
  return header_ == nullptr || header_->closed.load(std::memory_order_acquire) != 0;
}

// ---- ChannelWriter ---------------------------------------------------------

ChannelWriter::ChannelWriter(Channel channel) noexcept {
  if (!channel.valid())
    return;
  header_ = channel.header_;
  // Cache the geometry: the hot path must not trust memory another process can
  // scribble on for anything that decides where we write.
  max_in_flight_ = header_->max_in_flight;
  slot_bytes_ = header_->slot_bytes;
  readers_ = header_->readers;
  stride_ = header_->slot_stride;
  next_ = header_->published.load(std::memory_order_acquire);
}

ChannelWriter::ChannelWriter(ChannelWriter&& other) noexcept { *this = std::move(other); }

ChannelWriter& ChannelWriter::operator=(ChannelWriter&& other) noexcept {
  if (this != &other) {
    reset();
    header_ = std::exchange(other.header_, nullptr);
    max_in_flight_ = std::exchange(other.max_in_flight_, 0);
    slot_bytes_ = std::exchange(other.slot_bytes_, 0);
    readers_ = std::exchange(other.readers_, 0);
    stride_ = std::exchange(other.stride_, 0);
    next_ = std::exchange(other.next_, 0);
    free_until_ = std::exchange(other.free_until_, 0);
    acquired_ = std::exchange(other.acquired_, 0);
    holding_ = std::exchange(other.holding_, false);
    overflowing_ = std::exchange(other.overflowing_, false);
    in_header_ = std::exchange(other.in_header_, false);
    acquired_buffer_ = std::exchange(other.acquired_buffer_, 0);
    overflow_ = std::exchange(other.overflow_, nullptr);
    observer_ = std::exchange(other.observer_, nullptr);
    forwarder_ = std::exchange(other.forwarder_, nullptr);
  }
  return *this;
}

ChannelWriter::~ChannelWriter() { reset(); }

void ChannelWriter::reset() noexcept {
  if (overflow_ != nullptr) {
    for (std::uint32_t s = 0; s < max_in_flight_; ++s)
      retire(overflow_[s]);
    delete[] overflow_;
    overflow_ = nullptr;
  }
}

void ChannelWriter::observe_mappings(detail::MappingObserver* observer) noexcept {
  observer_ = observer;
  if (observer_ == nullptr || overflow_ == nullptr)
    return;
  for (std::uint32_t b = 0; b < max_in_flight_; ++b) {
    if (overflow_[b].data != nullptr && overflow_[b].owner == ::getpid()) {
      detail::keep_overflow_pages(overflow_[b], true); // pinned: its pages must stay
      observer_->mapped({overflow_[b].data, overflow_[b].mapped});
    }
  }
}

// Unmaps one of our buffers, telling the observer first (not of one
// inherited over fork(): it was never ours to observe).
void ChannelWriter::retire(detail::OverflowBuffer& buffer) noexcept {
  if (observer_ != nullptr && buffer.data != nullptr && buffer.owner == ::getpid())
    observer_->unmapping({buffer.data, buffer.mapped});
  detail::unmap_overflow(buffer);
}

ChannelStatus ChannelWriter::acquire(std::size_t bytes, std::span<std::byte>& payload,
                                     Deadline deadline) noexcept {
  if (header_ == nullptr)
    return ChannelStatus::closed;
  if (holding_ && acquired_again(bytes, payload))
    return ChannelStatus::ok;

  const ChannelStatus status =
      wait_for_channel(*header_, {header_->writer_futex, header_->writer_waiters}, deadline, [&] {
        if (next_ < free_until_)
          return Probe::ready;
        // Message next_ reuses the slot of message next_ - max_in_flight: every reader must have
        // released that one, i.e. consumed > next_ - max_in_flight.
        std::uint64_t slowest = UINT64_MAX;
        for (std::uint32_t r = 0; r < readers_; ++r) {
          const std::uint64_t consumed =
              detail::reader_state(header_, r)->consumed.load(std::memory_order_acquire);
          if (consumed > next_)
            return Probe::corrupt; // released messages that were never published
          slowest = std::min(slowest, consumed);
        }
        free_until_ = slowest + max_in_flight_;
        return next_ < free_until_ ? Probe::ready : Probe::pending;
      });
  if (status != ChannelStatus::ok)
    return status;

  const auto index = static_cast<std::uint32_t>(next_ % max_in_flight_);
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, index);
  if (bytes <= detail::header_payload_bytes) {
    payload = std::span<std::byte>(detail::header_payload(slot), bytes);
    overflowing_ = false;
    in_header_ = true;
  } else if (bytes <= slot_bytes_) {
    payload = std::span<std::byte>(detail::slot_payload(slot), bytes);
    overflowing_ = false;
    in_header_ = false;
  } else {
    const ChannelStatus found = acquire_overflow(bytes, payload);
    if (found != ChannelStatus::ok)
      return found;
    overflowing_ = true;
    in_header_ = false;
  }
  acquired_ = bytes;
  holding_ = true;
  return ChannelStatus::ok;
}

// The area acquired and not yet published, when `bytes` fit where it is: a
// value acquired again (a graph's input tensor made in place, then encoded)
// must find what was written there, in the same buffer even when another
// free one would now be the better fit.
bool ChannelWriter::acquired_again(std::size_t bytes, std::span<std::byte>& payload) noexcept {
  const auto index = static_cast<std::uint32_t>(next_ % max_in_flight_);
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, index);
  std::byte* start = nullptr;
  if (in_header_ && bytes <= detail::header_payload_bytes) {
    start = detail::header_payload(slot);
  } else if (in_header_ && bytes <= slot_bytes_) {
    // Grown past the header's line: what was written moves to the slot.
    std::memmove(detail::slot_payload(slot), detail::header_payload(slot), acquired_);
    in_header_ = false;
    start = detail::slot_payload(slot);
  } else if (!in_header_ && !overflowing_ && bytes <= slot_bytes_)
    start = detail::slot_payload(slot);
  else if (overflowing_ && bytes > slot_bytes_ && bytes <= overflow_[acquired_buffer_].capacity)
    start = overflow_[acquired_buffer_].data + detail::overflow_payload_offset;
  if (start == nullptr)
    return false;
  payload = std::span<std::byte>(start, bytes);
  acquired_ = bytes;
  return true;
}

// A buffer of the pool for a value of `bytes` bytes: the smallest free one
// that holds it; else a free one too small, remade larger; else a new one.
// One is always free or unused: the slot being written is free, so at most
// max_in_flight - 1 messages (and buffers) are still being read.
ChannelStatus ChannelWriter::acquire_overflow(std::size_t bytes,
                                              std::span<std::byte>& payload) noexcept {
  if (overflow_ == nullptr) {
    overflow_ = new (std::nothrow) OverflowBuffer[max_in_flight_];
    if (overflow_ == nullptr)
      return ChannelStatus::too_large;
  }
  std::uint64_t released = UINT64_MAX; // messages every reader has released
  for (std::uint32_t r = 0; r < readers_; ++r) {
    released = std::min(released,
                        detail::reader_state(header_, r)->consumed.load(std::memory_order_acquire));
  }
  OverflowBuffer* fit = nullptr;       // free, large enough, the smallest such
  OverflowBuffer* too_small = nullptr; // free, too small, the largest such
  OverflowBuffer* unused = nullptr;    // an entry without a buffer
  for (std::uint32_t b = 0; b < max_in_flight_; ++b) {
    OverflowBuffer& buffer = overflow_[b];
    if (buffer.data != nullptr && buffer.owner != ::getpid())
      detail::unmap_overflow(buffer); // inherited over fork()
    if (buffer.data == nullptr) {
      unused = unused != nullptr ? unused : &buffer;
    } else if (buffer.carried_until <= released) {
      if (buffer.capacity >= bytes) {
        if (fit == nullptr || buffer.capacity < fit->capacity)
          fit = &buffer;
      } else if (too_small == nullptr || buffer.capacity > too_small->capacity) {
        too_small = &buffer;
      }
    }
  }
  OverflowBuffer* chosen = fit != nullptr ? fit : too_small != nullptr ? too_small : unused;
  if (chosen == nullptr)
    return ChannelStatus::corrupt; // readers claim releases that cannot be
  if (chosen != fit) {
    // Grow by half at least, so that a value growing a little at a time does
    // not remake the buffer every time. The old one goes first, so that its
    // descriptor number is likely the new one's: readers then know at once
    // that the mapping they keep of it is stale.
    std::uint64_t capacity =
        std::max<std::uint64_t>(bytes, chosen->capacity + chosen->capacity / 2);
    if (capacity <= UINT64_MAX - detail::overflow_granule)
      capacity = round_up(capacity, detail::overflow_granule);
    retire(*chosen);
    const std::uint64_t generation =
        header_->overflow_generations.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!detail::make_overflow_buffer(*chosen, capacity, generation))
      return ChannelStatus::too_large;
    if (observer_ != nullptr) {
      detail::keep_overflow_pages(*chosen, true);
      observer_->mapped({chosen->data, chosen->mapped});
    }
  } else if (!detail::reserve_overflow_again(*chosen)) {
    return ChannelStatus::too_large; // its reader gave its pages back, and there is no room now
  }
  acquired_buffer_ = static_cast<std::uint32_t>(chosen - overflow_);
  payload = std::span<std::byte>(chosen->data + detail::overflow_payload_offset, bytes);
  return ChannelStatus::ok;
}

void ChannelWriter::publish(MessageKind kind, std::size_t bytes) noexcept {
  assert(holding_ && "cg::ChannelWriter::publish without a successful acquire");
  assert(bytes <= acquired_);
  if (!holding_)
    return;
  const auto index = static_cast<std::uint32_t>(next_ % max_in_flight_);
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, index);
  bytes = std::min(bytes, acquired_);
  slot->kind.store(static_cast<std::uint32_t>(kind), std::memory_order_relaxed);
  if (overflowing_) {
    OverflowBuffer& buffer = overflow_[acquired_buffer_];
    buffer.carried_until = next_ + 1;
    slot->storage.store(static_cast<std::uint32_t>(Storage::overflow), std::memory_order_relaxed);
    slot->size.store(0, std::memory_order_relaxed);
    slot->overflow_pid.store(static_cast<std::int32_t>(buffer.owner), std::memory_order_relaxed);
    slot->overflow_fd.store(buffer.fd, std::memory_order_relaxed);
    slot->overflow_bytes.store(bytes, std::memory_order_relaxed);
    slot->overflow_generation.store(buffer.generation, std::memory_order_relaxed);
  } else {
    slot->storage.store(static_cast<std::uint32_t>(in_header_ ? Storage::header : Storage::slot),
                        std::memory_order_relaxed);
    slot->size.store(static_cast<std::uint32_t>(bytes), std::memory_order_relaxed);
  }
  slot->sequence.store(next_ + 1,
                       std::memory_order_release); // makes payload and header fields visible
  ++next_;
  holding_ = false;
  header_->published.store(next_, std::memory_order_release);
  detail::wake({header_->reader_futex, header_->reader_waiters});
  if (forwarder_ != nullptr)
    forwarder_->published();
}

bool ChannelWriter::sends_borrowed() const noexcept {
  return forwarder_ != nullptr && forwarder_->sends_borrowed();
}

void ChannelWriter::publish_borrowed(MessageKind kind, std::size_t bytes,
                                     detail::BorrowedRuns& borrowed, Deadline deadline) noexcept {
  if (borrowed.count != 0 && sends_borrowed()) {
    forwarder_->publish_borrowed(*this, kind, bytes, borrowed, deadline);
    return;
  }
  borrowed.fill_from(0);
  publish(kind, bytes);
}

// ---- ChannelReader ---------------------------------------------------------

ChannelReader::ChannelReader(Channel channel, std::uint32_t reader_index) noexcept {
  if (!channel.valid())
    return;
  assert(reader_index < channel.header_->readers && "cg::ChannelReader: reader index out of range");
  if (reader_index >= channel.header_->readers)
    return;
  header_ = channel.header_;
  max_in_flight_ = header_->max_in_flight;
  slot_bytes_ = header_->slot_bytes;
  readers_ = header_->readers;
  index_ = reader_index;
  stride_ = header_->slot_stride;
  next_ = detail::reader_state(header_, index_)->consumed.load(std::memory_order_acquire);
}

ChannelReader::ChannelReader(ChannelReader&& other) noexcept { *this = std::move(other); }

ChannelReader& ChannelReader::operator=(ChannelReader&& other) noexcept {
  if (this != &other) {
    reset();
    header_ = std::exchange(other.header_, nullptr);
    max_in_flight_ = std::exchange(other.max_in_flight_, 0);
    slot_bytes_ = std::exchange(other.slot_bytes_, 0);
    readers_ = std::exchange(other.readers_, 0);
    index_ = std::exchange(other.index_, 0);
    stride_ = std::exchange(other.stride_, 0);
    next_ = std::exchange(other.next_, 0);
    holding_ = std::exchange(other.holding_, false);
    overflow_ = std::exchange(other.overflow_, nullptr);
    stale_after_ = std::exchange(other.stale_after_, UINT64_MAX);
    source_ = std::exchange(other.source_, nullptr);
    observer_ = std::exchange(other.observer_, nullptr);
  }
  return *this;
}

ChannelReader::~ChannelReader() { reset(); }

void ChannelReader::observe_mappings(detail::MappingObserver* observer) noexcept {
  observer_ = observer;
  if (observer_ == nullptr || overflow_ == nullptr)
    return;
  for (std::uint32_t m = 0; m < max_in_flight_; ++m)
    if (overflow_[m].data != nullptr)
      observer_->mapped({overflow_[m].data, overflow_[m].mapped});
}

void ChannelReader::unmap(OverflowMapping& mapping) noexcept {
  if (observer_ != nullptr && mapping.data != nullptr)
    observer_->unmapping({mapping.data, mapping.mapped});
  detail::unmap_overflow(mapping);
}

void ChannelReader::reset() noexcept {
  if (overflow_ != nullptr) {
    for (std::uint32_t s = 0; s < max_in_flight_; ++s)
      unmap(overflow_[s]);
    delete[] overflow_;
    overflow_ = nullptr;
  }
  stale_after_ = UINT64_MAX;
}

ChannelStatus ChannelReader::acquire(Message& message, Deadline deadline) noexcept {
  if (header_ == nullptr) // no ring: a source's reader, or a default-constructed one
    return source_ != nullptr ? source_->acquire(message, deadline) : ChannelStatus::closed;
  const auto index = static_cast<std::uint32_t>(next_ % max_in_flight_);
  SlotHeader* slot = detail::slot_header(header_, readers_, stride_, index);

  const ChannelStatus status =
      wait_for_channel(*header_, {header_->reader_futex, header_->reader_waiters}, deadline, [&] {
        const std::uint64_t sequence = slot->sequence.load(std::memory_order_acquire);
        if (sequence == next_ + 1)
          return Probe::ready;
        // Older values are the slot's previous occupant (or 0): not published yet.
        // A newer one is impossible while we hold the slot unreleased.
        return sequence > next_ + 1 ? Probe::corrupt : Probe::pending;
      });
  if (status != ChannelStatus::ok)
    return status;

  // Load each field once and validate the copy, so that memory changing under us
  // can never steer a read outside the slot or the buffer.
  const std::uint32_t kind = slot->kind.load(std::memory_order_relaxed);
  if (kind != static_cast<std::uint32_t>(MessageKind::value) &&
      kind != static_cast<std::uint32_t>(MessageKind::error)) {
    return ChannelStatus::corrupt;
  }
  const std::uint32_t storage = slot->storage.load(std::memory_order_relaxed);
  if (storage == static_cast<std::uint32_t>(Storage::header)) {
    const std::uint32_t size = slot->size.load(std::memory_order_relaxed);
    if (size > detail::header_payload_bytes)
      return ChannelStatus::corrupt;
    message.payload = std::span<const std::byte>(detail::header_payload(slot), size);
    message.paging = nullptr;
  } else if (storage == static_cast<std::uint32_t>(Storage::slot)) {
    const std::uint32_t size = slot->size.load(std::memory_order_relaxed);
    if (size > slot_bytes_)
      return ChannelStatus::corrupt;
    message.payload = std::span<const std::byte>(detail::slot_payload(slot), size);
    message.paging = nullptr;
  } else if (storage == static_cast<std::uint32_t>(Storage::overflow)) {
    const ChannelStatus mapped = map_overflow(*slot, message.payload);
    if (mapped != ChannelStatus::ok)
      return mapped;
    message.paging = &detail::overflow_paging;
  } else {
    return ChannelStatus::corrupt;
  }
  message.kind = static_cast<MessageKind>(kind);
  message.sequence = next_;
  holding_ = true;
  if (next_ >= stale_after_)
    drop_stale_mappings();
  return ChannelStatus::ok;
}

// The payload of an overflow message: in a buffer mapped before, or mapped
// now in place of the mapping of a buffer the writer retired (same
// descriptor, another generation), of an unused entry, or of the buffer read
// least recently.
ChannelStatus ChannelReader::map_overflow(const SlotHeader& slot,
                                          std::span<const std::byte>& payload) noexcept {
  const std::int32_t pid = slot.overflow_pid.load(std::memory_order_relaxed);
  const std::int32_t fd = slot.overflow_fd.load(std::memory_order_relaxed);
  const std::uint64_t bytes = slot.overflow_bytes.load(std::memory_order_relaxed);
  const std::uint64_t generation = slot.overflow_generation.load(std::memory_order_relaxed);
  if (overflow_ == nullptr) {
    overflow_ = new (std::nothrow) OverflowMapping[max_in_flight_];
    if (overflow_ == nullptr)
      return ChannelStatus::unmappable;
  }
  OverflowMapping* mapping = nullptr;
  for (std::uint32_t m = 0; m < max_in_flight_ && mapping == nullptr; ++m) {
    const OverflowMapping& known = overflow_[m];
    if (known.data != nullptr && known.pid == pid && known.fd == fd &&
        known.generation == generation)
      mapping = &overflow_[m];
  }
  if (mapping == nullptr) {
    OverflowMapping fresh;
    const ChannelStatus mapped = detail::map_overflow_buffer(fresh, pid, fd, generation);
    if (mapped != ChannelStatus::ok)
      return mapped;
    for (std::uint32_t m = 0; m < max_in_flight_; ++m) {
      OverflowMapping& entry = overflow_[m];
      if (entry.data != nullptr && entry.pid == pid && entry.fd == fd) {
        mapping = &entry;
        break;
      }
      if (mapping == nullptr || (mapping->data != nullptr &&
                                 (entry.data == nullptr || entry.last_used < mapping->last_used)))
        mapping = &entry;
    }
    unmap(*mapping);
    *mapping = fresh;
    if (observer_ != nullptr)
      observer_->mapped({mapping->data, mapping->mapped});
  }
  if (bytes > mapping->mapped - detail::overflow_payload_offset)
    return ChannelStatus::corrupt;
  mapping->last_used = next_;
  stale_after_ = std::min(stale_after_, next_ + max_in_flight_ + 1);
  payload = std::span<const std::byte>(mapping->data + detail::overflow_payload_offset,
                                       static_cast<std::size_t>(bytes));
  return ChannelStatus::ok;
}

// Unmaps the buffers not read for max_in_flight messages: the writer has most likely
// retired them (remade larger, or gone), and a mapping keeps a buffer alive.
void ChannelReader::drop_stale_mappings() noexcept {
  stale_after_ = UINT64_MAX;
  for (std::uint32_t m = 0; m < max_in_flight_; ++m) {
    OverflowMapping& entry = overflow_[m];
    if (entry.data == nullptr)
      continue;
    if (entry.last_used + max_in_flight_ < next_)
      unmap(entry);
    else
      stale_after_ = std::min(stale_after_, entry.last_used + max_in_flight_ + 1);
  }
}

void ChannelReader::release() noexcept {
  if (!holding_) {
    if (source_ != nullptr)
      source_->release();
    return;
  }
  // The only reader of a large message gives its buffer's pages back now,
  // while the writer cannot be writing it (shm/overflow.hpp). Not one pinned
  // for a GPU here: its pinned pages must stay the mapping's.
  if (readers_ == 1 && overflow_ != nullptr && observer_ == nullptr) {
    const SlotHeader* slot = detail::slot_header(
        header_, readers_, stride_, static_cast<std::uint32_t>(next_ % max_in_flight_));
    if (slot->storage.load(std::memory_order_relaxed) ==
        static_cast<std::uint32_t>(Storage::overflow)) {
      for (std::uint32_t m = 0; m < max_in_flight_; ++m) {
        if (overflow_[m].data != nullptr && overflow_[m].last_used == next_) {
          detail::release_overflow_pages(overflow_[m],
                                         slot->overflow_bytes.load(std::memory_order_relaxed));
          break;
        }
      }
    }
  }
  holding_ = false;
  ++next_;
  // Release: our reads of the payload happen-before the writer overwrites it.
  detail::reader_state(header_, index_)->consumed.store(next_, std::memory_order_release);
  detail::wake({header_->writer_futex, header_->writer_waiters});
}

} // namespace cg
