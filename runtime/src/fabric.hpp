// What the VPs of one Machine share: channels, per-VP wait words, link counters, the abort and
// error state, and the VP threads themselves. A VP's port (port.hpp) is the only way a body or a
// collective reaches it.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "channel.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "port.hpp"
#include "straight_runs.hpp"
#include "transport.hpp"

namespace hypercomm::detail {

enum VpStatus : std::uint32_t { kRunning, kBlocked, kFinished };

// The collective calls a VP keeps published (VpState::calls): a VP waiting in a call finds the
// members' header of it while they are at most this many calls further (a rooted call's
// non-roots and a scan's lower members, whose messages or meeting seats let them go on first).
inline constexpr std::size_t kPublishedCalls = 8;

// One VP's shared state: what its senders read on every message (whether it sleeps) on a line
// apart from what it writes each time it waits, so that a message moves one line between the
// cores, not two; its published calls on lines of their own.
struct alignas(kCacheLine) VpState {
  std::atomic<std::uint32_t> wake{0};      // futex word the VP sleeps on
  std::atomic<std::uint32_t> sleeping{0};  // senders wake the VP only when set
  std::atomic<std::uint32_t> meeting{0};   // the collective call it meets in (Port::meet), or 0
  alignas(kCacheLine) std::atomic<std::uint32_t> status{kRunning};
  std::atomic<int> waiting_for{-1};
  std::atomic<const char*> operation{nullptr};
  // A group meeting's members while the VP waits in it (the watchdog names those not in it).
  std::atomic<const std::vector<int>*> meeting_members{nullptr};
  std::atomic<std::uint64_t> received{0};  // messages taken; the watchdog's sign of progress
  std::atomic<std::uint32_t> mail{0};      // oversubscribed: a message came since the VP blocked
  std::atomic<std::uint32_t> lending{0};   // waiting for VP lending-1 to post (Port::post_send)
  // A blocked VP's looks at what it waits for, each just before it looks (Port::look): the
  // watchdog declares a deadlock only after every blocked VP looked again since the last
  // delivery, so that a VP the OS has not run for a while is not taken for a stuck one.
  std::atomic<std::uint32_t> looks{0};
  // The last kPublishedCalls collective calls the VP entered (Port::begin_call), for the
  // mismatch check of the VPs that wait in the same call (Port::disagreement): a seqlock that
  // only the VP writes, once per collective call (on entry: a VP that has left a call still
  // shows its header, as one still in it does) and never per message, on lines of their own so
  // that neither its senders nor its waits touch them. Call k of the run (from 0) lies at
  // calls[k % kPublishedCalls], two header words; `entered` counts them.
  alignas(kCacheLine) std::atomic<std::uint32_t> call_version{0};
  std::atomic<std::uint32_t> entered{0};
  std::array<std::array<std::atomic<std::uint64_t>, 2>, kPublishedCalls> calls{};
};

// What a VP publishes about its collective calls (VpState::calls): the last kPublishedCalls it
// entered, latest first (kind 0: none).
struct PublishedCalls {
  std::array<MessageTag, kPublishedCalls> recent{};
  // The last call it entered, which it may have left (kind 0: none yet).
  [[nodiscard]] const MessageTag& latest() const noexcept { return recent[0]; }
  // Its call number `sequence` on group `group`, when that is among them; else null. With an
  // origin (a split group's: the parent's call that made it), none entered before that call.
  [[nodiscard]] const MessageTag* find(std::uint32_t group, std::uint32_t sequence,
                                       const GroupInfo* origin = nullptr) const noexcept {
    for (const MessageTag& tag : recent) {
      if (tag.kind == 0) break;
      if (tag.group == group && tag.sequence == sequence) return &tag;
      if (origin != nullptr && tag.group == origin->origin_group &&
          tag.sequence == origin->origin_sequence)
        break;
    }
    return nullptr;
  }
};
// The VP's own writes (one writer); the readers' snapshot, false when the VP kept rewriting it.
// A seqlock (Boehm, "Can seqlocks get along with programming language memory models?"): the
// version is odd while the VP rewrites its words; a reader retries when it saw it change.
// ThreadSanitizer does not model standalone fences: under it the words' own stores and loads
// carry the order the fences give (release stores, acquire loads; the same instructions on x86).
#if defined(__SANITIZE_THREAD__)
inline constexpr std::memory_order kSeqlockWordStore = std::memory_order_release;
inline constexpr std::memory_order kSeqlockWordLoad = std::memory_order_acquire;
inline void seqlock_write_fence() noexcept {}
inline void seqlock_read_fence() noexcept {}
#else
inline constexpr std::memory_order kSeqlockWordStore = std::memory_order_relaxed;
inline constexpr std::memory_order kSeqlockWordLoad = std::memory_order_relaxed;
inline void seqlock_write_fence() noexcept { std::atomic_thread_fence(std::memory_order_release); }
inline void seqlock_read_fence() noexcept { std::atomic_thread_fence(std::memory_order_acquire); }
#endif
inline void publish_call(VpState& state, const MessageTag& tag) noexcept {
  const std::uint32_t version = state.call_version.load(std::memory_order_relaxed);
  state.call_version.store(version + 1, std::memory_order_relaxed);
  seqlock_write_fence();
  const std::uint32_t entered = state.entered.load(std::memory_order_relaxed);
  const auto words = std::bit_cast<std::array<std::uint64_t, 2>>(tag);
  auto& place = state.calls[entered % kPublishedCalls];
  place[0].store(words[0], kSeqlockWordStore);
  place[1].store(words[1], kSeqlockWordStore);
  state.entered.store(entered + 1, kSeqlockWordStore);
  state.call_version.store(version + 2, std::memory_order_release);
}
// A new run: none entered (no VP runs meanwhile).
inline void clear_calls(VpState& state) noexcept {
  for (auto& place : state.calls)
    for (auto& word : place) word.store(0, std::memory_order_relaxed);
  state.entered.store(0, std::memory_order_relaxed);
}
[[nodiscard]] bool read_calls(const VpState& state, PublishedCalls& calls) noexcept;

// A header and the VPs that hold it.
using TagHolders = std::pair<MessageTag, std::vector<int>>;
// CollectiveMismatch's text when VPs hold different headers for one call: "VP 5: reduce: the
// VPs disagree on the root of collective call 1 on ring:8: VPs 0, 2-7 call reduce (call 1 on
// ring:8, root 0, ...) but VP 1 calls reduce (call 1 on ring:8, root 7, ...)". `me` found it.
[[nodiscard]] std::string describe_disagreement(int me, const char* op, const MessageTag& mine,
                                                const std::vector<TagHolders>& seen,
                                                const Topology& machine);

// VpState::waiting_for of a VP in a meeting: it waits for every VP, not for one.
inline constexpr int kWaitsForAll = -2;

// Whether VP `me`, about to wait for `dest` to post its receive (Port::post_send), would close a
// cycle of such waits: the chain of waits for receivers from dest (VpState::lending: the VP
// waited for, plus one) comes back to me. A chain that loops without me is its own VPs' to
// break (the last of them to wait sees it), and one that ends at a VP that does not wait so
// (copying, computing, blocked in a receive) ends: me may wait. A cycle through a blocked
// receive (0 waits for 1 to post, 1 for a message of 2, and 2 for 0 to post) is not seen here:
// its waits end at their bound (Port::post_send), and the messages are queued.
[[nodiscard]] inline bool closes_wait_cycle(std::span<const VpState> states, int me,
                                            int dest) noexcept {
  int at = dest;
  for (std::size_t hops = 0; hops < states.size(); ++hops) {
    const std::uint32_t next =
        states[static_cast<std::size_t>(at)].lending.load(std::memory_order_seq_cst);
    if (next == 0) return false;
    at = static_cast<int>(next) - 1;
    if (at == me) return true;
  }
  return false;
}

// Plays a meeting's rounds on the model clocks: the model time at which each VP ends them, given
// the clocks at which they started (clocks[i], replaced), as the messages would have made it, bit
// for bit (meeting.cpp). Each pattern's senders, receivers and hops are worked out once: a VP
// calling a small collective back to back meets in the same pattern again and again, and the
// last VP of every meeting plays it (finding them anew each time, through the pattern's
// functions and the topology, was a tenth of a meeting's cost). Only the VP that concludes a
// meeting plays, one at a time (Port::conclude_meeting; conclude_pipelined for the pipeline's
// meetings, each concluded after the one before), so the plans need no lock.
class RoundsPlayer {
 public:
  // inputs: the VPs' meeting inputs, which rounds.sent_bytes reads (empty when it is null).
  // vps: the machine VP of each id the rounds name (a group's members), whose routes the hops
  // follow; empty: the ids are VPs.
  void play(const Port::Rounds& rounds, const CostModel& model, const Topology& topology,
            std::span<double> clocks, std::span<double> next,
            std::span<const void* const> inputs = {}, std::span<const int> vps = {});

 private:
  struct Step {
    int source = -1;     // the VP whose message this VP receives in the round, or -1
    int hops = 0;        // the links it crosses (the model's th counts them)
    bool sends = false;  // whether this VP sends in the round
  };
  struct Plan {
    int (*to)(int, int, int) = nullptr;
    int (*from)(int, int, int) = nullptr;
    int count = 0;
    int root = 0;
    bool ring_root = false;
    int p = 0;
    std::vector<Step> steps;  // round k's for VP j at k * p + j
  };
  // The few patterns a program alternates between (a barrier and a broadcast in one loop).
  static constexpr std::size_t kPlans = 4;
  std::array<Plan, kPlans> plans_{};
  std::size_t next_ = 0;  // the plan replaced next
};

// Where the VPs meet when they run a small symmetric collective in shared memory (Port::meet):
// a counter of arrivals, the generation the last arriver bumps to release the others, and each
// VP's seat, written before it arrives and read by the last arriver. The whole machine has one
// (Fabric::meeting), each group that meets its own (Fabric::group_meeting), seated by rank; the
// whole machine's signal and sleepers serve them all, so that an abort or a finishing VP wakes
// every VP in any meeting.
struct Meeting {
  struct Seat {
    double clock = 0;  // the VP's model clock on arrival
    MessageTag tag{};
    const char* operation = nullptr;  // the collective's name, for mismatch reports
    const void* input = nullptr;
    bool has_part = false;  // comes with a part (Port::meet)
  };
  alignas(kCacheLine) std::atomic<std::uint32_t> arrived{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> released{0};
  std::atomic<std::uint32_t> signal{0};  // futex word: bumped on release, abort and finish
  std::atomic<std::uint32_t> sleepers{0};
  // The last arriver reads every seat's input (concluding); a VP that leaves unreleased on an
  // error marks the meeting deserted for the rest of the run (Port::meet).
  alignas(kCacheLine) std::atomic<std::uint32_t> concluding{0};
  std::atomic<std::uint32_t> deserted{0};
  // Members whose part (Port::meet) is not done yet: set by the last arriver, counted down by each.
  alignas(kCacheLine) std::atomic<std::uint32_t> parts_left{0};
  alignas(kCacheLine) std::vector<Seat> seats;
  // The last arriver's: the inputs it combines, the shared result (then the combine's
  // scratch), the clocks of a round.
  std::vector<const void*> inputs;
  std::vector<std::byte> result;
  std::vector<double> clocks;
  std::vector<double> next_clocks;
  RoundsPlayer player;
  std::vector<int> vps;     // a group's: member r is VP vps[r] (empty: the whole machine's)
  std::uint64_t group = 0;  // a group's GroupInfo::key
};

// Where the VPs meet for a small prefix or rooted collective (Port::meet_prefix,
// Port::meet_rooted), which a VP leaves as soon as what it needs is there: a prefix's VP i the
// inputs of VPs 0..i, a broadcast's or scatter's VP the root's, a reduce's or gather's non-root
// nothing. Its model clock, which the rounds make from every VP's, is settled when the last VP
// arrives. A VP that calls them back to back thus runs ahead of the others, as far as slot_count
// meetings, the way MPI's linear scan and rooted trees pipeline. Meeting g uses slot g mod
// slot_count. A prefix's results are computed in id order, step i (VP i's) once VP i has come,
// by whichever VP holds the chain: VP i itself when it arrives to find steps 0..i-1 done, else
// the VP that did step i-1 and finds VP i there. Both sides change VP i's mark, one word, with
// read-modify-writes: the VP that did step i-1 claims VP i's step if it has come, else marks it
// ready, and VP i, coming, finds it ready (then takes the chain on) or not (then waits for its
// step), so exactly one does it; the VP that does the last step plays the rounds on the
// clocks and frees the slot for meeting g + slot_count. A rooted meeting's last VP to leave does.
struct PipelinedMeeting {
  static constexpr std::size_t kBytes = Port::kPipelinedBytes;  // the most a VP passes
  // Meetings a VP may run ahead, and the inputs that lie in the seats (Seat::small): 8 and 16 VPs
  // on 2 cores, 8 B back to back, best of 5 rounds alternated with 256 slots and every input in
  // `inputs` (an Intel Xeon of 2 vCPUs, 2026-11-30): broadcast 0.87x / 0.89x the time, reduce
  // 0.97x / 0.90x, scan 0.97x / 0.93x, gather 0.96x / 0.99x, scatter 0.98x / 0.94x; the seats
  // alone 0.95x / 0.95x for the broadcast, 256 -> 1024 slots alone 0.91x for the broadcast but
  // 1.03x for the reduce (its root reads the inputs of more slots cold).
  static constexpr std::uint32_t kMostSlots = 512;
  static constexpr std::size_t kSmallBytes = 48;
  // Bytes of inputs, folds and root inputs (at most): for a chain's slots (allocate's storage),
  // and for the meetings a call of more than kSmallBytes a VP may run ahead (input_lead), whose
  // data lies in that storage, not in the seats; the whole machine's chain has more slots, for
  // calls whose inputs lie in the seats (kSeatCallStorage).
  static constexpr std::size_t kStorage = 6 << 20;
  static constexpr std::size_t kSeatCallStorage = 24 << 20;
  // A seat's mark in meeting g: base(g) + one of these (any other value: not come yet; base(g):
  // a VP that left unfinished took its step back, meeting.cpp's withdraw_from_chain; kReady: not
  // come yet, but a prefix's steps below it are done, and it takes the chain on when it comes).
  // Marks start at 0, below every meeting's base.
  static constexpr std::uint64_t kStates = 8;
  static constexpr std::uint64_t kCame = 1, kClaimed = 2, kDone = 3, kReady = 4;
  [[nodiscard]] static constexpr std::uint64_t base(std::uint64_t g) noexcept {
    return (g + 1) * kStates;
  }
  // Whether a seat's VP has come to meeting g (its mark `mark`).
  [[nodiscard]] static constexpr bool came_to(std::uint64_t mark, std::uint64_t g) noexcept {
    return mark / kStates == g + 1 && mark % kStates != 0 && mark % kStates != kReady;
  }
  struct alignas(kCacheLine) Seat {
    std::atomic<std::uint64_t> mark{0};
    double clock = 0;      // the VP's model clock on arrival (when not pending)
    bool pending = false;  // its clock is the one the previous prefix meeting settles
    MessageTag tag{};
    std::size_t bytes = 0;
    const char* operation = nullptr;
    std::byte* out = nullptr;       // where its result goes (null: none, an exscan's VP 0)
    const std::byte* in = nullptr;  // a rooted meeting by reference: the VP's input
    // An input of up to kSmallBytes (Slot::inputs_of), on the line after the seat's first: a VP
    // reading the seat's mark has the CPU's adjacent-line prefetch bring it along.
    alignas(8) std::byte small[kSmallBytes];
  };
  static_assert(sizeof(Seat) == 2 * kCacheLine);
  // Where the VPs' inputs of `bytes` lie in a slot: VP r's at base + r * stride.
  struct Inputs {
    std::byte* base;
    std::size_t stride;
  };
  struct Slot {
    alignas(kCacheLine) std::atomic<std::uint64_t> generation{0};  // the meeting it serves
    alignas(kCacheLine) std::atomic<std::uint32_t> left{0};        // VPs gone (a rooted meeting)
    // From the root: 1 + the VP that left its input as the root; to the root: kRootCheckedAll
    // (meeting.cpp) once the root has checked every seat; else 0.
    std::atomic<std::uint32_t> root{0};
    // A VP giving its input to a root that had not come yet: unless that root checks every
    // seat, the last VP to leave does (Port::meet_rooted).
    std::atomic<std::uint32_t> unchecked{0};
    // A rooted meeting by reference whose root leaves on an error: no VP may start to copy
    // from or into its buffers any more (Port::meet_rooted).
    std::atomic<std::uint32_t> closed{0};
    // A rooted meeting by reference: the copies made, counted after each; the last wakes the
    // root (one wake-up where one per copy woke the root 4095 times at 4096 VPs).
    std::atomic<std::uint32_t> copied{0};
    // What follows is set once (allocate) and read by every VP at every meeting: on a line of its
    // own, away from the counters above that the VPs of both cores write.
    alignas(kCacheLine) std::unique_ptr<Seat[]> seats;
    // p * kBytes each, in the chain's storage: every byte read is written first in the same
    // meeting, so the storage is left unwritten (its pages come on first use, not all at once
    // when a group first meets).
    std::byte* inputs = nullptr;  // VP i's at i * kBytes
    std::byte* folds = nullptr;   // the steps' partial folds (Port::PrefixStep)
    // A flow from the root: the root's input (a scatter's p blocks), apart from the others, so
    // that VPs that disagree on the flow (a gather's VP 0 against a broadcast's root) do not
    // write the same bytes before they find out (a broadcast of up to kSmallBytes leaves it in
    // the root's seat, where only the root writes).
    std::byte* root_input = nullptr;
    // A wide call's data past p * kBytes (up to the wide room), apart from the above, slot_room
    // bytes each: a broadcast's or scatter's root input in wide_room (root_input itself where
    // that holds as much), a gather's, reduce's or scan's p inputs of more than kBytes each in
    // wide_inputs, VP i's at i * n (apart from wide_room for the reason root_input is), a
    // scan's partial folds in wide_room.
    std::byte* wide_room = nullptr;
    std::byte* wide_inputs = nullptr;
    // The VPs' inputs of `bytes` each: in their seats up to kSmallBytes, in `inputs` up to
    // kBytes, past that in the wide inputs (a reduce, gather or scan whose p inputs fit there).
    [[nodiscard]] Inputs inputs_of(std::size_t bytes) const noexcept {
      if (bytes <= kSmallBytes) return {seats[0].small, sizeof(Seat)};
      if (bytes > kBytes) return {wide_inputs, bytes};
      return {inputs, kBytes};
    }
    // A prefix meeting's partial folds of `bytes` each, at the inputs' stride: past kBytes in
    // the wide room (a prefix meeting has no root's input).
    [[nodiscard]] std::byte* folds_of(std::size_t bytes) const noexcept {
      return bytes > kBytes ? wide_room : folds;
    }
  };
  // A group's chain (Fabric::group_chain): VPs run fewer meetings ahead in it (kGroupSlots),
  // and past kGroupsStorage for all of a run's groups (a split in a loop) a new group has none.
  static constexpr std::uint32_t kGroupSlots = 64;
  static constexpr std::size_t kGroupsStorage = 64 << 20;
  // The least room in a slot for a wide call's data: a broadcast or scatter whose root's input,
  // or a gather, reduce or scan whose p inputs, hold up to this much (or p * kBytes, where that
  // is more) pipelines (Port::meet_rooted, Port::meet_prefix). The whole machine's chain: 32 KiB,
  // 2 KiB a VP at 16 VPs, whose reduce and scan of 1.5-2 KiB (and gather of 1.5) sent messages with
  // 16 KiB (docs/performance.md, "A wider room for the machine's meetings"); 512 slots of it and as
  // much again of inputs, 32 MiB reserved, whose pages come as first used. A group's: 16 KiB, so
  // that kGroupsStorage holds as many groups' chains as it did.
  static constexpr std::size_t kWideRoom = 32 << 10;
  static constexpr std::size_t kGroupWideRoom = 16 << 10;
  // Slots of kBytes inputs, folds and root input per VP, as many as `storage` allows for p VPs
  // (a power of two from 2 to most_slots), with wide_room (or p * kBytes) for a wide call's data;
  // where kStorage allows fewer (input_lead), that many data slots besides (data_slot).
  void allocate(int p, std::uint32_t most_slots = kMostSlots, std::size_t wide_room = kWideRoom,
                std::size_t storage = kStorage);
  // The meetings a VP may run ahead in a call of `bytes` a VP (Port::take_seat).
  [[nodiscard]] std::uint32_t lead(std::size_t bytes) const noexcept {
    return bytes <= kSmallBytes ? slot_count : input_lead;
  }
  void reset() noexcept;  // a new run (an aborted one may leave a slot half used)
  [[nodiscard]] Slot& slot(std::uint64_t generation) noexcept {
    return slots[generation & (slot_count - 1)];
  }
  [[nodiscard]] const Slot& slot(std::uint64_t generation) const noexcept {
    return slots[generation & (slot_count - 1)];
  }
  // Where meeting `generation`'s data lies for a call of `bytes` a VP (inputs, folds, root input,
  // rooms; not its seats or counters): its slot's up to kSmallBytes, past that one of input_lead
  // data slots, used in turn, each free again once the meeting input_lead before is over, so that
  // such calls touch as much memory as with input_lead slots (a reduce of 512 B at 64 VPs, back
  // to back, took 2.0-2.4x the time with its inputs in 512 slots rather than 128).
  [[nodiscard]] Slot& data_slot(std::uint64_t generation, std::size_t bytes) noexcept {
    if (bytes <= kSmallBytes || data_slots == nullptr) return slot(generation);
    return data_slots[generation & (input_lead - 1)];
  }
  std::unique_ptr<Slot[]> slots;
  std::unique_ptr<Slot[]> data_slots;  // input_lead of them where fewer than slot_count, else none
  std::unique_ptr<std::byte[]> storage;       // the slots' inputs, folds and root inputs
  std::unique_ptr<std::byte[]> wide_storage;  // their wide rooms and inputs (none: see Slot)
  std::uint32_t slot_count = 0;
  std::uint32_t input_lead = 0;  // lead() past kSmallBytes: the slots kStorage holds
  std::size_t slot_room = 0;  // the most a wide call leaves in a slot: p * kBytes or the wide room
  std::size_t storage_bytes = 0;                                // storage's and wide_storage's
  alignas(kCacheLine) std::atomic<std::uint64_t> concluded{0};  // meetings whose clocks are set
  std::vector<double> final_clocks;  // each VP's clock after the last meeting concluded
  std::vector<double> next_clocks;   // the concluder's scratch
  std::vector<const void*> sizes;    // its Port::Uneven::sizes for every VP (RoundsPlayer::play)
  RoundsPlayer player;
  std::vector<int> vps;     // a group's: member r is VP vps[r] (empty: the whole machine's)
  std::uint64_t group = 0;  // a group's GroupInfo::key
};

// The traffic on one directed link. A VP counts its own sends to a neighbour in the `own` pair,
// which only it writes (a plain load and store, no locked instruction that would wait for the
// message's own stores to drain); a routed message is counted on every link of its route by its
// sender, in the `routed` pair, which several VPs may add to.
struct alignas(32) LinkCounter {
  std::atomic<std::uint64_t> own_messages{0};
  std::atomic<std::uint64_t> own_bytes{0};
  std::atomic<std::uint64_t> routed_messages{0};
  std::atomic<std::uint64_t> routed_bytes{0};
  [[nodiscard]] std::uint64_t messages() const noexcept {
    return own_messages.load(std::memory_order_relaxed) +
           routed_messages.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return own_bytes.load(std::memory_order_relaxed) + routed_bytes.load(std::memory_order_relaxed);
  }
  void clear() noexcept {
    for (auto* c : {&own_messages, &own_bytes, &routed_messages, &routed_bytes})
      c->store(0, std::memory_order_relaxed);
  }
};
// Two counters to a cache line, each VP's row a whole number of lines: a VP counting its
// sends never shares a line with another VP's row.
inline constexpr std::size_t kCountersPerLine = 2;
struct alignas(64) LinkCounterLine {
  LinkCounter counters[kCountersPerLine];
};

// The marks of the routed messages' straight runs on a grid machine (Fabric::count_straight_run):
// at the link where a run begins and after the link where it ends, so that a route of any length
// costs a sender a few additions; Fabric::collect sums them along each line.
struct RunMark {
  std::atomic<std::uint64_t> messages{0};
  std::atomic<std::uint64_t> bytes{0};
  void add(std::uint64_t m, std::uint64_t b) noexcept {
    messages.fetch_add(m, std::memory_order_relaxed);
    bytes.fetch_add(b, std::memory_order_relaxed);
  }
};

using ChannelRow = std::vector<std::atomic<Link*>>;

class Fabric;
class Port;

// The VPs of other processes (mpi/): a Fabric whose machine spans several processes runs its own
// VPs [first, last) as threads and reaches the others through a Remote, which carries their
// messages in and out of this process's channels: a message to a VP of another process is queued
// on the channel to it as any other, and the Remote takes it from there; one from another process
// is put on the channel from its sender by the Remote, the channel's only producer.
// (HYPERCOMM_INTERNAL: exported from a shared libhypercomm for hypercomm::mpi.)
class HYPERCOMM_INTERNAL Remote {
 public:
  virtual ~Remote() = default;
  // A VP of this process queued a message for a VP of another process, or finished.
  virtual void outgoing() noexcept = 0;
  // VP `vp` of this process waits for a message from VP `src` of another process: move what can
  // be moved now, if the Remote lets the VPs do that (it returns at once otherwise, or when
  // another thread is moving messages).
  virtual void progress(int /*vp*/, int /*src*/) noexcept {}
  // A VP of this process goes to sleep waiting for a message from a VP of another process: from
  // now on someone else must look for it.
  virtual void sleeping() noexcept {}
  // VP `vp` of this process no longer waits for a message from VP `src` of another process (it
  // is here, or the wait failed): a post it offered there is withdrawn, or, where a sender has
  // taken it, completed (Link::own_post).
  virtual void withdraw_post(int /*vp*/, int /*src*/) noexcept {}
  // VP src sends a message to VP dst of another process itself, straight from its buffer, after
  // what it queued on `channel` before: returns when the buffer may be used again, true; false
  // when the Remote takes it only queued (the VP queues it and notifies dst).
  virtual bool send(int /*src*/, int /*dst*/, Link& /*channel*/, const Envelope& /*envelope*/,
                    std::span<const std::byte> /*payload*/) {
    return false;
  }
  // Called by Fabric::run before it starts the VPs, which may pass (Remote::progress) at once:
  // the thread that calls serve after it shares a core with them where the process has one
  // (mpirun --bind-to core), and got it back only when they slept (2 ms into a run).
  virtual void prepare(Fabric& /*fabric*/) {}
  // Runs on the thread that called Fabric::run while the VPs run, in place of the local
  // watchdog: moves messages, finished VPs, aborts and the deadlock watch between the processes.
  // Returns when every VP of every process has finished and every message has arrived.
  virtual void serve(Fabric& fabric) = 0;
  // Every process's part of the run, once it is over, as one Report on every process: every
  // process takes part, failed or not; rethrows this process's error, else throws the error of
  // another process's part (`problem`: a leftover message, or empty).
  virtual Report combine(Report local, std::exception_ptr error, const std::string& problem) = 0;
};

// Which VPs of the machine run in this process, and what reaches the others.
struct Placement {
  int first = 0;
  int last = -1;  // -1: every VP
  Remote* remote = nullptr;
  // Other processes on this node: how many threads they and this one run there (VPs and
  // communication threads), and where this process's VPs start among the node's VPs, so that
  // the processes of one node pin their VPs to different cores and wait as VPs that share them.
  int node_threads = 0;
  int node_offset = 0;
  int node_cpus = 0;  // the CPUs the node's processes may run on, all together (0: this one's)
  // Whether the thread that serves the Remote is busy while the VPs run (it moves every message),
  // so that it counts as one more thread on this process's cores; not when the VPs move their own
  // messages (Remote::progress) and it only naps between looks.
  bool busy_server = true;
  // The cores automatic takes the VPs to share (Fabric::shared_core_count), which every process
  // must take alike: agreed by the processes (-1: this process's own, shared_core_count).
  int shared_cores = -1;
  // The VPs of the node's processes, all together (0: this process's alone).
  int node_vps = 0;
};

class HYPERCOMM_INTERNAL Fabric {
 public:
  Fabric(Topology topology, Options options, Placement placement = {});
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  Report run(const std::function<void(Proc&)>& body);

  [[nodiscard]] const Topology& topology() const noexcept { return topology_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  // The VPs this process runs, [first_vp, last_vp); all of them unless distributed.
  [[nodiscard]] int first_vp() const noexcept { return first_; }
  [[nodiscard]] int last_vp() const noexcept { return last_; }
  [[nodiscard]] bool local(int vp) const noexcept { return vp >= first_ && vp < last_; }
  // The machine spans several processes (mpi/): meetings are off, and the run is served by the
  // Remote.
  [[nodiscard]] bool distributed() const noexcept { return remote_ != nullptr; }
  [[nodiscard]] Remote* remote() const noexcept { return remote_; }

  // The channel src -> dst, created on first use.
  // The channel src -> dst if a message has ever needed it, else null (nothing to read there).
  [[nodiscard]] Link* existing_channel(int src, int dst) const noexcept {
    const ChannelRow* row = rows_[static_cast<std::size_t>(src)].load(std::memory_order_acquire);
    return row == nullptr ? nullptr
                          : (*row)[static_cast<std::size_t>(dst)].load(std::memory_order_acquire);
  }
  [[nodiscard]] Link& channel(int src, int dst) {
    if (Link* c = existing_channel(src, dst)) return *c;
    return create_channel(src, dst);
  }
  [[nodiscard]] VpState& state(int vp) noexcept { return states_[static_cast<std::size_t>(vp)]; }
  [[nodiscard]] const VpState& state(int vp) const noexcept {
    return states_[static_cast<std::size_t>(vp)];
  }
  [[nodiscard]] std::span<const VpState> states() const noexcept {
    return {states_.get(), static_cast<std::size_t>(size_)};
  }
  [[nodiscard]] bool aborted() const noexcept {
    return (attention_.load(std::memory_order_acquire) & kAborted) != 0;
  }
  // Nonzero when a send or receive must look closer: the run is aborted (kAborted), or a test's
  // fault hook watches some VP's messages (kWatching each; runtime/src/faults.hpp).
  [[nodiscard]] std::uint32_t attention() const noexcept {
    return attention_.load(std::memory_order_acquire);
  }
  static constexpr std::uint32_t kAborted = 1;
  static constexpr std::uint32_t kWatching = 2;
  void watch_messages(bool on) noexcept {
    if (on)
      attention_.fetch_add(kWatching, std::memory_order_seq_cst);
    else
      attention_.fetch_sub(kWatching, std::memory_order_seq_cst);
  }
  // Every VP's wait, for Deadlock and CollectiveMismatch reports: "VP 1 waits in recv for VP 0,
  // which has already finished; VP 2 ...".
  [[nodiscard]] std::string describe_waits() const;
  // A VP that found the run stuck (its peer finished): waits until every unfinished VP is
  // blocked too, at most a short while, so that describe_waits shows the whole picture; false
  // when the run was aborted meanwhile.
  [[nodiscard]] bool settle() const;
  [[nodiscard]] Meeting& meeting() noexcept { return meeting_; }
  // The meeting of group g's members (made by the first member to ask, for this run; a VP keeps
  // it in its GroupInfo).
  [[nodiscard]] Meeting& group_meeting(const GroupInfo& g);
  // Wakes the sleepers of every meeting and chain (an abort, a finishing VP).
  void ring_every_bell() noexcept;
  // Where the VPs of a meeting or chain of `group` (nullptr: the whole machine) sleep: its
  // Meeting's signal and sleepers. One word for every group made every release wake every
  // sleeper of every group (256 subcube meetings of 4096 VPs: 1-2 s a run instead of 0.1).
  // An abort and a finishing VP ring every bell (Fabric::fail, Fabric::finish).
  [[nodiscard]] Meeting& bell(const GroupInfo* group) {
    return group == nullptr ? meeting_ : group_meeting(*group);
  }
  // The pipelined meetings' chain of group g's members (as group_meeting).
  [[nodiscard]] PipelinedMeeting& group_chain(const GroupInfo& g);
  // Group g's chain if a member has made it, else null (makes none: Port::passed_by).
  [[nodiscard]] const PipelinedMeeting* find_group_chain(const GroupInfo& g);
  [[nodiscard]] PipelinedMeeting& pipelined_meeting() noexcept { return pipelined_meeting_; }
  // A VP that has finished this run, or -1.
  [[nodiscard]] int finished_vp() const noexcept;

  // After publishing a message for vp: wake it if it sleeps (a VP of another process: tell the
  // Remote).
  void notify(int vp) noexcept;
  // VP vp waits for a message from src: when src runs in another process, let the Remote move
  // messages (Remote::progress); true when it did (the message may be here now).
  bool progress_from(int vp, int src) noexcept {
    if (remote_ == nullptr || local(src)) return false;
    remote_->progress(vp, src);
    return true;
  }
  void sleeping_on(int src) noexcept {
    if (remote_ != nullptr && !local(src)) remote_->sleeping();
  }
  void withdraw_post(int vp, int src) noexcept {
    if (remote_ != nullptr && !local(src)) remote_->withdraw_post(vp, src);
  }

  // ---- for the Remote (distributed runs)
  // The first error wins; releases every VP of this process. `vp`: the VP that threw it, or -1
  // for an error from outside the VPs (another process's abort, the deadlock watch).
  void fail(std::exception_ptr error, int vp) noexcept;
  // The VP whose error aborted this run here, or -1 (none, or it came from outside the VPs).
  [[nodiscard]] int failed_vp() const noexcept {
    return failed_vp_.load(std::memory_order_acquire);
  }
  // The error this run failed with here (after aborted()), or null.
  [[nodiscard]] std::exception_ptr error() {
    const std::lock_guard lock(error_mutex_);
    return error_;
  }
  // VP vp of another process has finished: whoever here waits for it finds out.
  void remote_finished(int vp) noexcept;
  // The VPs of this process that have not finished.
  [[nodiscard]] std::uint32_t remaining() const noexcept {
    return remaining_.load(std::memory_order_acquire);
  }
  // Grows whenever a channel is created (the Remote then looks at the new ones).
  [[nodiscard]] std::uint64_t channel_epoch() const noexcept {
    return channel_epoch_.load(std::memory_order_acquire);
  }
  // Calls f(src, dst, channel) for each channel created after the first `seen` (in the order of
  // creation) and returns how many there are now: the Remote's way to its channels to other
  // processes, each looked at once however many VPs and channels the machine has.
  template <class F>
  std::size_t channels_since(std::size_t seen, F&& f) {
    const std::lock_guard lock(create_mutex_);
    for (std::size_t i = seen; i < channels_.size(); ++i)
      f(channels_[i].src, channels_[i].dst, *channels_[i].channel);
    return channels_.size();
  }
  // Whether every unfinished VP of this process waits (none runs) and has looked at what it
  // waits for since the last message was taken or a VP was seen running (VpState::looks);
  // `progress` sums their received messages; `in_collectives`: every waiting one waits inside
  // a collective. One caller (the watchdog, or the MPI server thread), which owns look_*.
  [[nodiscard]] bool stalled(std::uint64_t& progress, bool& in_collectives);
  // The local link counters, for the Report of the whole machine: (from, slot) -> counts.
  [[nodiscard]] const LinkCounter& link_counter(int from, int slot) const noexcept {
    const std::size_t i = link_index(from, slot);
    return links_[i / kCountersPerLine].counters[i % kCountersPerLine];
  }
  [[nodiscard]] LinkCounter& link_counter(int from, int slot) noexcept {
    const std::size_t i = link_index(from, slot);
    return links_[i / kCountersPerLine].counters[i % kCountersPerLine];
  }
  [[nodiscard]] std::size_t link_index(int from, int slot) const noexcept {
    return static_cast<std::size_t>(from) * link_stride_ + static_cast<std::size_t>(slot);
  }
  // `messages` messages of `bytes` bytes in all on the link from -> to (a hop of a routed
  // message; any VP may call it).
  void count_link(int from, int to, std::uint64_t bytes, std::uint64_t messages = 1) noexcept {
    count_routed_link(from, topology_.link_slot(from, to), bytes, messages);
  }
  // The same for the link in `slot` of VP from (Topology::link_slot).
  void count_routed_link(int from, int slot, std::uint64_t bytes,
                         std::uint64_t messages = 1) noexcept {
    LinkCounter& c = link_counter(from, slot);
    c.routed_messages.fetch_add(messages, std::memory_order_relaxed);
    c.routed_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  // `messages` messages of `bytes` bytes in all on every link of `run` (a ring, linear array or
  // mesh): marks where the run begins and after where it ends, along its line of the grid
  // (a difference array, unsigned arithmetic modulo 2^64; a run that wraps round a torus line
  // is the two pieces either side of position 0). Any VP may call it.
  void count_straight_run(const detail::StraightRun& run, std::uint64_t bytes,
                          std::uint64_t messages) noexcept {
    const bool along_row = run.slot < 2;  // slots 0, 1: the column changes
    const int extent = along_row ? topology_.cols() : topology_.rows();
    const int position = along_row ? topology_.col_of(run.from) : topology_.row_of(run.from);
    int first = run.slot % 2 == 0 ? position : position - run.length + 1;  // lowest position
    if (first < 0) first += extent;
    const int line_start = along_row ? run.from - position : topology_.col_of(run.from);
    const int step = along_row ? 1 : topology_.cols();  // from one position of the line to the next
    const auto mark = [&](int at) noexcept -> RunMark& {
      return run_marks_[link_index(line_start + at * step, run.slot)];
    };
    mark(first).add(messages, bytes);
    if (const int end = first + run.length; end < extent) {
      mark(end).add(0 - messages, 0 - bytes);
    } else if (end > extent) {
      mark(0).add(messages, bytes);
      mark(end - extent).add(0 - messages, 0 - bytes);
    }
  }
  // The calling VP `from`'s own send on its link in slot `slot` (Topology::link_slot); only VP
  // `from` may call it.
  void count_own_link(int from, int slot, std::uint64_t bytes,
                      std::uint64_t messages = 1) noexcept {
    LinkCounter& c = link_counter(from, slot);
    c.own_messages.store(c.own_messages.load(std::memory_order_relaxed) + messages,
                         std::memory_order_relaxed);
    c.own_bytes.store(c.own_bytes.load(std::memory_order_relaxed) + bytes,
                      std::memory_order_relaxed);
  }
  [[nodiscard]] double seconds_since_start() const noexcept;

  // How long a waiting VP spins, then how long it keeps yielding its core, before it sleeps.
  [[nodiscard]] std::chrono::nanoseconds spin_time() const noexcept { return spin_time_; }
  // The same for a VP waiting for src: where VPs share cores and src is a VP of another process
  // pinned to another core of this node, it may be running now, its message a cache-line
  // transfer away: spin about what a switch there and back costs before yielding
  // (cross_core_spin_).
  [[nodiscard]] std::chrono::nanoseconds spin_time(int vp, int src) const noexcept {
    if (spin_time_.count() > 0 || local(src) || cross_core_spin_.count() == 0) return spin_time_;
    const int mine = vp_cpus_[static_cast<std::size_t>(vp)];
    const int theirs = vp_cpus_[static_cast<std::size_t>(src)];
    return mine >= 0 && theirs >= 0 && mine != theirs ? cross_core_spin_ : spin_time_;
  }
  static constexpr std::chrono::nanoseconds kCrossCoreSpin{4000};
  // How long a VP waits for the next run, and the thread that called run for the run's end,
  // before sleeping (between_runs_spin_).
  static constexpr std::chrono::nanoseconds kBetweenRunsSpin{50000};
  static constexpr std::size_t kMostYieldingPerCore = 128;
  // Whether the node's VPs (of every process there) are more than twice its cores: each core
  // then runs three or more in turn, and a VP that waits for one of another process neither
  // spins (spin_time) nor looks at more than the ring its message comes on (MpiRemote::progress).
  [[nodiscard]] bool node_crowded() const noexcept { return node_crowded_; }
  [[nodiscard]] static constexpr bool crowded(std::size_t node_vps,
                                              std::size_t node_cpus) noexcept {
    return node_vps > 2 * node_cpus;
  }
  // The CPU each VP is pinned to, -1 where unknown or on another node: this process's own, or,
  // over several processes, every VP's (set by the Remote's owner before the first run).
  [[nodiscard]] std::span<const int> vp_cpus() const noexcept { return vp_cpus_; }
  void set_vp_cpus(std::vector<int> cpus) noexcept { vp_cpus_ = std::move(cpus); }
  [[nodiscard]] std::chrono::nanoseconds yield_time() const noexcept { return yield_time_; }
  // How long a sleeping VP waits before it looks again unwoken: in a collective (Waiter::kRecheck,
  // scaled) or outside one (kIdleRecheck, scaled); see Fabric's constructor.
  [[nodiscard]] std::chrono::nanoseconds recheck_time(bool in_collective) const noexcept {
    return in_collective ? recheck_time_ : idle_recheck_time_;
  }
  // A sender of this many bytes or more waits a while for its receiver to post (channel.hpp),
  // in an exchange or not.
  [[nodiscard]] std::size_t rendezvous_bytes(bool exchange) const noexcept {
    return exchange ? rendezvous_bytes_ : one_way_rendezvous_bytes_;
  }
  // A send alone of this many bytes or more waits a while for its receiver where that has
  // kMostQueuedSlots of its messages still to take (channel.hpp; none such: the largest size_t).
  [[nodiscard]] std::size_t bounded_queue_bytes() const noexcept { return bounded_queue_bytes_; }
  // The same from this many bytes where the receiver keeps up (Link::receiver_keeps_up), in an
  // exchange (the sender has posted its own receive from the receiver) or not.
  [[nodiscard]] std::size_t keeping_up_rendezvous_bytes(bool exchange) const noexcept {
    return oversubscribed() ? rendezvous_bytes_
           : exchange       ? kKeepingUpRendezvousBytes
                            : one_way_keeping_up_bytes_;
  }
  // A send alone of this many bytes or more is handed straight to its receiver where that has
  // posted (channel.hpp's kCopiedHandOverBytes; VPs that share cores: kHandOverBytes).
  [[nodiscard]] std::size_t hand_over_bytes() const noexcept {
    return oversubscribed() ? kHandOverBytes : kCopiedHandOverBytes;
  }
  // A sender that streams (Port::post_send) to a receiver that keeps up waits for its post from
  // this many bytes, below keeping_up_rendezvous_bytes(false) (channel.hpp).
  [[nodiscard]] std::size_t streaming_wait_bytes() const noexcept { return streaming_wait_bytes_; }
  [[nodiscard]] bool oversubscribed() const noexcept { return core_share_ > 0; }
  // The cores the VPs share when they outnumber them, else 0: automatic then weighs the work of
  // all VPs over those cores (select.cpp). What one process's CPUs make of the topology
  // (hypercomm::shared_core_count), so that a program chooses alike in one process and over
  // several, whose processes agree on it (Placement::shared_cores).
  [[nodiscard]] int shared_core_count() const noexcept { return shared_core_count_; }
  // The sleep/wake handshake's fences (futex.hpp): read once, so that both halves agree.
  [[nodiscard]] bool asymmetric_fences() const noexcept { return asymmetric_fences_; }
  // Oversubscribed: whether another VP pinned to vp's core can use it now (it is not blocked,
  // or a message came for it), so that a waiting vp should yield rather than spin. Without
  // pinning, or with many VPs per core, always true.
  [[nodiscard]] bool core_wanted(int vp) const noexcept;

 private:
  Link& create_channel(int src, int dst);
  void vp_main(int id);
  void mark_finished(int vp) noexcept;  // status kFinished; wakes this process's waiters for it
  void finish(int id) noexcept;
  void watch(std::chrono::steady_clock::time_point start);
  [[nodiscard]] bool all_waiting_in_collectives() const;
  // This process's VPs' part of the Report; `complete` adds what needs the whole machine.
  [[nodiscard]] Report collect(double wall_seconds) const;
  [[nodiscard]] Report complete(Report r) const;

  Topology topology_;
  Options options_;
  int size_;
  int first_ = 0;  // this process's VPs: [first_, last_)
  int last_ = 0;
  Remote* remote_ = nullptr;
  Transport transport_;  // how messages move between this process's VPs (transport.hpp)
  std::size_t channel_capacity_;
  std::chrono::nanoseconds spin_time_;
  // kCrossCoreSpin where a core of the node holds at most two of its VPs, else none: with k VPs
  // a core, the VP on the other core runs about 1/k of the time, and from three a core the spin
  // costs more than it saves (one VP a process on the 2 cores, all-reduce and all-gather of 8 B,
  // 2026-11-28: over 4 processes 0.87-1.10x Open MPI's time with the spin, 1.59-1.67x without;
  // over 6 alike; over 8 and 16, 2.10-3.48x with it, 1.29-2.22x without, two rounds each).
  std::chrono::nanoseconds cross_core_spin_{0};
  bool node_crowded_ = false;
  std::chrono::nanoseconds yield_time_;
  // Where this process holds all the machine's VPs, a VP waits this long for the next run, and
  // the thread that calls run for the run's end, before sleeping, so that runs in a loop cost no
  // futex wake-ups: spinning where a core is left for that thread (this process's VPs fewer
  // than its cores), yielding where none is (between_runs_yield_).
  std::chrono::nanoseconds between_runs_spin_{0};
  bool between_runs_yield_ = false;
  void between_runs_pause() const noexcept {
    if (between_runs_yield_)
      std::this_thread::yield();
    else
      cpu_relax();
  }
  std::chrono::nanoseconds recheck_time_;       // recheck_time(true)
  std::chrono::nanoseconds idle_recheck_time_;  // recheck_time(false)
  // When a finishing VP may next wake the meetings' sleepers (Fabric::finish; steady_clock ticks).
  std::atomic<std::int64_t> finish_wake_due_{0};
  std::size_t rendezvous_bytes_;
  std::size_t one_way_rendezvous_bytes_;  // a send alone's (not an exchange's)
  std::size_t bounded_queue_bytes_;       // bounded_queue_bytes()
  // A send alone to a receiver that keeps up waits from this many bytes (channel.hpp).
  std::size_t one_way_keeping_up_bytes_;
  std::size_t streaming_wait_bytes_ = ~std::size_t{0};  // streaming_wait_bytes()
  std::size_t shared_copy_bytes_;  // the channels' (channel.hpp), chosen with the wait policy
  int core_share_ = 0;             // oversubscribed: VPs per core (else 0)
  int shared_core_count_ = 0;      // shared_core_count()
  const bool asymmetric_fences_ = ::hypercomm::detail::asymmetric_fences();
  int core_count_ = 1;         // cores the VPs are pinned to, round robin
  bool shared_cores_ = false;  // other processes' threads run on this process's cores
  std::vector<int> vp_cpus_;   // vp_cpus()

  std::unique_ptr<VpState[]> states_;
  // stalled()'s memory: the progress its look snapshot was taken at (UINT64_MAX: none), each
  // local VP's looks then, and whether every blocked VP has looked again since.
  std::uint64_t look_progress_ = UINT64_MAX;
  std::vector<std::uint32_t> looks_then_;
  bool all_looked_ = false;
  Meeting meeting_;
  // This run's group meetings (group_meeting), by group id and members.
  std::mutex group_meetings_mutex_;
  std::vector<std::unique_ptr<Meeting>> group_meetings_;
  std::vector<std::unique_ptr<PipelinedMeeting>> group_chains_;
  std::size_t group_chain_bytes_ = 0;         // their slots' storage
  PipelinedMeeting pipelined_meeting_;        // allocated when oversubscribed with meetings on
  std::vector<std::unique_ptr<Port>> ports_;  // one per VP, each with its user's Proc

  // Channel table (one Link per directed pair, of the machine's transport): rows_[src] -> p
  // entries, allocated on first use of src; entries are set once under create_mutex_ and read
  // without a lock.
  std::unique_ptr<std::atomic<ChannelRow*>[]> rows_;
  std::mutex create_mutex_;
  std::vector<std::unique_ptr<ChannelRow>> row_storage_;
  struct OwnedChannel {
    int src;
    int dst;
    std::unique_ptr<Link> channel;
  };
  std::vector<OwnedChannel> channels_;
  std::atomic<std::uint64_t> channel_epoch_{0};

  std::size_t link_stride_;
  std::unique_ptr<LinkCounterLine[]> links_;  // link_stride_ counters per VP
  std::unique_ptr<RunMark[]> run_marks_;      // a grid machine's: link_stride_ per VP

  // Run control.
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> generation_sleepers_{0};  // VPs asleep on generation_ (vp_main)
  std::atomic<bool> in_run_{false};  // a run is under way: run() from elsewhere throws
  std::atomic<std::uint32_t> remaining_{0};
  std::atomic<bool> watcher_sleeps_{false};  // the thread that called run sleeps on remaining_
  std::atomic<bool> shutdown_{false};
  std::atomic<std::uint32_t> attention_{0};  // kAborted | kWatching * (VPs watched)
  const std::function<void(Proc&)>* body_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<int> failed_vp_{-1};
  std::chrono::steady_clock::time_point start_;
  std::vector<std::thread> threads_;
};

// What a header says, for mismatch reports: the collectives' describer where installed
// (set_tag_describer), else "collective kind 3 (call 7 on mesh:4x4, root/shift 0, 8 bytes,
// algorithm 1)".
[[nodiscard]] std::string describe_tag(const MessageTag& tag, const Topology& machine);
// The same, for the header that VP `sender` made: a subcube is named as that VP names it
// ("subcube 0b0101 of VP 3" for VP 3's header, whichever VP reports it).
[[nodiscard]] std::string describe_tag(const MessageTag& tag, const Topology& machine, int sender);

}  // namespace hypercomm::detail
