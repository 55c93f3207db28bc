// Port::meet_rooted: a rooted collective (broadcast, reduce, gather, scatter and their irregular
// forms) as one pipelined meeting where VPs outnumber cores: small ones through the slot's seats
// and the root's, large ones by reference (meet_rooted_by_reference), each VP copying its own
// part straight from or into the root's buffer.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <vector>

#include "fabric.hpp"
#include "group_info.hpp"
#include "meeting_wait.hpp"
#include "port.hpp"

namespace hypercomm {

using detail::Port;

namespace {

// PipelinedMeeting::Slot::root of a rooted meeting whose root, taking every VP's input, checked
// every seat (else 0, or the VP id + 1 of a root that claimed the slot): no VP id + 1.
constexpr std::uint32_t kRootCheckedAll = std::uint32_t{1} << 31;

}  // namespace

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
  if (fabric_->aborted()) throw detail::meeting_abandoned(id_, op);

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
  const auto abandoned = [&] { return detail::meeting_abandoned(id_, op); };
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

}  // namespace hypercomm
