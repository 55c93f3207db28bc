// Where the VPs meet when they share cores (Port::meet, meet_prefix, meet_rooted): the symmetric
// Meeting, the PipelinedMeeting of the prefix and rooted calls, and the RoundsPlayer that plays a
// meeting's rounds on the model clocks as its messages would have.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>
#include <span>
#include <vector>

#include "channel.hpp"
#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm::detail {

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
  // a VP that left unfinished took its step back, meeting_prefix.cpp's withdraw_from_chain; kReady:
  // not come yet, but a prefix's steps below it are done, and it takes the chain on when it comes).
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
    // (meeting_rooted.cpp) once the root has checked every seat; else 0.
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
  // A new run (an aborted one may leave a slot half used): the slots of the first `taken`
  // meetings, the only ones a run that took seats in that many can have written (a run of a few
  // calls on 64 VPs rewrote 512 slots of 64 seats, a tenth of an empty run's time).
  void reset(std::uint64_t taken = UINT64_MAX) noexcept;
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

}  // namespace hypercomm::detail
