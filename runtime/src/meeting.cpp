// Port::meet: a small symmetric collective as one meeting of every VP in shared memory, for
// when VPs outnumber cores (proc.hpp says when and why); a group's collective, as one meeting of
// its members, seated by rank, apart from the other groups' (Fabric::group_meeting).
//
// Each VP writes its seat (model clock, message header, input), then counts itself in. The last
// to arrive does the collective's work for all: it checks that the headers agree, plays the
// rounds on the model clocks exactly as the messages would have advanced them, folds the inputs
// into the shared result and bumps the release generation. The others wait for that bump as a
// VP waits for a message: they yield their core to the VPs on it that can run, then sleep on a
// futex that the release, an abort or a finishing VP wakes. A meeting costs each VP about one
// switch; log p rounds of messages cost it one or more per round.
#include <sched.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <exception>
#include <hypercomm/errors.hpp>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm {

using detail::Port;

namespace {

std::string vp_name(int id) { return "VP " + std::to_string(id); }

// A VP in a meeting, as the watchdog and its peers see it, until it leaves. `sequence`: the
// whole machine's call it meets in, which its peers' sends and receives check
// (Port::check_not_meeting; a full fence, against theirs); 0: none published (a group's call,
// a wait for a clock).
struct InMeeting {
  detail::VpState& state;
  bool published;
  // members: a group meeting's machine VPs, which the watchdog's report looks through for those
  // not in it (null: the whole machine's, or none).
  InMeeting(detail::VpState& me, const char* op, std::uint32_t sequence,
            const std::vector<int>* members)
      : state(me), published(sequence != 0) {
    me.waiting_for.store(detail::kWaitsForAll, std::memory_order_relaxed);
    me.meeting_members.store(members, std::memory_order_relaxed);
    me.operation.store(op, std::memory_order_relaxed);
    me.status.store(detail::kBlocked, std::memory_order_release);
    if (published) me.meeting.store(sequence, std::memory_order_seq_cst);
  }
  InMeeting(const InMeeting&) = delete;
  InMeeting& operator=(const InMeeting&) = delete;
  ~InMeeting() {
    if (published) state.meeting.store(0, std::memory_order_release);
    state.status.store(detail::kRunning, std::memory_order_relaxed);
    state.meeting_members.store(nullptr, std::memory_order_relaxed);
  }
};

// PipelinedMeeting::Slot::root of a rooted meeting whose root, taking every VP's input, checked
// every seat (else 0, or the VP id + 1 of a root that claimed the slot): no VP id + 1.
constexpr std::uint32_t kRootCheckedAll = std::uint32_t{1} << 31;

// Whether prefix meeting `generation` has concluded: every VP came, every clock is set.
bool concluded(const detail::PipelinedMeeting& chain, std::uint64_t generation) noexcept {
  return chain.concluded.load(std::memory_order_acquire) > generation;
}

// A VP leaving a prefix meeting unfinished (an abort, a disagreement) takes its step back, so
// that no VP running the chain writes its result into an `out` that is gone; a step being run
// now ends (done, or given back on the runner's error: run_prefix_chain) without waiting for
// anything, so the VP waits for it.
void withdraw_from_chain(detail::PipelinedMeeting::Seat& seat, std::uint64_t base) noexcept {
  using Chain = detail::PipelinedMeeting;
  for (;;) {
    std::uint64_t mark = base + Chain::kCame;
    if (seat.mark.compare_exchange_strong(mark, base, std::memory_order_acq_rel) ||
        mark != base + Chain::kClaimed)
      return;  // withdrawn (no runner can claim it now), or its step is done
    detail::Waiter::give_core();
  }
}

// After a prefix step: claims the next VP's step (true) when that VP has come (its mark
// `next`, in the meeting whose marks start at `base`), else marks it ready, for the VP to take the
// chain on when it comes (false); a VP coming meanwhile makes the compare-and-swap fail and see it.
// A VP that came and withdrew (mark: base) is left alone (false).
bool claim_next_step(std::atomic<std::uint64_t>& next, std::uint64_t base) noexcept {
  using Chain = detail::PipelinedMeeting;
  std::uint64_t mark = next.load(std::memory_order_acquire);
  for (;;) {
    const bool come = mark == base + Chain::kCame;
    if (!come && mark / Chain::kStates == base / Chain::kStates) return false;  // withdrawn
    if (next.compare_exchange_weak(mark, base + (come ? Chain::kClaimed : Chain::kReady),
                                   std::memory_order_acq_rel, std::memory_order_acquire))
      return come;
  }
}

// Asks for the lines a VP's chain writes first in its next prefix meeting (meet_prefix): the next
// VP's mark, which it claims, and its own step's place in the slot's partial folds (PrefixStep:
// the one block the step writes). Called back to back, they were last written or read on the
// other core (VP i and i + 1 sit on different cores, and the steps' writers change from meeting to
// meeting); asked for one meeting ahead, this call's work hides the trip.
void prefetch_next_chain(const detail::PipelinedMeeting::Slot& next,
                         const detail::PipelinedMeeting::Slot& next_data, std::size_t me, int p,
                         std::size_t bytes) noexcept {
  if (me + 1 < static_cast<std::size_t>(p))
    detail::prefetch_for_writing(&next.seats[me + 1].mark, sizeof(std::uint64_t));
  detail::prefetch_for_writing(next_data.folds_of(bytes) + me * next.inputs_of(bytes).stride,
                               std::max<std::size_t>(bytes, 1));
}

// Called right after the store that ends a wait (a mark, a slot's generation), often a release
// store: the fence keeps that store from sitting in the store buffer while the sleepers count is
// read, or a waiter that has just counted itself (wait_in_meeting) could find the old value and
// sleep unwoken until its recheck. Both sides full barriers: the waker sees the sleeper or the
// sleeper sees the store.
void wake_sleepers(detail::Meeting& meeting) noexcept {
  detail::store_load_fence();
  if (meeting.sleepers.load(std::memory_order_seq_cst) == 0) return;
  meeting.signal.fetch_add(1, std::memory_order_seq_cst);
  detail::futex_wake(meeting.signal, INT_MAX);
}

}  // namespace

namespace detail {

void RoundsPlayer::play(const Port::Rounds& rounds, const CostModel& model,
                        const Topology& topology, std::span<double> clocks, std::span<double> next,
                        std::span<const void* const> inputs, std::span<const int> vps) {
  const int p = static_cast<int>(clocks.size());
  const auto vp = [&](int id) { return vps.empty() ? id : vps[static_cast<std::size_t>(id)]; };
  const auto same = [&](const Plan& plan) {
    return plan.to == rounds.to && plan.from == rounds.from && plan.count == rounds.count &&
           plan.root == rounds.root && plan.ring_root == rounds.ring_root && plan.p == p;
  };
  auto plan = std::find_if(plans_.begin(), plans_.end(), same);
  if (plan == plans_.end()) {  // a new pattern: its senders, receivers and hops, once
    plan = plans_.begin() + static_cast<std::ptrdiff_t>(next_);
    next_ = (next_ + 1) % kPlans;
    *plan = Plan{rounds.to,        rounds.from, rounds.count,          rounds.root,
                 rounds.ring_root, p,           std::move(plan->steps)};
    plan->steps.resize(static_cast<std::size_t>(rounds.count) * static_cast<std::size_t>(p));
    for (int k = 0; k < rounds.count; ++k)
      for (int j = 0; j < p; ++j) {
        Step& step = plan->steps[static_cast<std::size_t>(k * p + j)];
        step.sends = rounds.dest(j, k, p) >= 0;
        step.source = rounds.source(j, k, p);
        step.hops = step.source < 0 ? 0
                    : topology.link_slot(vp(step.source), vp(j)) >= 0
                        ? 1
                        : topology.distance(vp(step.source), vp(j));
      }
  }
  // Port::sendrecv_bytes's arithmetic, term for term (a send alone: send_bytes'; a receive
  // alone: recv_bytes'), so that the clocks equal those of the messages bit for bit.
  const Step* step = plan->steps.data();
  for (int k = 0; k < rounds.count; ++k) {
    const auto uniform = static_cast<double>(rounds.bytes_in(k, p));
    // What VP j sends in round k: the round's bytes, or its own (Rounds::sent_bytes).
    const auto m = [&](int j) {
      return rounds.sent_bytes == nullptr ? uniform
                                          : static_cast<double>(rounds.sent_bytes(
                                                inputs[static_cast<std::size_t>(j)], j, k, p));
    };
    for (int j = 0; j < p; ++j, ++step) {
      const double clock = clocks[static_cast<std::size_t>(j)];
      double after = step->sends ? model.sent(clock, m(j)) : clock;
      if (step->source >= 0) {
        const double sent = clocks[static_cast<std::size_t>(step->source)];
        after =
            std::max(after, model.arrival(sent, m(step->source), model.th == 0 ? 0 : step->hops));
      }
      next[static_cast<std::size_t>(j)] = after;
    }
    std::copy(next.begin(), next.begin() + p, clocks.begin());
  }
}

void PipelinedMeeting::allocate(int p, std::uint32_t most_slots, std::size_t wide_room,
                                std::size_t storage_room) {
  const auto seats_per_slot = static_cast<std::size_t>(p);
  const std::size_t stride = seats_per_slot * kBytes;  // one slot's inputs, folds, root input
  const auto slots_in = [&](std::size_t room) {
    std::uint32_t count = most_slots;
    while (count > 2 && count * 3 * stride > room) count /= 2;
    return count;
  };
  slot_count = slots_in(storage_room);
  input_lead = std::min(slot_count, slots_in(kStorage));
  // A wide call (more than a root's input of p * kBytes) has a room of its own, apart, so that
  // the slots' inputs, folds and root inputs, which the calls of up to 256 B a VP read, stay as
  // close together as they were (8 VPs on 2 cores, 8-128 B back to back, 8 rounds alternated:
  // the scatter took 1.09-1.20x the time with every root's input in the rooms).
  slot_room = std::max(stride, wide_room);
  slots = std::make_unique<Slot[]>(slot_count);
  // Past input_lead slots the calls of more than kSmallBytes a VP keep their data in input_lead
  // data slots (data_slot), with every wide room; the slots themselves hold what the calls of up
  // to kSmallBytes put outside their seats (a scan's folds, a scatter's blocks).
  const std::uint32_t data_count = input_lead < slot_count ? input_lead : 0;
  if (data_count != 0) data_slots = std::make_unique<Slot[]>(data_count);
  const std::size_t regions = std::size_t{slot_count} + data_count;
  storage = std::make_unique_for_overwrite<std::byte[]>(regions * 3 * stride);
  storage_bytes = regions * 3 * stride;
  const std::uint32_t wide_count = data_count != 0 ? data_count : slot_count;
  if (slot_room > stride) {
    wide_storage = std::make_unique_for_overwrite<std::byte[]>(wide_count * 2 * slot_room);
    storage_bytes += wide_count * 2 * slot_room;
  }
  const auto place = [&](Slot& slot, std::size_t region, bool wide) {
    slot.inputs = storage.get() + region * 3 * stride;
    slot.folds = slot.inputs + stride;
    slot.root_input = slot.folds + stride;
    slot.wide_room =
        wide ? wide_storage.get() + (region % wide_count) * 2 * slot_room : slot.root_input;
    slot.wide_inputs = wide ? slot.wide_room + slot_room : slot.inputs;
  };
  for (std::uint32_t s = 0; s < slot_count; ++s) {
    slots[s].seats = std::make_unique<Seat[]>(seats_per_slot);
    place(slots[s], s, slot_room > stride && data_count == 0);
  }
  for (std::uint32_t s = 0; s < data_count; ++s)
    place(data_slots[s], slot_count + s, slot_room > stride);
  final_clocks.resize(seats_per_slot);
  next_clocks.resize(seats_per_slot);
  sizes.resize(seats_per_slot);
  reset();
}

void PipelinedMeeting::reset() noexcept {
  const std::size_t p = final_clocks.size();
  for (std::uint32_t s = 0; s < slot_count; ++s) {
    Slot& slot = slots[s];
    slot.generation.store(s, std::memory_order_relaxed);
    slot.left.store(0, std::memory_order_relaxed);
    slot.root.store(0, std::memory_order_relaxed);
    slot.unchecked.store(0, std::memory_order_relaxed);
    slot.closed.store(0, std::memory_order_relaxed);
    slot.copied.store(0, std::memory_order_relaxed);
    for (std::size_t i = 0; i < p; ++i) slot.seats[i].mark.store(0, std::memory_order_relaxed);
  }
  concluded.store(0, std::memory_order_relaxed);
}

}  // namespace detail

double Port::clock() noexcept {
  // On an abort, or a mismatch found here, the clock it had: the VP's next operation, or the
  // end of its run, raises the error.
  if (pending_ != 0) try {
      settle_clock();
    } catch (...) {
    }
  // All ports: a send keeps its link, not the VP, busy; the VP's time counts it as the run's end
  // does (settle_ports), so that clock() and Report::clocks agree.
  double now = clock_;
  if (options().model.all_port)
    for (const double free : ports_) now = std::max(now, free);
  return now;
}

bool Port::meet(const MessageTag& tag, const Rounds& rounds, const void* input, Combine combine,
                const void* context, std::span<std::byte> out, Results results,
                std::size_t result_bytes, const detail::GroupInfo* group, Part part) {
  // A meeting plays the one-port rules (all ports send the messages), and is in one process's
  // memory (a machine over several processes sends its messages).
  if (!may_meet()) return false;
  if (pending_ != 0) settle_clock();
  const char* op = operation_name();
  if (fabric_->aborted())
    throw Aborted(vp_name(id_) + ": " + op + " abandoned: another VP failed or the run deadlocked");

  // A group's members meet in its own meeting, seated by rank; its calls are numbered apart from
  // the whole machine's, so the VP does not publish the call's number to VPs that wait for its
  // messages (wait_until, check_not_meeting).
  const MeetingPlace place =
      group == nullptr
          ? MeetingPlace{fabric_->meeting(), nullptr, id_, size_}
          : MeetingPlace{fabric_->group_meeting(*group), group, group->rank, group->size};
  detail::Meeting& meeting = place.meeting;
  detail::Meeting& bell = fabric_->bell(group);  // where its sleepers sleep
  detail::VpState& me = fabric_->state(id_);
  auto& seat = meeting.seats[static_cast<std::size_t>(place.rank)];
  seat.clock = clock_;
  seat.tag = tag;
  seat.operation = op;
  seat.input = input;
  seat.has_part = part != nullptr;
  const InMeeting in_meeting(me, op, group == nullptr ? tag.sequence : 0,
                             group == nullptr ? nullptr : &meeting.vps);

  const std::uint32_t generation = meeting.released.load(std::memory_order_acquire);
  const auto p = static_cast<std::uint32_t>(place.size);
  if (meeting.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == p) {
    me.status.store(detail::kRunning, std::memory_order_relaxed);  // the watchdog: it works
    meeting.arrived.store(0, std::memory_order_relaxed);
    // Every member came, but one may have left since on an error (an abort: another group's
    // member failed), its input gone with its frame: then nothing is read, and this VP waits
    // for the run's end (its wait throws Aborted, or what it finds). Both sides seq_cst: the
    // deserter sees this VP concluding and waits, or this VP sees the desertion.
    meeting.concluding.store(1, std::memory_order_seq_cst);
    if (meeting.deserted.load(std::memory_order_seq_cst) != 0) {
      meeting.concluding.store(0, std::memory_order_seq_cst);
      wait_in_meeting(
          &tag, [] { return false; }, [] { return false; }, group);
    }
    struct Concluding {
      std::atomic<std::uint32_t>& flag;
      ~Concluding() { flag.store(0, std::memory_order_seq_cst); }
    } concluding{meeting.concluding};
    conclude_meeting(place, rounds, combine, context,
                     result_bytes != 0 ? result_bytes : rounds.bytes, results);
    if (part != nullptr) meeting.parts_left.store(p, std::memory_order_relaxed);
    meeting.released.store(generation + 1, std::memory_order_seq_cst);
    bell.signal.fetch_add(1, std::memory_order_seq_cst);
    if (bell.sleepers.load(std::memory_order_seq_cst) != 0)
      detail::futex_wake(bell.signal, INT_MAX);
  } else {
    try {
      wait_in_meeting(
          &tag, [&] { return meeting.released.load(std::memory_order_acquire) != generation; },
          [] { return false; }, group);
    } catch (...) {
      // Leaving unreleased: the last arriver must not read this VP's input from here on.
      meeting.deserted.store(1, std::memory_order_seq_cst);
      while (meeting.concluding.load(std::memory_order_seq_cst) != 0) detail::Waiter::give_core();
      // Released all the same (the last arriver concluded before it could see the desertion):
      // the others' parts read and write through this VP's input (its out among them), and wait
      // for its part, so it does its part and waits for theirs before the error leaves.
      if (part != nullptr && meeting.released.load(std::memory_order_acquire) != generation) {
        try {
          do_part(place, tag, part, context);
        } catch (...) {  // (the abort again: the error that leaves is the first)
        }
      }
      throw;
    }
  }

  // Released: this VP's share of what the rounds would have done.
  clock_ = meeting.clocks[static_cast<std::size_t>(place.rank)];
  if (!out.empty()) {
    const std::size_t mine = results == Results::per_vp ? static_cast<std::size_t>(place.rank) : 0;
    std::memcpy(out.data(), meeting.result.data() + mine * out.size(), out.size());
  }
  tally_meeting(rounds, input, group);
  if (part != nullptr) do_part(place, tag, part, context);
  note_received();  // the watchdog's sign of progress
  return true;
}

void Port::do_part(const MeetingPlace& place, const MessageTag& tag, Part part,
                   const void* context) {
  detail::Meeting& meeting = place.meeting;
  detail::VpState& me = fabric_->state(id_);
  me.status.store(detail::kRunning, std::memory_order_relaxed);  // the watchdog: it works
  // A part must not throw; if one does all the same, its VP still waits for the others' (which
  // may write into its out) before the error leaves.
  std::exception_ptr failed;
  try {
    part(context,
         std::span<const void* const>(meeting.inputs).first(static_cast<std::size_t>(place.size)),
         place.rank);
  } catch (...) {
    failed = std::current_exception();
  }
  me.status.store(detail::kBlocked, std::memory_order_release);
  const auto parts_done = [&] { return meeting.parts_left.load(std::memory_order_acquire) == 0; };
  if (meeting.parts_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    wake_sleepers(fabric_->bell(place.group));
  } else {
    try {
      wait_in_meeting(
          &tag, parts_done, [] { return false; }, place.group);
    } catch (...) {
      // Another member may still read or write what this VP's input points to: its part ends
      // without waiting for anything.
      while (!parts_done()) detail::Waiter::give_core();
      throw;
    }
  }
  if (failed) std::rethrow_exception(failed);
}

void Port::tally_meeting(const Rounds& rounds, const void* input, const detail::GroupInfo* group) {
  // A group's rounds name its ranks: this VP is member `rank` of `size`, member r is VP vp(r).
  const int rank = group == nullptr ? id_ : group->rank;
  const int size = group == nullptr ? size_ : group->size;
  if (rounds.sent_bytes != nullptr) {
    // Blocks of any sizes: each message counted as its send would count it, call by call.
    const Topology& topo = topology();
    for (int k = 0; k < rounds.count; ++k) {
      const int dest = rounds.dest(rank, k, size);
      if (dest < 0) continue;
      const std::size_t bytes = rounds.sent_bytes(input, rank, k, size);
      const int vp = group == nullptr ? dest : group->vp_of(dest);
      count_route(vp, topo.link_slot(id_, vp), bytes);
      ++messages_sent_;
      bytes_sent_ += bytes;
    }
    return;
  }
  const std::uint64_t serial = group == nullptr ? 0 : group->serial;
  auto same = [&](const MeetingTally& tally) {
    return tally.to == rounds.to && tally.scale == rounds.scale && tally.count == rounds.count &&
           tally.root == rounds.root && tally.ring_root == rounds.ring_root &&
           tally.group == serial;
  };
  if (last_tally_ >= meetings_.size() || !same(meetings_[last_tally_])) {
    last_tally_ = static_cast<std::size_t>(std::find_if(meetings_.begin(), meetings_.end(), same) -
                                           meetings_.begin());
    if (last_tally_ == meetings_.size()) {  // a new pattern: this VP's messages in it
      MeetingTally tally{
          rounds.to, rounds.scale, rounds.count, rounds.root, rounds.ring_root, 0, 0, 0, 0,
          serial,    rank,         size,         {}};
      for (int k = 0; k < rounds.count; ++k) {
        const int dest = rounds.dest(rank, k, size);
        if (dest < 0) continue;
        ++tally.sends;
        tally.multiplier += rounds.scale == nullptr ? 1 : rounds.scale(k, size);
        tally.dests.push_back(group == nullptr ? dest : group->vp_of(dest));
      }
      meetings_.push_back(std::move(tally));
    }
  }
  MeetingTally& tally = meetings_[last_tally_];
  ++tally.times;
  tally.bytes += rounds.bytes;
  messages_sent_ += tally.sends;
  bytes_sent_ += rounds.bytes * tally.multiplier;
}

void Port::count_meetings() noexcept {
  const Topology& topo = topology();
  for (const MeetingTally& tally : meetings_) {
    const Rounds pattern{tally.count, 0,          tally.to, nullptr,
                         tally.scale, tally.root, nullptr,  tally.ring_root};
    auto vp = tally.dests.begin();
    for (int k = 0; k < tally.count; ++k) {
      if (pattern.dest(tally.rank, k, tally.size) < 0) continue;
      const std::uint64_t bytes =
          tally.scale == nullptr ? tally.bytes : tally.bytes * tally.scale(k, tally.size);
      count_route(*vp, topo.link_slot(id_, *vp), bytes, tally.times);
      ++vp;
    }
  }
}

// The last arriver's work: every seat is written and no VP leaves before the release.
void Port::conclude_meeting(const MeetingPlace& place, const Rounds& rounds, Combine combine,
                            const void* context, std::size_t out_bytes, Results results) {
  detail::Meeting& meeting = place.meeting;
  const int size = place.size;
  const std::span<detail::Meeting::Seat> seats(meeting.seats);
  bool agree = true, parts_agree = true;
  for (const auto& theirs : seats) {
    agree = agree && theirs.tag == seats.front().tag;
    parts_agree = parts_agree && theirs.has_part == seats.front().has_part;
  }
  if (agree && !parts_agree) {
    // The same call, but members that decided otherwise whether to share its work: none may
    // wait for the others' parts.
    std::string sharing, alone;
    for (int i = 0; i < size; ++i) {
      std::string& list = seats[static_cast<std::size_t>(i)].has_part ? sharing : alone;
      list +=
          (list.empty() ? "" : ", ") + vp_name(place.group == nullptr ? i : place.group->vp_of(i));
    }
    throw CollectiveMismatch(vp_name(id_) + ": " +
                             seats[static_cast<std::size_t>(place.rank)].operation +
                             ": the members met in shared memory, but some would share its work (" +
                             sharing + ") and some would not (" + alone + ")");
  }
  if (!agree) {
    std::vector<detail::TagHolders> seen;
    for (int i = 0; i < size; ++i) {
      const MessageTag& theirs = seats[static_cast<std::size_t>(i)].tag;
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const auto& entry) { return entry.first == theirs; });
      if (it == seen.end()) it = seen.insert(seen.end(), {theirs, {}});
      it->second.push_back(place.group == nullptr ? i : place.group->vp_of(i));  // VPs named
    }
    const auto& mine = seats[static_cast<std::size_t>(place.rank)];
    throw CollectiveMismatch(
        detail::describe_disagreement(id_, mine.operation, mine.tag, seen, topology()) +
        " (they met in shared memory)");
  }
  for (int i = 0; i < size; ++i) {
    meeting.clocks[static_cast<std::size_t>(i)] = seats[static_cast<std::size_t>(i)].clock;
    meeting.inputs[static_cast<std::size_t>(i)] = seats[static_cast<std::size_t>(i)].input;
  }
  meeting.player.play(rounds, options().model, topology(), meeting.clocks, meeting.next_clocks,
                      meeting.inputs, meeting.vps);
  if (combine == nullptr) return;
  // The result, then the scratch (Port::Combine): grown when needed, kept for the next meeting.
  const auto levels = static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(size - 1)));
  const std::size_t result_bytes =
      out_bytes * (results == Results::per_vp ? static_cast<std::size_t>(size) : 1);
  const std::size_t scratch_bytes =
      results == Results::per_vp ? result_bytes : rounds.bytes * levels;
  if (meeting.result.size() < result_bytes + scratch_bytes)
    meeting.result.resize(result_bytes + scratch_bytes);
  const std::span<std::byte> shared(meeting.result);
  combine(context, meeting.inputs, shared.first(result_bytes),
          shared.subspan(result_bytes, scratch_bytes));
}

// Yields the core, to whichever VP on it can run, for the fabric's yield time, then sleeps on
// the meetings' futex word (which a release, an abort or a finishing VP bumps) until done().
// Throws Aborted when the run is aborted, CollectiveMismatch when a VP (of `group`, where the
// meeting is a group's) finishes without coming (unless excused()) or, in call `tag`, holds
// another header.
template <class Done, class Excused>
void Port::wait_in_meeting(const MessageTag* tag, Done&& done, Excused&& excused,
                           const detail::GroupInfo* group, Compare compare) {
  detail::Meeting& meeting = fabric_->bell(group);
  auto abandoned = [&] {
    return Aborted(vp_name(id_) + ": " + operation_name() +
                   " abandoned: another VP failed or the run deadlocked");
  };
  // As a VP waiting for a message does (Port::wait_until): the other VPs may be in a different
  // call of the same sequence number, or have finished.
  detail::LookPace pace(group != nullptr ? group->size : topology().size(),
                        fabric_->recheck_time(true));
  // A VP that has left its call (settle_clock: Compare::roles) and finds a disagreement there
  // leaves the report a while to a member still in a call, woken for it, whose own check names
  // it in that call, where the program can catch it (the VP that left may have ended its body).
  std::chrono::steady_clock::time_point report_after{};
  const auto leave_report = [&] {
    if (compare != Compare::roles) return false;
    const auto now = std::chrono::steady_clock::now();
    if (report_after == std::chrono::steady_clock::time_point{}) {
      report_after = now + 2 * fabric_->recheck_time(true);
      wake_sleepers(meeting);
    }
    return now < report_after;
  };
  auto check = [&] {
    if (fabric_->aborted()) throw abandoned();
    if (!pace.due()) return;
    if (tag != nullptr)
      if (std::string problem = disagreement(*tag, compare); !problem.empty() && !done()) {
        if (leave_report()) return;
        throw CollectiveMismatch(problem);
      }
    const int finished = group == nullptr ? fabric_->finished_vp() : finished_member(*group);
    if (finished < 0 || done() || excused()) return;
    if (!fabric_->settle()) throw abandoned();
    if (done() || excused() || leave_report()) return;
    throw CollectiveMismatch(
        vp_name(id_) + ": " + operation_name() +
        (group == nullptr ? " waits for every VP to join it, but "
                          : " waits for every member of " + group->name() + " to join it, but ") +
        vp_name(finished) +
        " has already finished: the VPs disagree on the collectives they "
        "call. Every VP: " +
        fabric_->describe_waits());
  };

  const auto poll = [&](detail::Waiter::Phase) {
    look();
    return done();
  };
  const auto aborted = [&] {
    if (fabric_->aborted()) throw abandoned();
    return false;
  };
  const auto audit = [&] {
    check();
    return false;
  };
  // Meetings run only when VPs outnumber cores: no spin phase.
  if (detail::Waiter{std::chrono::nanoseconds(0), fabric_->yield_time()}.busy(
          poll, aborted, audit, detail::Waiter::give_core) == detail::Waiter::Outcome::done)
    return;
  for (;;) {
    const std::uint32_t signal = meeting.signal.load(std::memory_order_acquire);
    look();
    if (done()) return;
    check();
    meeting.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!done()) detail::Waiter::sleep(meeting.signal, signal, fabric_->recheck_time(true));
    meeting.sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
}

int Port::finished_member(const detail::GroupInfo& group) const noexcept {
  // None of the VPs has finished (only where every member is local is that all of them).
  if (fabric_->remote() == nullptr && fabric_->finished_vp() < 0) return -1;
  for (int r = 0; r < group.size; ++r) {
    const int vp = group.vp_of(r);
    if (fabric_->state(vp).status.load(std::memory_order_acquire) == detail::kFinished) return vp;
  }
  return -1;
}

// ---- Prefix meetings (meet_prefix; fabric.hpp's PipelinedMeeting says how they work)

void Port::take_seat(const ChainSeat& place, std::uint64_t generation, const MessageTag& tag,
                     std::size_t bytes, std::span<std::byte> out) {
  detail::PipelinedMeeting& chain = place.chain;
  detail::PipelinedMeeting::Slot& slot = chain.slot(generation);
  // The slot is free once the meeting slot_count before this one is over; once that one has
  // concluded, every VP has come to it, and a VP that finishes is no sign of a mismatch. A call
  // whose data lies past the seats runs fewer meetings ahead (PipelinedMeeting::lead): as far as
  // the meeting `lead` before it, whose slot is freed (its generation moved on) when it is over.
  const std::uint64_t lead = chain.lead(bytes);
  const bool led = lead < chain.slot_count && generation >= lead;
  const std::uint64_t behind = generation - lead;
  const auto free = [&] {
    return slot.generation.load(std::memory_order_acquire) == generation &&
           (!led || chain.slot(behind).generation.load(std::memory_order_acquire) > behind);
  };
  if (!free())
    wait_in_meeting(
        &tag, free,
        [&] {
          return concluded(chain, generation - chain.slot_count) &&
                 (!led || concluded(chain, behind));
        },
        place.group);
  auto& seat = slot.seats[static_cast<std::size_t>(place.rank)];
  // This VP's seat and input in the next meeting, asked for writing now: the VPs that read them
  // there last ran on other cores, and the store that shows this VP has come waits for every
  // store before it (8 VPs on 2 cores, 8 B back to back: gather and reduce 0.73-0.81 of the
  // time without, broadcast 0.79-1.0, the scan unchanged).
  detail::PipelinedMeeting::Slot& next = chain.slot(generation + 1);
  detail::prefetch_for_writing(&next.seats[static_cast<std::size_t>(place.rank)], sizeof(seat));
  if (bytes > detail::PipelinedMeeting::kSmallBytes && bytes <= detail::PipelinedMeeting::kBytes)
    detail::prefetch_for_writing(
        chain.data_slot(generation + 1, bytes).inputs +
            static_cast<std::size_t>(place.rank) * detail::PipelinedMeeting::kBytes,
        std::max<std::size_t>(bytes, 1));
  seat.clock = clock_;
  seat.pending = pending_ != 0;
  seat.tag = tag;
  seat.bytes = bytes;
  seat.operation = operation_name();
  seat.out = out.empty() ? nullptr : out.data();
}

void Port::check_seats(const ChainSeat& place, std::uint64_t generation, int first, int from,
                       int to) const {
  const detail::PipelinedMeeting::Slot& slot = place.chain.slot(generation);
  const auto& theirs = slot.seats[static_cast<std::size_t>(first)];
  std::vector<detail::TagHolders> seen;
  for (int i = from; i < to; ++i) {
    const auto& seat = slot.seats[static_cast<std::size_t>(i)];
    if (seat.tag == theirs.tag && seat.bytes == theirs.bytes) continue;
    // Name every VP so far that has come with the first's header and each with another (a seat
    // whose VP has not come may be written now).
    seen = {{theirs.tag, {place.vp(first)}}};
    for (int j = 0; j < to; ++j) {
      const auto& other = slot.seats[static_cast<std::size_t>(j)];
      const std::uint64_t mark = other.mark.load(std::memory_order_acquire);
      if (j == first || !detail::PipelinedMeeting::came_to(mark, generation)) continue;
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const auto& entry) { return entry.first == other.tag; });
      if (it == seen.end()) it = seen.insert(seen.end(), {other.tag, {}});
      it->second.push_back(place.vp(j));
    }
    const auto& mine = slot.seats[static_cast<std::size_t>(place.rank)];
    throw CollectiveMismatch(
        detail::describe_disagreement(id_, mine.operation, mine.tag, seen, topology()) +
        " (they met in shared memory)");
  }
}

void Port::conclude_pipelined(const ChainSeat& place, std::uint64_t generation,
                              const Rounds& rounds, const void* sizes) {
  detail::PipelinedMeeting& chain = place.chain;
  detail::PipelinedMeeting::Slot& slot = chain.slot(generation);
  // The lines this VP writes at the end, which VPs on the other core read last, asked for now
  // while it plays the clocks (8 and 16 VPs on 2 cores, 8 B back to back, two sets of 8 rounds:
  // 0.87-1.01 of the time, the rooted calls and the scan; docs/performance.md).
  detail::prefetch_for_writing(&chain.concluded, sizeof chain.concluded);
  detail::prefetch_for_writing(chain.final_clocks.data(),
                               chain.final_clocks.size() * sizeof(double));
  detail::prefetch_for_writing(&slot.generation, sizeof slot.generation);
  // A VP whose clock was pending came with the one the previous meeting set in final_clocks:
  // that one concluded before any VP left it.
  for (std::size_t j = 0; j < static_cast<std::size_t>(place.size); ++j)
    if (!slot.seats[j].pending) chain.final_clocks[j] = slot.seats[j].clock;
  if (rounds.sent_bytes != nullptr) std::fill(chain.sizes.begin(), chain.sizes.end(), sizes);
  chain.player.play(rounds, options().model, topology(), chain.final_clocks, chain.next_clocks,
                    rounds.sent_bytes != nullptr ? std::span<const void* const>(chain.sizes)
                                                 : std::span<const void* const>(),
                    chain.vps);
  chain.concluded.store(generation + 1, std::memory_order_release);
}

void Port::leave_pipelined(const ChainSeat& place, std::uint64_t generation, const Rounds& rounds,
                           const char* op, const void* sizes) {
  // The clock is left pending, to be taken when this VP next needs it (its next meeting in this
  // chain, whose concluder takes it from final_clocks; settle_clock), even where the meeting
  // concluded: asking `concluded` now reads a line the concluder, on the other core, just wrote
  // (8-16 VPs on 2 cores, 8 B back to back: broadcast, reduce, gather 0.78-0.93 of the time).
  pending_ = generation + 1;
  pending_operation_ = op;
  pending_chain_ = &place.chain;
  pending_seat_ = place.rank;
  pending_group_ = place.group;
  tally_meeting(rounds, sizes, place.group);
  note_received();  // the watchdog's sign of progress
}

Port::ChainSeat Port::chain_seat(const detail::GroupInfo* group) {
  if (group == nullptr)
    return {fabric_->pipelined_meeting(), nullptr, id_, size_, pipelined_calls_};
  return {fabric_->group_chain(*group), group, group->rank, group->size, group->pipelined_calls};
}

int Port::ChainSeat::vp(int r) const noexcept { return group == nullptr ? r : group->vp_of(r); }

bool Port::meet_prefix(const detail::GroupInfo* group, const MessageTag& tag, const Rounds& rounds,
                       std::span<const std::byte> input, PrefixStep step, const void* context,
                       std::span<std::byte> out) {
  using Chain = detail::PipelinedMeeting;
  if (!may_meet()) return false;
  const ChainSeat place = chain_seat(group);
  Chain& chain = place.chain;
  if (chain.slot_count == 0) return false;
  // Past kPipelinedBytes a VP the inputs lie in the slot's wide inputs and the steps' folds in
  // its wide room: up to slot_room for the p of them.
  if (input.size() > kPipelinedBytes &&
      input.size() * static_cast<std::size_t>(place.size) > chain.slot_room)
    return false;
  // A clock pending in another chain (the machine's, another group's) is settled there first:
  // a seat's pending clock is the one its own chain's previous meeting sets.
  if (pending_ != 0 && pending_chain_ != &chain) settle_clock();
  const char* op = operation_name();
  if (fabric_->aborted())
    throw Aborted(vp_name(id_) + ": " + op + " abandoned: another VP failed or the run deadlocked");

  const std::uint64_t generation = place.calls++;
  const InMeeting in_meeting(fabric_->state(id_), op, place.group == nullptr ? tag.sequence : 0,
                             place.group == nullptr ? nullptr : &place.chain.vps);
  take_seat(place, generation, tag, input.size(), out);
  Chain::Slot& slot = chain.slot(generation);
  const auto me = static_cast<std::size_t>(place.rank);
  prefetch_next_chain(chain.slot(generation + 1), chain.data_slot(generation + 1, input.size()), me,
                      place.size, input.size());
  Chain::Seat& seat = slot.seats[me];
  const Chain::Inputs inputs = chain.data_slot(generation, input.size()).inputs_of(input.size());
  if (!input.empty()) std::memcpy(inputs.base + me * inputs.stride, input.data(), input.size());
  const std::uint64_t base = Chain::base(generation);
  // Steps 0..me-1 done (VP 0: none to do): this VP takes the chain on. Else the VP that does
  // step me-1 finds it come and claims its step, or marks it ready first, which this exchange
  // then finds (one word, read-modified by both: exactly one of them runs the step).
  if (me == 0 ||
      seat.mark.exchange(base + Chain::kCame, std::memory_order_acq_rel) == base + Chain::kReady) {
    seat.mark.store(base + Chain::kClaimed, std::memory_order_release);
    run_prefix_chain(place, generation, place.rank, step, context, rounds);
  }
  // This VP's step is done: its mark says so, or already belongs to a later meeting in this
  // slot (once this one concluded, the VP that did the step below in that one may have marked
  // it ready before this VP saw it done).
  const auto step_done = [&] {
    const std::uint64_t mark = seat.mark.load(std::memory_order_acquire);
    return mark == base + Chain::kDone || mark >= base + Chain::kStates;
  };
  if (!step_done()) {
    try {
      wait_in_meeting(
          &tag, step_done, [&] { return concluded(chain, generation); }, place.group);
    } catch (...) {
      withdraw_from_chain(seat, base);
      throw;
    }
  }
  leave_pipelined(place, generation, rounds, op);
  return true;
}

void Port::run_prefix_chain(const ChainSeat& place, std::uint64_t generation, int vp,
                            PrefixStep step, const void* context, const Rounds& rounds) {
  using Chain = detail::PipelinedMeeting;
  Chain& chain = place.chain;
  Chain::Slot& slot = chain.slot(generation);
  const std::uint64_t base = Chain::base(generation);
  auto i = static_cast<std::size_t>(vp);
  const auto p = static_cast<std::size_t>(place.size);
  try {
    for (;;) {
      Chain::Seat& seat = slot.seats[i];
      check_seats(place, generation, 0, static_cast<int>(i), static_cast<int>(i) + 1);
      const Chain::Slot& data = chain.data_slot(generation, seat.bytes);
      const Chain::Inputs inputs = data.inputs_of(seat.bytes);
      step(context, static_cast<int>(i), place.size, seat.bytes, inputs.stride, inputs.base,
           data.folds_of(seat.bytes), seat.out);
      if (i + 1 == p) break;
      seat.mark.store(base + Chain::kDone, std::memory_order_release);
      if (!claim_next_step(slot.seats[i + 1].mark, base)) {
        wake_sleepers(fabric_->bell(place.group));  // VP i + 1 has not come: it takes the chain on
        return;
      }
      ++i;
    }
    // The last step: every VP came.
    conclude_pipelined(place, generation, rounds);
  } catch (...) {
    // Another VP's step failed here (a disagreement found in it, the operator threw): the step
    // goes back to its VP, which may be waiting to withdraw it (withdraw_from_chain).
    if (i != static_cast<std::size_t>(vp))
      slot.seats[i].mark.store(base + Chain::kCame, std::memory_order_release);
    throw;
  }
  slot.seats[p - 1].mark.store(base + Chain::kDone, std::memory_order_release);
  slot.generation.store(generation + chain.slot_count, std::memory_order_release);
  wake_sleepers(fabric_->bell(place.group));
}

bool Port::meet_rooted(const detail::GroupInfo* group, const MessageTag& tag, const Rounds& rounds,
                       Flow flow, std::span<const std::byte> input, std::span<std::byte> out,
                       Results results, Combine combine, const void* context,
                       const Uneven* uneven) {
  using Chain = detail::PipelinedMeeting;
  if (!may_meet()) return false;
  const ChainSeat place = chain_seat(group);
  Chain& chain = place.chain;
  const std::size_t n = flow == Flow::from_root ? out.size() : input.size();
  if (chain.slot_count == 0) return false;
  // A clock pending in another chain (the machine's, another group's) is settled there first:
  // a seat's pending clock is the one its own chain's previous meeting sets.
  if (pending_ != 0 && pending_chain_ != &chain) settle_clock();
  const auto p = static_cast<std::size_t>(place.size);
  // The root's buffer: a scatter's or gather's p blocks, a broadcast's or reduce's one.
  const std::size_t root_bytes = results == Results::per_vp ? n * p : n;
  // What a meeting past kPipelinedBytes a VP leaves in the slot: the root's input of a flow from
  // the root (in root_input, which holds p blocks of up to kPipelinedBytes, or past that in the
  // wide room), every VP's of a flow to the root (in the wide inputs). Up to slot_room
  // (p times kPipelinedBytes or the chain's wide room), below kByReferenceBytes, it
  // pipelines: a broadcast, a scatter, a gather or a reduce.
  const std::size_t slot_bytes = flow == Flow::from_root ? root_bytes : n * p;
  const bool fits_slot =
      uneven == nullptr && root_bytes < kByReferenceBytes && slot_bytes <= chain.slot_room;
  if (uneven != nullptr ? uneven->by_reference : n > kPipelinedBytes && !fits_slot) {
    // Large: by reference, where it moves enough to pay for the root's wait (port.hpp).
    if (uneven == nullptr &&
        (root_bytes < kByReferenceBytes ||
         (flow == Flow::to_root && (combine != nullptr || results != Results::per_vp))))
      return false;
    return meet_rooted_by_reference(place, tag, rounds, flow, input, out, results, uneven);
  }
  const char* op = operation_name();
  if (fabric_->aborted())
    throw Aborted(vp_name(id_) + ": " + op + " abandoned: another VP failed or the run deadlocked");

  const std::uint64_t generation = place.calls++;
  const InMeeting in_meeting(fabric_->state(id_), op, place.group == nullptr ? tag.sequence : 0,
                             place.group == nullptr ? nullptr : &place.chain.vps);
  const int root = rounds.root;
  const bool is_root = place.rank == root;
  take_seat(place, generation, tag, uneven != nullptr ? uneven->seat : n, out);
  Chain::Slot& slot = chain.slot(generation);
  const Chain::Slot& data = chain.data_slot(generation, uneven != nullptr ? uneven->seat : n);
  const auto me = static_cast<std::size_t>(place.rank);
  // The next meeting's counter of the VPs gone, and a root's seat that a VP takes from, asked for
  // now (the VPs of the other core wrote them last; this call's work hides the trip).
  const Chain::Slot& next = chain.slot(generation + 1);
  detail::prefetch_for_writing(&next.left, sizeof(next.left));
  if (!is_root && flow == Flow::from_root)
    detail::prefetch_for_reading(&next.seats[static_cast<std::size_t>(root)], sizeof(Chain::Seat));
  // A flow to the root of more than kBytes a VP leaves its inputs in the wide inputs (inputs_of).
  const Chain::Inputs inputs =
      uneven != nullptr ? Chain::Inputs{data.inputs, Chain::kBytes} : data.inputs_of(n);
  const auto at = [&](int vp) {
    return inputs.base + static_cast<std::size_t>(vp) * inputs.stride;
  };
  // The root's input of a flow from the root lies in the slot's root_input (a scatter's: all p
  // blocks; a small one in the root's seat), each VP's of a flow to the root at its own place in
  // inputs.
  std::byte* const from_root = flow == Flow::from_root && results != Results::per_vp &&
                                       uneven == nullptr && n <= Chain::kSmallBytes
                                   ? at(root)
                               : uneven == nullptr && root_bytes > p * Chain::kBytes
                                   ? data.wide_room
                                   : data.root_input;
  const std::size_t offset = uneven != nullptr            ? uneven->offset
                             : results == Results::per_vp ? me * n
                                                          : 0;  // what this VP takes
  if (flow == Flow::to_root && n != 0) std::memcpy(at(place.rank), input.data(), n);
  if (flow == Flow::from_root && is_root) {
    claim_root(place, generation, tag, op);
    if (!input.empty()) std::memcpy(from_root, input.data(), input.size());
  }
  const std::uint64_t came = Chain::base(generation) + Chain::kCame;
  slot.seats[me].mark.store(came, std::memory_order_release);
  if (flow == Flow::to_root && !is_root) {
    // A root that came to this meeting with another collective (a scan's chain that passed it
    // by before this VP came, say) would never check this seat: check it against the root's.
    const std::uint64_t theirs =
        slot.seats[static_cast<std::size_t>(root)].mark.load(std::memory_order_acquire);
    if (Chain::came_to(theirs, generation))
      check_seats(place, generation, root, place.rank, place.rank + 1);
    else
      slot.unchecked.store(1, std::memory_order_relaxed);  // published by `left`
  }

  if (flow == Flow::from_root && !is_root) {
    const Chain::Seat& theirs = slot.seats[static_cast<std::size_t>(root)];
    if (theirs.mark.load(std::memory_order_acquire) != came)
      wait_in_meeting(
          &tag, [&] { return theirs.mark.load(std::memory_order_acquire) == came; },
          [&] { return concluded(chain, generation); }, place.group);
    check_seats(place, generation, root, place.rank, place.rank + 1);
    if (n != 0) std::memcpy(out.data(), from_root + offset, n);
  } else if (flow == Flow::from_root && results == Results::per_vp) {
    if (n != 0 && out.data() != input.data() + offset)
      std::memmove(out.data(), input.data() + offset, n);  // the root's own block
  } else if (flow == Flow::to_root && is_root) {
    int ready = 0;  // VPs [0, ready) have come
    const auto all_came = [&] {
      while (ready < place.size && slot.seats[static_cast<std::size_t>(ready)].mark.load(
                                       std::memory_order_acquire) == came)
        ++ready;
      return ready == place.size;
    };
    if (!all_came())
      wait_in_meeting(
          &tag, all_came, [&] { return concluded(chain, generation); }, place.group);
    check_seats(place, generation, root, 0, place.size);
    slot.root.store(kRootCheckedAll, std::memory_order_relaxed);  // published by `left`
    if (combine == nullptr && n != 0) {  // a gather's blocks (Results::per_vp), into place
      if (inputs.stride == n)
        std::memcpy(out.data(), inputs.base, n * p);  // in the wide inputs, laid out as in out
      else
        for (std::size_t j = 0; j < p; ++j)
          std::memcpy(out.data() + j * n, at(static_cast<int>(j)), n);
    } else if (combine != nullptr && (uneven != nullptr ? uneven->seat : n) != 0) {
      const auto levels = static_cast<std::size_t>(std::bit_width(p - 1));
      rooted_inputs_.resize(p);
      for (int j = 0; j < place.size; ++j) rooted_inputs_[static_cast<std::size_t>(j)] = at(j);
      if (rooted_scratch_.size() < levels * n) rooted_scratch_.resize(levels * n);
      combine(context, rooted_inputs_, out, std::span(rooted_scratch_).first(levels * n));
    }
  }
  // From the root, every VP has checked its seat against its root's (a VP that is no one's root
  // disagrees with some VP's seat); to the root, the root checked them all, and a VP giving to
  // a root that came first checked its seat against the root's. But a root that came with a
  // flow from it (a broadcast or scatter) after VPs that came to give it theirs (a reduce or
  // gather) checks nothing, and neither did they: the last VP to leave checks every seat where
  // such a VP came and no root of a flow to it checked.
  leave_rooted(
      place, generation, rounds, op,
      [&] {
        if (slot.unchecked.load(std::memory_order_relaxed) != 0 &&
            slot.root.load(std::memory_order_relaxed) != kRootCheckedAll)
          check_seats(place, generation, root, 0, place.size);
      },
      uneven != nullptr ? uneven->sizes : nullptr);
  return true;
}

// One root writes a meeting's input or takes its outputs: a second VP that calls itself the root
// disagrees with the first.
void Port::claim_root(const ChainSeat& place, std::uint64_t generation, const MessageTag& tag,
                      const char* op) const {
  detail::PipelinedMeeting::Slot& slot = place.chain.slot(generation);
  std::uint32_t first = 0;
  if (slot.root.compare_exchange_strong(first, static_cast<std::uint32_t>(place.rank) + 1,
                                        std::memory_order_acq_rel))
    return;
  const int other = static_cast<int>(first) - 1;
  const std::vector<detail::TagHolders> seen{
      {slot.seats[static_cast<std::size_t>(place.rank)].tag, {id_}},
      {slot.seats[static_cast<std::size_t>(other)].tag, {place.vp(other)}}};
  throw CollectiveMismatch(detail::describe_disagreement(id_, op, tag, seen, topology()) +
                           " (they met in shared memory)");
}

// The last VP to leave a rooted meeting checks what last_check checks, concludes it and frees
// its slot.
template <class LastCheck>
void Port::leave_rooted(const ChainSeat& place, std::uint64_t generation, const Rounds& rounds,
                        const char* op, LastCheck&& last_check, const void* sizes) {
  detail::PipelinedMeeting& chain = place.chain;
  detail::PipelinedMeeting::Slot& slot = chain.slot(generation);
  if (slot.left.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<std::uint32_t>(place.size)) {
    last_check();
    conclude_pipelined(place, generation, rounds, sizes);
    slot.left.store(0, std::memory_order_relaxed);
    slot.root.store(0, std::memory_order_relaxed);
    slot.unchecked.store(0, std::memory_order_relaxed);
    slot.copied.store(0, std::memory_order_relaxed);
    slot.generation.store(generation + chain.slot_count, std::memory_order_release);
    wake_sleepers(fabric_->bell(place.group));
  }
  leave_pipelined(place, generation, rounds, op, sizes);
}

// A large rooted meeting (meet_rooted): each VP other than the root copies its part straight
// from the root's input (Flow::from_root) or into the root's out (Flow::to_root, a gather's
// blocks) once the root has come, and leaves; the root leaves when every copy is done, so that
// its buffers stay theirs only for the call. The messages would have copied the data along the
// tree, (p/2) log p blocks for a scatter, mostly on the root's core; here each VP copies its own,
// on its own core.
bool Port::meet_rooted_by_reference(const ChainSeat& place, const MessageTag& tag,
                                    const Rounds& rounds, Flow flow,
                                    std::span<const std::byte> input, std::span<std::byte> out,
                                    Results results, const Uneven* uneven) {
  using Chain = detail::PipelinedMeeting;
  Chain& chain = place.chain;
  const std::size_t n = flow == Flow::from_root ? out.size() : input.size();
  const char* op = operation_name();
  const auto abandoned = [&] {
    return Aborted(vp_name(id_) + ": " + op +
                   " abandoned: another VP failed or the run deadlocked");
  };
  if (fabric_->aborted()) throw abandoned();

  const std::uint64_t generation = place.calls++;
  const InMeeting in_meeting(fabric_->state(id_), op, place.group == nullptr ? tag.sequence : 0,
                             place.group == nullptr ? nullptr : &place.chain.vps);
  const int root = rounds.root;
  take_seat(place, generation, tag, uneven != nullptr ? uneven->seat : n, out);
  Chain::Slot& slot = chain.slot(generation);
  const auto me = static_cast<std::size_t>(place.rank);
  Chain::Seat& seat = slot.seats[me];
  seat.in = input.data();
  if (place.rank == root) claim_root(place, generation, tag, op);
  const std::uint64_t base = Chain::base(generation);
  seat.mark.store(base + Chain::kCame, std::memory_order_seq_cst);
  // The VPs that came before the root wait for it to come (root_came), and copy then.
  if (place.rank == root) wake_sleepers(fabric_->bell(place.group));
  // This VP's part: block `me` (Results::per_vp) of the root's input or out, or all of it.
  const std::size_t offset = uneven != nullptr            ? uneven->offset
                             : results == Results::per_vp ? me * n
                                                          : 0;

  if (place.rank != root) {
    const Chain::Seat& theirs = slot.seats[static_cast<std::size_t>(root)];
    const auto root_came = [&] {
      return theirs.mark.load(std::memory_order_acquire) == base + Chain::kCame;
    };
    if (!root_came())
      wait_in_meeting(
          &tag, root_came, [&] { return concluded(chain, generation); }, place.group);
    check_seats(place, generation, root, place.rank, place.rank + 1);
    // The root's buffers are there while it waits for this copy; once it has left on an error
    // (Slot::closed), no copy starts. Both sides seq_cst: the root sees this claim or this VP
    // sees the closing.
    seat.mark.store(base + Chain::kClaimed, std::memory_order_seq_cst);
    if (slot.closed.load(std::memory_order_seq_cst) != 0) {
      seat.mark.store(base + Chain::kCame, std::memory_order_seq_cst);
      // The root's error is about to abandon the run: wait for that (the wait throws Aborted
      // then, or what this VP finds itself), so that the run reports the root's error, not this
      // VP's Aborted before it.
      wait_in_meeting(
          &tag, [] { return false; }, [] { return false; }, place.group);
      throw abandoned();  // not reached: the wait ends only by throwing
    }
    if (n != 0) {
      if (flow == Flow::from_root)
        std::memcpy(out.data(), theirs.in + offset, n);
      else
        std::memcpy(theirs.out + offset, input.data(), n);
    }
    seat.mark.store(base + Chain::kDone, std::memory_order_seq_cst);
    // Only the root waits for the copies, for all of them: the last copy wakes it.
    if (slot.copied.fetch_add(1, std::memory_order_seq_cst) + 2 ==
        static_cast<std::uint32_t>(place.size))
      wake_sleepers(fabric_->bell(place.group));
  } else {
    if (results == Results::per_vp && n != 0) {  // the root's own block
      if (flow == Flow::from_root && out.data() != input.data() + offset)
        std::memmove(out.data(), input.data() + offset, n);
      else if (flow == Flow::to_root && out.data() + offset != input.data())
        std::memmove(out.data() + offset, input.data(), n);
    }
    int ready = 0;  // VPs [0, ready) have made their copies
    const auto all_copied = [&] {
      while (ready < place.size) {
        const std::uint64_t mark =
            slot.seats[static_cast<std::size_t>(ready)].mark.load(std::memory_order_acquire);
        if (ready != place.rank && mark != base + Chain::kDone) {
          // A VP that came and does not copy may have left, its block in the slot: it met with
          // another header (counts that made it meet without reference) and will not copy.
          if (mark == base + Chain::kCame) check_seats(place, generation, root, ready, ready + 1);
          break;
        }
        ++ready;
      }
      return ready == place.size;
    };
    // (The first look too: it throws on a VP that came with another header, and a VP that
    // claimed its copy before may be writing into this root's buffers then.)
    try {
      if (!all_copied())
        wait_in_meeting(
            &tag, all_copied, [] { return false; }, place.group);
    } catch (...) {
      // Leaving on an error: the copies under way end before the buffers can go (their VPs
      // may wait for this core).
      slot.closed.store(1, std::memory_order_seq_cst);
      for (int j = 0; j < place.size; ++j)
        while (slot.seats[static_cast<std::size_t>(j)].mark.load(std::memory_order_seq_cst) ==
               base + Chain::kClaimed)
          detail::Waiter::give_core();
      throw;
    }
  }
  leave_rooted(
      place, generation, rounds, op, [] {}, uneven != nullptr ? uneven->sizes : nullptr);
  return true;
}

void Port::settle_clock() {
  if (pending_ == 0) return;
  detail::PipelinedMeeting& chain = *pending_chain_;
  const std::uint64_t generation = pending_ - 1;
  if (!concluded(chain, generation)) {
    // Waits as in the prefix it left (for the reports: that is the call it waits for).
    struct Restore {
      const char*& name;
      const char* saved;
      ~Restore() { name = saved; }
    } restore{operation_, operation_};
    operation_ = pending_operation_;
    // Its own header there, which the wait compares with the other members' calls of that number:
    // members that came with another collective or root and all went on (a scan's lowest, a
    // scatter's root, a gather's non-roots) leave it unconcluded, each waiting here. Only the
    // roles: where they agree, a member still waits in the call, which reports a disagreement
    // from there and names what it knows (an irregular call's counts).
    const MessageTag tag =
        chain.slot(generation).seats[static_cast<std::size_t>(pending_seat_)].tag;
    const InMeeting in_meeting(fabric_->state(id_), pending_operation_, 0,
                               pending_group_ == nullptr ? nullptr : &pending_chain_->vps);
    wait_in_meeting(
        &tag, [&] { return concluded(chain, generation); }, [] { return false; }, pending_group_,
        Compare::roles);
  }
  clock_ = chain.final_clocks[static_cast<std::size_t>(pending_seat_)];
  pending_ = 0;
}

}  // namespace hypercomm
