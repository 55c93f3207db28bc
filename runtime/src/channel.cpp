#include "channel.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <limits>
#include <thread>

#include "futex.hpp"

namespace hypercomm::detail {

namespace {
constexpr std::size_t kBlockGranule = 4096;

// Two slots at least: with one, a slot's sequence from the last lap (position - 1 + 1) would read
// as full at the next position.
std::size_t ring_capacity(std::size_t n) noexcept { return n <= 2 ? 2 : std::bit_ceil(n); }

// The most slots one message continues over in a ring of `capacity` slots (channel.hpp): half
// the ring, at most kMostContinuedSlots, or kMostContinuedSlotsShortRings of a kRingSlots ring.
std::size_t most_continued_slots(std::size_t capacity) noexcept {
  if (capacity == kRingSlots) return kMostContinuedSlotsShortRings;
  return std::min(capacity / 2, kMostContinuedSlots);
}
}  // namespace

Channel::Channel(std::size_t capacity, std::size_t shared_copy_bytes)
    : capacity_(ring_capacity(capacity)),
      mask_(capacity_ - 1),
      max_slots_(most_continued_slots(capacity_)),
      shared_copy_bytes_(shared_copy_bytes),
      producer_segment_(std::make_unique<Segment>(capacity_).release()),
      consumer_segment_(producer_segment_) {}

Channel::~Channel() {
  drain();  // the consumer is in the producer's segment now
  std::unique_ptr<Segment>(consumer_segment_).reset();
  Segment* segment = nullptr;
  while (returned_segments_.pop(segment)) std::unique_ptr<Segment>(segment).reset();
  Block* block = nullptr;
  while (returned_blocks_.pop(block)) std::unique_ptr<Block>(block).reset();
}

namespace {
bool amd_cpu() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
#else
  return false;
#endif
}
}  // namespace

std::size_t one_way_keeping_up_rendezvous_bytes(bool long_rings) noexcept {
  return amd_cpu() && !long_rings ? kOneWayKeepingUpRendezvousBytesAmd
                                  : kOneWayKeepingUpRendezvousBytes;
}

std::size_t cpu_streaming_wait_bytes() noexcept {
  return amd_cpu() ? kStreamingWaitBytesAmd : std::numeric_limits<std::size_t>::max();
}

// ---------------------------------------------------------------- producer side

Block* Channel::acquire_block(std::size_t size) {
  Block* block = nullptr;
  if (returned_blocks_.pop(block)) {
    if (block->capacity >= size) return block;
    std::unique_ptr<Block>(block).reset();  // too small for this message: let it go
  }
  auto fresh = std::make_unique<Block>();
  fresh->capacity = (size + kBlockGranule - 1) / kBlockGranule * kBlockGranule;
  fresh->data = std::make_unique_for_overwrite<std::byte[]>(fresh->capacity);
  return fresh.release();
}

std::size_t Channel::slots_for(std::size_t size) const noexcept {
  if (size <= kInlineBytes) return 1;
  const std::size_t slots = 1 + (size - kInlineBytes + kContinuationBytes - 1) / kContinuationBytes;
  return slots <= max_slots_ ? slots : 1;
}

void Channel::fill(std::uint64_t position, std::size_t slots, const Envelope& envelope,
                   std::span<const std::byte> payload) {
  Segment& segment = *producer_segment_;
  Slot& slot = slot_at(segment, position);
  // The lines after the first slot's first, then that one (kFirstLinePayloadBytes).
  if (payload.size() > kFirstLinePayloadBytes && (payload.size() <= kInlineBytes || slots > 1)) {
    const std::size_t inline_bytes = std::min(payload.size(), kInlineBytes);
    std::span<const std::byte> rest = payload.subspan(inline_bytes);
    for (std::uint64_t next = position + 1; !rest.empty(); ++next) {
      const std::size_t n = std::min(rest.size(), kContinuationBytes);
      std::memcpy(continuation(segment, next), rest.data(), n);
      rest = rest.subspan(n);
    }
    std::memcpy(slot.payload + kFirstLinePayloadBytes, payload.data() + kFirstLinePayloadBytes,
                inline_bytes - kFirstLinePayloadBytes);
    payload = payload.first(kFirstLinePayloadBytes);
  }
  slot.envelope = envelope;
  slot.block = nullptr;
  if (payload.size() <= kInlineBytes) {
    if (!payload.empty()) std::memcpy(slot.payload, payload.data(), payload.size());
  } else {
    slot.block = acquire_block(payload.size());
    std::memcpy(slot.block->data.get(), payload.data(), payload.size());
  }
}

void Channel::make_room(std::size_t slots) {
  if (room_for(slots)) return;
  consumed_seen_ = consumed_.load(std::memory_order_acquire);
  if (!room_for(slots)) next_segment();
}

void Channel::publish(std::size_t slots) noexcept {
  slot_at(*producer_segment_, head_).sequence.store(head_ + 1, std::memory_order_release);
  head_ += slots;
  ++enqueued_;
  // The slots of the message after the next one, if it is as long as this one, asked for now
  // (kPrefetchSlots): where the receiver keeps up they were last read on its core, and a store
  // to them would hold this VP's later stores for a line's trip. Not where the ring is nearly
  // full: its receiver has yet to read them.
  const std::size_t ahead = std::min(slots, kPrefetchSlots);
  if (!room_for(slots + ahead)) return;
  for (std::size_t k = 0; k < ahead; ++k)
    prefetch_for_writing(&slot_at(*producer_segment_, head_ + slots + k), kSlotSize);
}

void Channel::push(const Envelope& envelope, std::span<const std::byte> payload) {
  const std::size_t slots = slots_for(payload.size());
  make_room(slots);
  fill(head_, slots, envelope, payload);
  publish(slots);
}

void Channel::push_with(const Envelope& envelope, Fill write, void* context) {
  const std::size_t size = envelope.size;
  if (size <= kInlineBytes || slots_for(size) != 1) {  // not kept in a block: rare, from scratch
    std::vector<std::byte> scratch(size);
    write(context, scratch);
    push(envelope, scratch);
    return;
  }
  std::unique_ptr<Block> block(acquire_block(size));
  write(context, {block->data.get(), size});
  make_room(1);
  Slot& slot = slot_at(*producer_segment_, head_);
  slot.envelope = envelope;
  slot.block = block.release();
  publish(1);
}

void Channel::next_segment() {
  Segment* next = nullptr;
  if (!returned_segments_.pop(next)) next = std::make_unique<Segment>(capacity_).release();
  next->next.store(nullptr, std::memory_order_relaxed);
  producer_segment_->end = head_;
  producer_segment_->next.store(next, std::memory_order_release);  // publishes end too
  producer_segment_ = next;
  segment_start_ = head_;
}

bool Channel::try_hand_over(const Envelope& envelope, std::span<const std::byte> payload) noexcept {
  SideWork none;
  return try_hand_over_during(envelope, payload, none);
}

bool Channel::try_hand_over_during(const Envelope& envelope, std::span<const std::byte> payload,
                                   SideWork& work) noexcept {
  if (payload.size() >= shared_copy_bytes_)
    return hand_over(envelope, [&](std::span<std::byte>) { share_copy(payload, work); });
  return hand_over(envelope,
                   [&](std::span<std::byte>) { place(0, payload.data(), payload.size()); });
}

bool Channel::try_hand_over_with(const Envelope& envelope, Fill write, void* context) {
  return hand_over(envelope, [&](std::span<std::byte> to) {
    write(context, to);
    if (posted_.fold != nullptr) place(0, to.data(), to.size());  // to: the post's scratch
  });
}

void Channel::share_copy(std::span<const std::byte> payload, SideWork& work) noexcept {
  posted_.source = payload.data();
  posted_.next_chunk.store(0, std::memory_order_relaxed);
  posted_.chunks_done.store(0, std::memory_order_relaxed);
  posted_.state.store(kCopying, std::memory_order_release);  // publishes source and the counts
  work();                                                    // the receiver takes chunks meanwhile
  copy_chunks();
  // The receiver may still copy a chunk it took: payload must stay valid until it is done. A
  // chunk takes microseconds; past that the receiver may share this core (VPs outnumbering
  // cores) and have been switched out mid-chunk, so hand the core over.
  const auto chunks =
      static_cast<std::uint32_t>((payload.size() + posted_.chunk - 1) / posted_.chunk);
  for (unsigned polls = 0; posted_.chunks_done.load(std::memory_order_acquire) != chunks; ++polls)
    if (polls < 1024)
      cpu_relax();
    else
      std::this_thread::yield();
}

// Either side, while the post is kCopying: the receiver helps only while it waits for this post,
// and the sender starts the next shared copy only after the receiver posts again, so no taker
// of one copy's chunk meets the next copy's counts.
void Channel::copy_chunks() noexcept {
  const std::size_t size = posted_.size;
  const std::size_t chunk = posted_.chunk;
  const auto chunks = static_cast<std::uint32_t>((size + chunk - 1) / chunk);
  // Look before taking: a side that polls while the other copies the last chunk must not count
  // on and on (the count would wrap and hand out a chunk again).
  while (posted_.next_chunk.load(std::memory_order_relaxed) < chunks) {
    const std::uint32_t k = posted_.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (k >= chunks) return;
    const std::size_t at = static_cast<std::size_t>(k) * chunk;
    place(at, posted_.source + at, std::min(chunk, size - at));
    posted_.chunks_done.fetch_add(1, std::memory_order_release);
  }
}

// ---------------------------------------------------------------- consumer side

const Envelope* Channel::front() noexcept {
  for (;;) {
    Slot& slot = slot_at(*consumer_segment_, tail_);
    if (slot.sequence.load(std::memory_order_acquire) == tail_ + 1) return &slot.envelope;
    Segment* next = consumer_segment_->next.load(std::memory_order_acquire);
    if (next == nullptr) return nullptr;
    // The producer has moved on: every message before `end` is published (look again for it),
    // and at `end` this segment is done.
    if (tail_ == consumer_segment_->end) {
      retire(consumer_segment_);
      consumer_segment_ = next;
    }
  }
}

void Channel::take_front(std::span<std::byte> dest) noexcept {
  Segment& segment = *consumer_segment_;
  Slot& slot = slot_at(segment, tail_);
  assert(slot.envelope.size == dest.size());
  const std::size_t slots = slots_taken(slot);
  if (dest.size() <= kInlineBytes) {
    if (!dest.empty()) std::memcpy(dest.data(), slot.payload, dest.size());
  } else if (slot.block != nullptr) {
    std::memcpy(dest.data(), slot.block->data.get(), dest.size());
    recycle(slot.block);
    slot.block = nullptr;
  } else {
    std::memcpy(dest.data(), slot.payload, kInlineBytes);
    std::span<std::byte> rest = dest.subspan(kInlineBytes);
    for (std::uint64_t next = tail_ + 1; !rest.empty(); ++next) {
      const std::size_t n = std::min(rest.size(), kContinuationBytes);
      std::memcpy(rest.data(), continuation(segment, next), n);
      rest = rest.subspan(n);
    }
  }
  tail_ += slots;
  consumed_.store(tail_, std::memory_order_release);
  ++dequeued_;
  ++received_;
}

void Channel::retire(Segment* segment) noexcept {
  if (!returned_segments_.push(segment)) std::unique_ptr<Segment>(segment).reset();
}

void Channel::recycle(Block* block) noexcept {
  if (block != nullptr && !returned_blocks_.push(block)) std::unique_ptr<Block>(block).reset();
}

void Channel::post(std::span<std::byte> buffer, const MessageTag& tag, const Fold* fold,
                   bool combined) noexcept {
  // Stored, not compared first: a read would fetch the line the sender last wrote only for the
  // writes below to claim it again.
  posted_.combined.store(combined, std::memory_order_relaxed);
  posted_.buffer = buffer.data();
  posted_.size = buffer.size();
  posted_.tag = tag;
  posted_.fold = fold;
  // A folded chunk ends on an element: whole granules, at least one.
  posted_.chunk = fold == nullptr || fold->granule <= 1
                      ? kSharedCopyChunk
                      : std::max(fold->granule, kSharedCopyChunk / fold->granule * fold->granule);
  posted_.expected = dequeued_;
  posted_.state.store(kPosted, std::memory_order_seq_cst);
}

bool Channel::post_done() const noexcept {
  return posted_.state.load(std::memory_order_acquire) == kDone;
}

double Channel::take_posted_arrival() noexcept {
  const double arrival = posted_.arrival;
  posted_.state.store(kIdle, std::memory_order_relaxed);
  ++received_;
  return arrival;
}

bool Channel::cancel_post() noexcept {
  std::uint32_t expected_state = kPosted;
  for (;;) {
    if (posted_.state.compare_exchange_weak(expected_state, kIdle, std::memory_order_acq_rel,
                                            std::memory_order_acquire))
      return true;
    if (expected_state == kDone) return false;
    if (expected_state == kCopying) copy_chunks();  // a sender copies: help, it is then done
    if (expected_state == kClaimed) cpu_relax();    // a sender is deciding or copying: shortly done
    expected_state = kPosted;                       // spurious failure
  }
}

void Channel::help_post() noexcept {
  if (posted_.state.load(std::memory_order_acquire) == kCopying) copy_chunks();
}

// ---------------------------------------------------------------- between runs

std::vector<Envelope> Channel::drain() {
  std::vector<Envelope> discarded;
  while (const Envelope* envelope = front()) {
    discarded.push_back(*envelope);
    Slot& slot = slot_at(*consumer_segment_, tail_);
    tail_ += slots_taken(slot);
    recycle(slot.block);
    slot.block = nullptr;
    consumed_.store(tail_, std::memory_order_release);
    ++dequeued_;
  }
  // Counters restart in step so that a posted receive of the next run matches.
  enqueued_ = dequeued_ = received_ = 0;
  posted_.state.store(kIdle, std::memory_order_relaxed);
  return discarded;
}

}  // namespace hypercomm::detail
