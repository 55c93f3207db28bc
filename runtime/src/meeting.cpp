// Port::meet: a small symmetric collective as one meeting of every VP in shared memory, for
// when VPs outnumber cores (port.hpp says when and why); a group's collective, as one meeting of
// its members, seated by rank, apart from the other groups' (Fabric::group_meeting).
//
// Each VP writes its seat (model clock, message header, input), then counts itself in. The last
// to arrive does the collective's work for all: it checks that the headers agree, plays the
// rounds on the model clocks exactly as the messages would have advanced them, folds the inputs
// into the shared result and bumps the release generation. The others wait for that bump as a
// VP waits for a message: they yield their core to the VPs on it that can run, then sleep on a
// futex that the release, an abort or a finishing VP wakes. A meeting costs each VP about one
// switch; log p rounds of messages cost it one or more per round.
//
// Here: the symmetric meetings (meet), the pipelined chain's seats that the prefix and rooted
// meetings share (take_seat, check_seats, conclude_pipelined, leave_pipelined), and a prefix
// meeting's clock settled at the VP's next step (settle_clock). The prefix meetings:
// meeting_prefix.cpp; the rooted ones: meeting_rooted.cpp; how a VP waits in any of them:
// meeting_wait.hpp.
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
#include "meeting_wait.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm {

using detail::Port;

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

void PipelinedMeeting::reset(std::uint64_t taken) noexcept {
  const std::size_t p = final_clocks.size();
  const auto used = static_cast<std::uint32_t>(std::min<std::uint64_t>(taken, slot_count));
  for (std::uint32_t s = 0; s < used; ++s) {
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
  if (fabric_->aborted()) throw detail::meeting_abandoned(id_, op);

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

int Port::finished_member(const detail::GroupInfo& group) const noexcept {
  // None of the VPs has finished (only where every member is local is that all of them).
  if (fabric_->remote() == nullptr && fabric_->finished_vp() < 0) return -1;
  for (int r = 0; r < group.size; ++r) {
    const int vp = group.vp_of(r);
    if (fabric_->state(vp).status.load(std::memory_order_acquire) == detail::kFinished) return vp;
  }
  return -1;
}

// ---- The pipelined chain's seats, which the prefix (meeting_prefix.cpp) and rooted
// (meeting_rooted.cpp) meetings share; meetings.hpp's PipelinedMeeting says how they work

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