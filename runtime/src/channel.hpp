// One directed channel (src -> dst): a single-producer single-consumer ring of cache-line-sized
// slots whose consumer polls only the slot's own sequence word (Vyukov style) and whose producer
// writes a slot without reading it first (it counts free slots from the consumer's published
// position, read once per lap), so that a message moves one cache line, once; a message of up
// to half the ring's slots lies in consecutive slots (no block, no second hand-off). When the
// ring is full the producer goes on in a new ring linked behind it (a segment, recycled from the
// consumer), so that send never waits for buffer space and a sender running ahead of its
// receiver costs what the ring costs; and a posted receive through which a message is copied
// once, straight from the sender's buffer into the waiting receiver's.
//
// Why not boost::lockfree::spsc_queue for the ring: its consumer reads the shared write index
// as well as the slot, a second cache line per message; bench/bench_channel measures both (see
// the README). spsc_queue is used where it fits: returning payload blocks and segments to the
// producer.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "message.hpp"
#include "transport.hpp"

namespace hypercomm::detail {

inline constexpr std::size_t kCacheLine = 64;

// A heap buffer for a payload too large for a slot; recycled from consumer to producer.
struct Block {
  std::size_t capacity = 0;
  std::unique_ptr<std::byte[]> data;
};

inline constexpr std::size_t kSlotSize = 2 * kCacheLine;
inline constexpr std::size_t kInlineBytes =
    kSlotSize - sizeof(std::atomic<std::uint64_t>) - sizeof(Envelope) - sizeof(Block*);

struct alignas(kSlotSize) Slot {
  // == position + 1 once the producer has filled the slot for that position; written by the
  // producer only (the consumer frees slots through Channel::consumed_).
  std::atomic<std::uint64_t> sequence{0};
  Envelope envelope;
  // The payload's block, or nullptr when the payload is inline or continued in the next slots
  // (set for every message; a continued message's bytes may have overwritten it since).
  Block* block = nullptr;
  std::byte payload[kInlineBytes];
};
static_assert(sizeof(Slot) == kSlotSize && alignof(Slot) == kSlotSize);

// A channel's ring slots (Fabric): a sender that fills its ring goes on in a new segment, which
// its receiver finds cold and hands back through a shared stack. Where each VP has a core and the
// machine is small, senders run ahead in a longer ring (p = 2 on the 2-vCPU AMD EPYC, 2026-12-02,
// 10 rounds alternated, median of the paired ratios, the time with 256 slots over the time with
// 64, back to back: windowed bandwidth 0.93 at 8-128 B and 0.75-0.78 at 256-768 B; broadcast,
// gather, reduce, scan and scatter 0.87-0.95 at 8 B and 0.67-0.92 at 256-768 B, 0.96-1.13 at
// 128 B; after a barrier 0.88-1.03 at 8 B-4 KiB). Not where VPs share cores (8 and 16 VPs on 2
// cores, two sets of 4 rounds: 16 VPs' all_reduce, all_gather, all_to_all and scan 0.75-0.93 in
// the first, 0.95-1.06 in the second; a reduce of 4 KiB at 16 VPs 1.36 and 1.70 in both, a
// broadcast of 4 KiB 1.04-1.31) nor among many VPs (a ring per pair that talks: 32 KiB each).
inline constexpr std::size_t kRingSlots = 64;
inline constexpr std::size_t kRingSlotsOwnCores = 256;
inline constexpr int kMostVpsForLongRings = 16;
inline constexpr std::size_t kRingSlotsManyLinks = 16;  // past 4096 links
// The most slots one message continues over (else it goes in a block): the bound measured with
// 64 slots (a message of up to 3.8 KiB), and kept for the long rings.
inline constexpr std::size_t kMostContinuedSlots = kRingSlots / 2;
// On rings of kRingSlots (VPs that share cores, or more than kMostVpsForLongRings VPs), 12 slots (a
// message of up to 1400 B): where VPs share cores a sender below kRendezvousBytesShared never waits
// for its receiver, and one running ahead of it filled a ring with three or four messages of
// 1.5-3.8 KiB and went on linking segments that the receiver read cold; with the payloads in blocks
// it goes on through the ring's one-slot headers (8 VPs on 2 cores, the AMD EPYC of 2 vCPUs in a
// slow phase, 2026-12-04, ABBA rounds, medians of the paired ratios, the time with 12 or 16 slots
// over the time with 32: windowed bandwidth with 12 at 1.25 KiB 0.99, 1.5 KiB 0.56, 1.75 KiB 0.61,
// at 16 VPs 1.01, 0.62, 0.64; with 16 at 2 KiB 0.79, 3 KiB 0.58, at 16 VPs 0.58 and 0.61; back to
// back at 1.5 KiB with 12 the ping-pong 0.91, all_gather 0.95, all_to_all 1.00, reduce_scatter
// 0.94, all_reduce 1.03, and at 2-3 KiB with 16 0.99-1.06, 0.97-1.02, 0.96-0.99, 0.93-1.00,
// 1.03-1.09. Eight slots, blocks from 1 KiB: 1 KiB 1.25. Not the segments: keeping 64 of them for
// the producer rather than 8 made 1-3 KiB 1.01-1.03).
inline constexpr std::size_t kMostContinuedSlotsShortRings = 12;
// A message longer than kInlineBytes continues in the slots after its first: everything of a
// continuation slot but its sequence word, which only a message's first slot sets. Positions
// grow across segments, so a stale sequence word (position + 1 of an earlier message, or 0 in
// a fresh segment) is always below any position the consumer will look for: never "full".
inline constexpr std::size_t kContinuationBytes = kSlotSize - sizeof(std::atomic<std::uint64_t>);
// The payload bytes on a slot's first cache line, with the sequence word and the header. The
// producer writes that line last (Channel::fill), right before the sequence word: its consumer
// polls the word there while the message is written, so that a store to the line's header first
// took it from the consumer, whose next look took it back, and the sequence word's store took it
// again; written last, it moves once. (p = 2 on the 2-vCPU AMD EPYC, 2026-12-05, 6 rounds
// alternated, median of the paired ratios of the time, this over the header first, at 256 /
// 320 B, rounds in one phase: back to back windowed bandwidth 0.83-0.90, broadcast 0.85-0.91,
// gather, scatter, reduce and scan 0.84-0.95, all_gather, all_to_all, all_reduce and
// reduce_scatter 0.93-0.95; after a barrier all_gather and all_to_all 0.88-0.91, the one-way
// calls 0.97-1.01; at 512 B 0.89-0.99, at 8-128 B and from 1 KiB 0.98-1.03.)
inline constexpr std::size_t kFirstLinePayloadBytes = kCacheLine - (kSlotSize - kInlineBytes);
static_assert(kFirstLinePayloadBytes >= 16 && kFirstLinePayloadBytes < kInlineBytes,
              "a small message's header and first bytes share the slot's first cache line");

// After publishing a message of s slots, the producer asks for min(s, kPrefetchSlots) slots
// ahead, for writing (Channel::publish). Senders running ahead of a receiver that keeps up were
// held by their stores to slots the receiver had read (p = 2, back to back, an Intel Xeon of 2
// vCPUs, 2026-11-30, the time with it over the time without: broadcast, scatter, gather,
// reduce and scan of 8-64 B 0.44-0.65, of 128-256 B 0.49-0.95; windowed bandwidth of 384-512 B
// 0.75-0.83 with 8 slots against 2). All of a continued message's slots, not 8: from 9 slots
// (928 B) the sender's stores to the slots it had not asked for waited for their lines (the
// 2-vCPU AMD EPYC, 2026-12-02, p = 2, messages of 1-3 KiB sent through the ring, 4 rounds
// alternated, median of the paired ratios, the time with 32 over the time with 8: back to back
// windowed bandwidth 0.85-0.89, broadcast 0.71-0.88, scatter 0.75-0.95, scan 0.71-0.93, reduce
// 0.82-0.96, after a barrier 0.94-1.06; all_gather back to back 1.07-1.27 there, where an
// exchange waited from 4 KiB too, 0.97-1.02 as it landed; 8 and 16 VPs on the 2 cores, 1-3 KiB back
// to back, 3 rounds: 0.66-1.08). In a slower phase of the same vCPUs earlier that morning 4-32
// slots made no difference (0.98-1.04).
inline constexpr std::size_t kPrefetchSlots = kMostContinuedSlots;
// Asks for the cache lines of [p, p + bytes) for writing (PREFETCHW, which CPUs without it run as
// a no-op); nothing is read or written.
inline void prefetch_for_writing(const void* p, std::size_t bytes) noexcept {
  const auto* first = static_cast<const char*>(p);
  for (std::size_t at = 0; at < bytes; at += kCacheLine) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetchw %0" : : "m"(first[at]));
#else
    __builtin_prefetch(first + at, 1, 3);
#endif
  }
}
// Asks for the cache lines of [p, p + bytes) for reading.
inline void prefetch_for_reading(const void* p, std::size_t bytes) noexcept {
  const auto* first = static_cast<const char*>(p);
  for (std::size_t at = 0; at < bytes; at += kCacheLine) __builtin_prefetch(first + at, 0, 3);
}

// Messages of at least this many bytes are handed straight to a receiver already waiting, where
// it combines them (reduce, scan) or VPs share cores.
inline constexpr std::size_t kHandOverBytes = 256;
// The same where the receiver copies the message and each VP has a core: from the first size that
// does not fit inline in a slot. A ring message of two or three slots waited for costs the
// sender's stores to lines its receiver polls, then the receiver's reads of them, in turn; a
// hand-over writes the receiver's buffer while it polls the post's line (p = 2 on the 2-vCPU AMD
// EPYC, 2026-12-05, 6 rounds alternated, median of the paired ratios of the time, this over
// kHandOverBytes, at 96 / 128 / 200 B: ping-pong 0.46 / 0.39 / 0.36, 0.048 us against 0.116-0.141;
// after a barrier broadcast 0.97 / 0.84 / 0.79, scatter 0.90 / 0.83 / 0.75; reduce, scan,
// all_gather and all_to_all, whose receivers combine or exchange, 0.98-1.02; back to back, where
// senders stream into the ring and receivers do not post (Port::post_bytes_from), 0.98-1.03;
// with receivers that combine posting from 81 B too, reduce and scan after a barrier 1.06-1.17).
inline constexpr std::size_t kCopiedHandOverBytes = kInlineBytes + 1;
static_assert(kCopiedHandOverBytes <= kHandOverBytes,
              "a receiver that combines posts from the larger");
// The same in an exchange (Port::sendrecv_bytes), whose receive is posted before its send: below
// this both messages go through the ring, where a sender writes lines it has asked for ahead and
// its receiver reads them, rather than claim the partner's post and write into its buffer, and
// its partner then read that back (p = 2, an Intel Xeon of 2 vCPUs, 2026-11-30, three rounds,
// the time with 1 KiB over the time with 256 B: all_reduce, all_gather, all_to_all and
// reduce_scatter of 256-768 B 0.70-0.86 after a barrier and 0.73-1.0 back to back; the one-way
// calls, which post their receives as before, unchanged). Not above the exchange's rendezvous
// (kKeepingUpRendezvousBytes): its sender waits for a post.
inline constexpr std::size_t kExchangeHandOverBytes = 1024;
// A folding receive (Port::recv_fold_bytes) of fewer bytes is received as it is and folded by
// the receiver: the sender's fold would read and write the receiver's lines where a copy only
// writes them (p = 2, 256 B-1 KiB: a reduce 0.26-0.31 us a call folding as it lands, 0.22-0.25
// not; alike at 2 KiB; from 4 KiB folding leads).
inline constexpr std::size_t kFoldLandingBytes = 2 * 1024;
// A sender of at least this many bytes whose receiver is not waiting yet waits a while for it
// (Port::post_send), rather than copy the message into the ring (or a block) that the receiver
// copies again: with a core to each VP from 2 KiB, where three messages fill the ring's 64 slots
// and a sender running ahead links new segments that its receiver reads cold (from 4 KiB, p = 2,
// 2026-11-27: 2-3 KiB back to back 0.33-0.94x the time of the ring's for every collective and
// 0.24-0.37x for windowed bandwidth, 0.47-0.99x after a barrier; from 16 KiB, windowed bandwidth
// at 4-8 KiB was 8 GB/s against 29-43; from 1 KiB a reduce or scan of 1 KiB back to back is
// 1.2-1.4x slower, its sender no longer running ahead); VPs that share cores from 64 KiB (from
// 16 KiB, 16 VPs on 2 cores took 15-20% longer for a broadcast or gather of 64 KiB).
inline constexpr std::size_t kRendezvousBytes = 2 * 1024;
// The same from 1 KiB where the receiver keeps up (Link::receiver_keeps_up: it has taken every
// earlier message and copies rather than combines, so it posts again soon and has little to do
// after), with a core to each VP: p = 2, 1 KiB / 1.5 KiB back to back, 2026-11-27, windowed
// bandwidth 0.58 / 0.64x the ring's time, broadcast 0.99 / 0.68, scatter 0.59 / 0.74, gather
// 1.01 / 0.75, all_gather 0.56 / 0.57, all_to_all 0.59 / 0.64, the reductions and scans 0.96-1.01.
// Waiting for any receiver that has taken every message made a back-to-back reduce of 1 KiB
// 1.31x slower and a scan 1.4-1.6x (the receiver combines: its sender ran ahead), and from 256 or
// 512 B a broadcast, scatter or gather 1.1-1.5x.
inline constexpr std::size_t kKeepingUpRendezvousBytes = 1024;
static_assert(kExchangeHandOverBytes <= kKeepingUpRendezvousBytes,
              "an exchange's sender that waits for a post finds one");
// That from 1 KiB holds in an exchange (sendrecv: the sender has posted its own receive from the
// receiver, which sends to it at once); a send alone waits from 1.5 KiB on an Intel CPU (from 1 KiB
// on AMD's: below). On the 2-core AMD EPYC above the wait led one-way too, but on two Intel Xeons
// (2 vCPUs, and 16 cores; 2026-11-29, osu_hypercomm, two rounds, the ring's time over the wait's
// at 1 KiB) a sender that runs ahead and fills the ring with seven such messages beats one held
// to its receiver: back to back windowed bandwidth 0.69-0.84x, broadcast 0.47-0.71x, gather
// 0.54-1.01x, scatter 0.60-1.00x; after a barrier the wait's single copy led, 0.94-1.30x
// (ping-pong 1.05-1.23x, 0.41-0.59 us). At 1.5 KiB (four fill the ring) the wait led or tied both
// ways (bandwidth 1.02-1.09x, ping-pong 1.06-1.43x).
inline constexpr std::size_t kOneWayKeepingUpRendezvousBytes = 1536;
// On AMD CPUs a send alone waits from 1 KiB, as an exchange does: on the 2-vCPU AMD EPYC (p = 2,
// 2026-11-30, 12 rounds alternated, median of the paired ratios, the time waiting from 1 KiB over
// the time waiting from 1.5 KiB, at 1 KiB and 1.25 KiB): windowed bandwidth 0.90 / 0.78, broadcast
// 0.82 / 0.77 after a barrier and 0.89 / 0.73 back to back, gather 0.81 / 0.83 and 0.95 / 0.79,
// scatter 0.82 / 0.77 and 0.87 / 0.71; ping-pong, reduce, scan and all_gather 0.98-1.03.
inline constexpr std::size_t kOneWayKeepingUpRendezvousBytesAmd = kKeepingUpRendezvousBytes;
// Both were measured with 64-slot rings. With long ones (kRingSlotsOwnCores: 28 messages of 1 KiB
// fit where 7 did) a sender that runs ahead leads at 1 KiB on AMD's CPUs too, so there a send
// alone waits from 1.5 KiB on either (the 2-vCPU AMD EPYC, p = 2, 2026-12-02, 3 rounds of two
// pairs each, median of the paired ratios, with this, kOneWayRendezvousBytesLongRings and 32
// kPrefetchSlots over without, at 1 KiB back to back: windowed bandwidth 0.71, broadcast 0.68,
// gather 0.62, scatter 0.68; after a barrier 1.02-1.09). At 1.5 KiB through the ring: back to
// back 0.76-0.90, after a barrier 0.98-1.02 in one set of 4 rounds; in another, faster phase,
// where the wait's round trip is short, 0.98-1.24 and 1.05-1.36.
// The one for the CPU this runs on and the length of the rings.
[[nodiscard]] std::size_t one_way_keeping_up_rendezvous_bytes(bool long_rings) noexcept;
// Below that, a sender that streams (Port::post_send: it has taken no message since its last send
// to the receiver) queues in the ring. On AMD's CPUs it waits instead from 512 B where its
// receiver keeps up (windowed bandwidth, a root's broadcast or scatter, a gather's senders): every
// message queued costs its receiver the ring's lines, each a crossing, and in a slow phase of the
// vCPUs a crossing costs three to four times as much. The 2-vCPU AMD EPYC, p = 2, 2026-12-05,
// osu_hypercomm back to back, 6 rounds alternated, median of the paired ratios of the time,
// waiting over queueing, at 512 / 768 / 1024 / 1280 B, mostly in a slow phase (core_probe
// 300-330 ns): windowed bandwidth 0.74 / 0.59 / 0.52 / 0.47, broadcast 0.79 / 0.61 / 0.58 / 0.42,
// gather 0.71 / 0.56 / 0.64 / 0.41, scatter 0.72 / 0.58 / 0.50 / 0.42. In a fast phase (77-86 ns,
// 4 rounds): 0.72 / 0.80 / 0.73 / 0.63, 0.92 / 0.81 / 0.72 / 0.71, 0.86 / 0.81 / 0.84 / 0.77,
// 0.95 / 0.83 / 0.70 / 0.62. Reduce and scan, whose receivers combine and which stream as before,
// 0.98-1.04; a ping-pong and every call after a barrier do not stream and are unchanged. From
// 256 B it lost (back to back at 256 B: broadcast 1.16, gather 1.24). On Intel's, where a sender
// running ahead led at 1 KiB (above), never.
inline constexpr std::size_t kStreamingWaitBytesAmd = 512;
// The one for the CPU this runs on (the largest size_t: never).
[[nodiscard]] std::size_t cpu_streaming_wait_bytes() noexcept;
// A streaming sender that finds its receiver combining (or behind) queues this many messages to it
// before it asks again: the question reads the receiver's lines, which the receiver of a reduce or
// a scan, the slower of the two, must then claim back (asked at every send, both took 1.04-1.13x
// the time at 768-1280 B; asked every 64, 0.98-1.04).
inline constexpr std::uint32_t kSendsBeforeAskingAgain = 64;
// A send alone (not an exchange) whose receiver does not keep up, which is mostly one that
// combines what it receives (reduce, scan), waits only from 4 KiB where the rings are long: its
// sender runs ahead of the receiver's folds by up to nine messages of 3 KiB, where 64 slots held
// two (p = 2, 2026-12-02, as above, back to back at 1.5 / 2 / 3 KiB: reduce 0.70 / 0.52 / 0.76,
// scan 0.66 / 0.57 / 0.86; after a barrier 0.97-1.02). Not in an exchange, whose partners both
// send and neither runs ahead (waiting from 4 KiB there too, all_to_all and reduce_scatter of
// 2-3 KiB after a barrier took 1.05-1.36x the time in one set of 4 rounds). Below 16 KiB, from
// kBoundedQueueBytes, it waits only where its receiver has kMostQueuedSlots of its messages still
// to take, so that at most that many lie in blocks; else they are queued in blocks, and the sender
// copies the next while the receiver folds the last (p = 2, the same EPYC, 2026-12-02 12:48, a
// slow phase, 3 rounds of two pairs, ABBA, median of the paired ratios, the time queueing at once
// below 16 KiB over the time waiting from 4 KiB, back to back: reduce 0.50 at 4 KiB and 0.54 at
// 8 KiB, scan 0.59 and 0.78; windowed bandwidth, broadcast and gather, whose receivers keep up,
// 0.98-1.06. Unbounded, a reduce of 8 KiB in a loop piled up 58 MB of blocks, against 4.1 MB
// waiting and 4.8 MB with the bound).
inline constexpr std::size_t kOneWayRendezvousBytesLongRings = 16 * 1024;
inline constexpr std::size_t kBoundedQueueBytes = 4 * 1024;
inline constexpr std::size_t kMostQueuedSlots = 64;
// Where such a receiver has taken every message, the sender waits this long for its post (after
// the Waiter's first 64 looks, which come before it reads the clock), then queues: after a barrier
// the receiver posts at once and the message is handed over, copied once (queued at once, the scan
// of 4 / 8 KiB after a barrier took 1.13 / 1.29x the time); back to back it is still folding the
// last one. A sender that finds the post folds into the receiver's buffer, and one call's hand-over
// brings the next: the longer the wait, the more calls fall into that step. Waiting 0.3 / 1 / 3 us
// against waiting from 4 KiB (3 rounds): back to back reduce 0.51 / 0.61 / 0.65 at 4 KiB and 0.92 /
// 0.97 / 0.97 at 8 KiB, scan 0.77 / 0.78 / 0.79 and 0.66 / 0.72 / 0.74; after a barrier 0.97-1.05.
// 1 us, for a post after a barrier in the slowest phases. In a fast phase (`core_probe` 100-125 ns)
// the waits cost no more, and this changed nothing: 0.95-1.06.
inline constexpr std::chrono::nanoseconds kBriefReceiverWait{1000};
inline constexpr std::size_t kRendezvousBytesShared = 64 * 1024;
// A message of at least this many bytes handed to a posted receive is copied by both VPs, each
// taking the next chunk in turn: one core's copy runs well below the memory's bandwidth
// (4.9-10 GB/s single-threaded on a 16-core Xeon), two copy nearly twice as fast. With a core
// to each VP from 256 KiB (p = 2: a ping-pong or broadcast of 256-512 KiB 1.7-2x faster than
// from 1 MiB); VPs that share cores from 1 MiB (a receiver switched out mid-chunk holds its
// sender: 4 VPs on 2 cores scattered 256 KiB in 41 us sharing the copy, 29 not).
inline constexpr std::size_t kSharedCopyBytes = 256 << 10;
inline constexpr std::size_t kSharedCopyBytesShared = 1 << 20;
inline constexpr std::size_t kSharedCopyChunk = 128 << 10;

// The shared-memory transport's Link (transport.hpp).
class Channel final : public Link {
 public:
  // shared_copy_bytes: the smallest message copied by both sides (kSharedCopyBytes or
  // kSharedCopyBytesShared).
  explicit Channel(std::size_t capacity, std::size_t shared_copy_bytes = kSharedCopyBytes);
  ~Channel() override;

  // ---- producer side (the sending VP only)
  // Copies the payload straight into a matching posted receive; false when there is none.
  bool try_hand_over(const Envelope& envelope,
                     std::span<const std::byte> payload) noexcept override;
  // A payload copied by both sides (shared_copy_bytes on): the sender does `work` after offering
  // the chunks and before taking what is left of them, so that its receiver copies meanwhile.
  bool try_hand_over_during(const Envelope& envelope, std::span<const std::byte> payload,
                            SideWork& work) noexcept override;
  // The same, where write(context, dest) writes the payload into the posted buffer itself (the
  // Remote receives a large message from MPI straight into it; a folding post folds it from
  // there); called only when it matches.
  bool try_hand_over_with(const Envelope& envelope, Fill write, void* context) override;
  // Whether the receiver has posted a receive that no sender has taken yet.
  [[nodiscard]] bool receiver_posted() const noexcept override {
    return posted_.state.load(std::memory_order_acquire) == kPosted;
  }
  // The post's line first: a sender has just read it (try_hand_over), while consumed_'s is
  // the receiver's to write (a read of it costs a transfer, wasted on a receiver that combines).
  [[nodiscard]] bool receiver_keeps_up() const noexcept override {
    return !posted_.combined.load(std::memory_order_relaxed) &&
           consumed_.load(std::memory_order_acquire) == head_;
  }
  // consumed_'s line, which the receiver writes with every message it takes: asked only of a
  // sender about to queue a message of kBoundedQueueBytes or more, which runs ahead of a
  // receiver that combines.
  [[nodiscard]] bool receiver_within(std::size_t slots) const noexcept override {
    return head_ - consumed_.load(std::memory_order_acquire) < slots;
  }
  // Appends to the ring, or to a new segment when the ring is full; never waits.
  void push(const Envelope& envelope, std::span<const std::byte> payload) override;
  // A payload kept in a block is written there by fill; a shorter one into a scratch, then
  // pushed.
  void push_with(const Envelope& envelope, Fill fill, void* context) override;

  // ---- consumer side (the receiving VP only)
  // The oldest message, or nullptr when none is there; valid until take_front.
  [[nodiscard]] const Envelope* front() noexcept override;
  // Copies the payload of front() into dest (dest.size() == its size) and removes it.
  void take_front(std::span<std::byte> dest) noexcept override;

  // A posted receive: a sender whose message is next in line (the channel is empty), has this
  // size and this tag copies it straight into buffer, or folds it with *fold (Link::post).
  void post(std::span<std::byte> buffer, const MessageTag& tag, const Fold* fold,
            bool combined) noexcept override;
  [[nodiscard]] bool post_done() const noexcept override;
  [[nodiscard]] double take_posted_arrival() noexcept override;  // after post_done(); clears it
  // Withdraws the post; false when a sender has already taken it (then wait for post_done()).
  [[nodiscard]] bool cancel_post() noexcept override;
  // Takes chunks of a shared copy into the post (kCopying) until none is left.
  void help_post() noexcept override;
  [[nodiscard]] bool own_post(OwnPost& post) const noexcept override {
    if (posted_.state.load(std::memory_order_relaxed) != kPosted || posted_.fold != nullptr)
      return false;
    post = {{posted_.buffer, posted_.size}, posted_.tag, received_};
    return true;
  }

  // ---- between runs (no VP thread touches the channel)
  // Discards every pending message; returns the headers of those discarded.
  std::vector<Envelope> drain() override;

 private:
  template <class Write>
  bool hand_over(const Envelope& envelope, Write&& write);

  // kCopying: the claiming sender copies a large payload in chunks, and the receiver may take
  // some (copy_chunks); the sender sets kDone once every chunk is copied.
  enum PostState : std::uint32_t { kIdle, kPosted, kClaimed, kDone, kCopying };
  // Copies the post's payload into its buffer in chunks with the other side (copy_chunks), and
  // returns once every chunk is copied, the other side's too; the sender does `work` after
  // offering the chunks.
  void share_copy(std::span<const std::byte> payload, SideWork& work) noexcept;
  void copy_chunks() noexcept;
  // Bytes [at, at + n) of the message, from `from`, into the post: copied, or folded.
  void place(std::size_t at, const std::byte* from, std::size_t n) const noexcept {
    if (posted_.fold != nullptr)
      posted_.fold->apply(posted_.fold->context, at, from, n);
    else if (n != 0)
      std::memcpy(posted_.buffer + at, from, n);
  }
  // One ring of slots. The producer leaves it for a new one when it is full: it sets `end`,
  // then publishes `next`; the consumer moves on once it has taken every message before `end`.
  struct Segment {
    explicit Segment(std::size_t capacity) : slots(std::make_unique<Slot[]>(capacity)) {}
    std::unique_ptr<Slot[]> slots;
    std::atomic<Segment*> next{nullptr};
    std::uint64_t end = 0;  // written before next, read after it
  };

  // How many ring slots a message of `size` bytes takes when continued over consecutive slots;
  // 1 when it is inline or too long for that (it goes in a block).
  [[nodiscard]] std::size_t slots_for(std::size_t size) const noexcept;
  // The slots that the message in `slot` takes.
  [[nodiscard]] std::size_t slots_taken(const Slot& slot) const noexcept {
    return slot.block != nullptr ? 1 : slots_for(slot.envelope.size);
  }
  [[nodiscard]] Slot& slot_at(Segment& segment, std::uint64_t position) const noexcept {
    return segment.slots[position & mask_];
  }
  // The bytes after a slot's sequence word, where a continued message goes on.
  [[nodiscard]] std::byte* continuation(Segment& segment, std::uint64_t position) const noexcept {
    return reinterpret_cast<std::byte*>(&slot_at(segment, position)) +
           sizeof(std::atomic<std::uint64_t>);
  }
  // Whether the producer's ring has `slots` free slots from head_ on, by consumed_seen_.
  [[nodiscard]] bool room_for(std::size_t slots) const noexcept {
    return head_ + slots - std::max(consumed_seen_, segment_start_) <= capacity_;
  }
  // slots == 1 and a payload longer than kInlineBytes: the payload goes in a block.
  void fill(std::uint64_t position, std::size_t slots, const Envelope& envelope,
            std::span<const std::byte> payload);
  // Producer: leaves a full ring for a recycled or new one.
  void next_segment();
  // Producer: `slots` free from head_ on, in this ring or the next; then, once they are
  // written, hands them to the consumer.
  void make_room(std::size_t slots);
  void publish(std::size_t slots) noexcept;
  // Consumer: hands a segment it has emptied back to the producer.
  void retire(Segment* segment) noexcept;
  [[nodiscard]] Block* acquire_block(std::size_t size);
  void recycle(Block* block) noexcept;

  const std::size_t capacity_;
  const std::size_t mask_;
  const std::size_t max_slots_;  // the most slots one message may take (most_continued_slots)
  const std::size_t shared_copy_bytes_;

  // Producer-only state.
  alignas(kCacheLine) std::uint64_t head_ = 0;
  std::uint64_t enqueued_ = 0;       // messages put in a ring or handed over
  std::uint64_t consumed_seen_ = 0;  // the last value of consumed_ the producer read
  Segment* producer_segment_;        // the ring the producer writes
  std::uint64_t segment_start_ = 0;  // the position at which it started writing it

  // The consumer's position: every slot before it is free again (release after its payload is
  // copied out). On its own line: the producer reads it only when its count of free slots ends.
  alignas(kCacheLine) std::atomic<std::uint64_t> consumed_{0};

  // Consumer-only state.
  alignas(kCacheLine) std::uint64_t tail_ = 0;
  std::uint64_t dequeued_ = 0;
  std::uint64_t received_ = 0;  // messages taken, queued or through a post (own_post)
  Segment* consumer_segment_;   // the ring the consumer reads: the producer's or an older one

  // The posted receive: written by the consumer before kPosted, by the claiming producer after.
  struct alignas(kCacheLine) Posted {
    std::atomic<std::uint32_t> state{kIdle};
    // Whether the last post was for a message its receiver combines (Link::receiver_keeps_up):
    // written by the consumer with each post, read by the producer.
    std::atomic<bool> combined{false};
    std::byte* buffer = nullptr;
    std::size_t size = 0;
    MessageTag tag{};
    std::uint64_t expected = 0;  // the consumer's dequeued_ when posting
    double arrival = 0;
    const Fold* fold = nullptr;         // the message folded rather than copied, or null
    std::size_t chunk = 0;              // a shared copy's chunk: a multiple of fold's granule
    const std::byte* source = nullptr;  // kCopying: the payload, written before kCopying
    // kCopying: the next chunk to take, and how many are copied (the sender's last wait).
    alignas(kCacheLine) std::atomic<std::uint32_t> next_chunk{0};
    std::atomic<std::uint32_t> chunks_done{0};
  } posted_;

  // Payload blocks on their way back from consumer to producer.
  // As many as a full ring holds, so that a sender streaming block messages reuses them all.
  boost::lockfree::spsc_queue<Block*, boost::lockfree::capacity<64>> returned_blocks_;
  // Emptied segments on their way back (a few: a receiver that fell far behind and caught up
  // leaves the rest to be freed).
  boost::lockfree::spsc_queue<Segment*, boost::lockfree::capacity<8>> returned_segments_;
};

template <class Write>
bool Channel::hand_over(const Envelope& envelope, Write&& write) {
  if (posted_.state.load(std::memory_order_acquire) != kPosted) return false;
  std::uint32_t expected_state = kPosted;
  // Claim first: while claimed the receiver cannot withdraw or rewrite the post.
  if (!posted_.state.compare_exchange_strong(expected_state, kClaimed, std::memory_order_acquire,
                                             std::memory_order_relaxed))
    return false;
  // Only when the channel is empty (FIFO) and the message is what the receiver waits for.
  if (posted_.expected != enqueued_ || posted_.size != envelope.size ||
      !(posted_.tag == envelope.tag)) {
    posted_.state.store(kPosted, std::memory_order_release);
    return false;
  }
  write(std::span<std::byte>(posted_.buffer, posted_.size));
  posted_.arrival = envelope.arrival;
  posted_.state.store(kDone, std::memory_order_release);
  return true;
}

}  // namespace hypercomm::detail
