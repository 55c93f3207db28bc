// Port::meet_prefix: a scan or exscan as one pipelined meeting where VPs outnumber cores
// (meetings.hpp's PipelinedMeeting says how they work): each VP seats its input; step i (VP i's
// result) is run by VP i where it finds steps 0..i-1 done, else by the VP that ran step i - 1
// once VP i has come, and a VP leaves as soon as its own result is there, never waiting for the
// VPs after it.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <hypercomm/errors.hpp>

#include "fabric.hpp"
#include "group_info.hpp"
#include "meeting_wait.hpp"
#include "port.hpp"

namespace hypercomm {

using detail::Port;

namespace {

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

}  // namespace

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
  if (fabric_->aborted()) throw detail::meeting_abandoned(id_, op);

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

}  // namespace hypercomm
