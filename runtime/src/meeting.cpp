// Port::meet: a small symmetric collective as one meeting of every VP in shared memory, for
// when VPs outnumber cores (proc.hpp says when and why).
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
#include <hypercomm/errors.hpp>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "futex.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm {

using detail::Port;

namespace {

// Model time at which each VP ends the rounds, given the clocks at which they started (in
// seats[i].clock; the result replaces it). Port::sendrecv_bytes's arithmetic, term for term, so
// that the clocks equal those of the messages bit for bit.
void play_rounds(const Port::Rounds& rounds, const CostModel& model, const Topology& topology,
                 std::span<detail::Meeting::Seat> seats, std::span<double> next) {
  const int p = static_cast<int>(seats.size());
  for (int k = 0; k < rounds.count; ++k) {
    const auto m = static_cast<double>(rounds.bytes_in(k, p));
    for (int j = 0; j < p; ++j) {
      const int src = rounds.from(j, k, p);
      const double sent = seats[static_cast<std::size_t>(src)].clock;
      const int hops = model.th == 0                     ? 0
                       : topology.link_slot(src, j) >= 0 ? 1
                                                         : topology.distance(src, j);
      const double arrival = model.arrival(sent, m, hops);
      const double own = model.sent(seats[static_cast<std::size_t>(j)].clock, m);
      next[static_cast<std::size_t>(j)] = std::max(own, arrival);
    }
    for (int j = 0; j < p; ++j)
      seats[static_cast<std::size_t>(j)].clock = next[static_cast<std::size_t>(j)];
  }
}

std::string vp_name(int id) { return "VP " + std::to_string(id); }

}  // namespace

bool Port::meet(const MessageTag& tag, const Rounds& rounds, const void* input, Combine combine,
                const void* context, std::span<std::byte> out, Results results,
                std::size_t result_bytes) {
  // A meeting plays the one-port rules; all ports send the messages.
  // Meetings are in one process's memory: a machine over several processes sends its messages.
  if (!options().meetings || options().model.all_port || !fabric_->oversubscribed() || recording_ ||
      size_ < 2 || fabric_->distributed())
    return false;
  const char* op = operation_name();
  if (fabric_->aborted())
    throw Aborted(vp_name(id_) + ": " + op + " abandoned: another VP failed or the run deadlocked");

  detail::Meeting& meeting = fabric_->meeting();
  detail::VpState& me = fabric_->state(id_);
  auto& seat = meeting.seats[static_cast<std::size_t>(id_)];
  seat.clock = clock_;
  seat.tag = tag;
  seat.operation = op;
  seat.input = input;
  me.waiting_for.store(detail::kWaitsForAll, std::memory_order_relaxed);
  me.operation.store(op, std::memory_order_relaxed);
  me.status.store(detail::kBlocked, std::memory_order_release);
  me.meeting.store(tag.sequence, std::memory_order_seq_cst);
  struct Leave {
    detail::VpState& state;
    ~Leave() {
      state.meeting.store(0, std::memory_order_release);
      state.status.store(detail::kRunning, std::memory_order_relaxed);
    }
  } leave{me};

  const std::uint32_t generation = meeting.released.load(std::memory_order_acquire);
  const auto p = static_cast<std::uint32_t>(size_);
  if (meeting.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == p) {
    me.status.store(detail::kRunning, std::memory_order_relaxed);  // the watchdog: it works
    meeting.arrived.store(0, std::memory_order_relaxed);
    conclude_meeting(rounds, combine, context, result_bytes != 0 ? result_bytes : rounds.bytes,
                     results);
    meeting.released.store(generation + 1, std::memory_order_seq_cst);
    meeting.signal.fetch_add(1, std::memory_order_seq_cst);
    if (meeting.sleepers.load(std::memory_order_seq_cst) != 0)
      detail::futex_wake(meeting.signal, INT_MAX);
  } else {
    wait_for_meeting(generation, tag);
  }

  // Released: this VP's share of what the rounds would have done.
  clock_ = seat.clock;
  if (!out.empty()) {
    const std::size_t mine = results == Results::per_vp ? static_cast<std::size_t>(id_) : 0;
    std::memcpy(out.data(), meeting.result.data() + mine * out.size(), out.size());
  }
  tally_meeting(rounds);
  messages_sent_ += static_cast<std::uint64_t>(rounds.count);
  for (int k = 0; k < rounds.count; ++k) bytes_sent_ += rounds.bytes_in(k, size_);
  note_received();  // the watchdog's sign of progress
  return true;
}

void Port::tally_meeting(const Rounds& rounds) {
  for (MeetingTally& tally : meetings_) {
    if (tally.to == rounds.to && tally.scale == rounds.scale && tally.count == rounds.count) {
      ++tally.times;
      tally.bytes += rounds.bytes;
      return;
    }
  }
  meetings_.push_back({rounds.to, rounds.scale, rounds.count, 1, rounds.bytes});  // a new pattern
}

void Port::count_meetings() noexcept {
  const Topology& topo = topology();
  for (const MeetingTally& tally : meetings_) {
    for (int k = 0; k < tally.count; ++k) {
      const int dest = tally.to(id_, k, size_);
      const std::uint64_t bytes =
          tally.scale == nullptr ? tally.bytes : tally.bytes * tally.scale(k, size_);
      count_route(dest, topo.link_slot(id_, dest), bytes, tally.times);
    }
  }
}

// The last arriver's work: every seat is written and no VP leaves before the release.
void Port::conclude_meeting(const Rounds& rounds, Combine combine, const void* context,
                            std::size_t out_bytes, Results results) {
  detail::Meeting& meeting = fabric_->meeting();
  const std::span<detail::Meeting::Seat> seats(meeting.seats);
  bool agree = true;
  for (const auto& theirs : seats) agree = agree && theirs.tag == seats.front().tag;
  if (!agree) {
    std::vector<detail::TagHolders> seen;
    for (int i = 0; i < size_; ++i) {
      const MessageTag& theirs = seats[static_cast<std::size_t>(i)].tag;
      auto it = std::find_if(seen.begin(), seen.end(),
                             [&](const auto& entry) { return entry.first == theirs; });
      if (it == seen.end()) it = seen.insert(seen.end(), {theirs, {}});
      it->second.push_back(i);
    }
    const auto& mine = seats[static_cast<std::size_t>(id_)];
    throw CollectiveMismatch(
        detail::describe_disagreement(id_, mine.operation, mine.tag, seen, topology()) +
        " (they met in shared memory)");
  }
  play_rounds(rounds, options().model, topology(), seats, meeting.next_clocks);
  if (combine == nullptr) return;
  for (int i = 0; i < size_; ++i)
    meeting.inputs[static_cast<std::size_t>(i)] = seats[static_cast<std::size_t>(i)].input;
  // The result, then the scratch (Port::Combine): grown when needed, kept for the next meeting.
  const auto levels = static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(size_ - 1)));
  const std::size_t result_bytes =
      out_bytes * (results == Results::per_vp ? static_cast<std::size_t>(size_) : 1);
  const std::size_t scratch_bytes =
      results == Results::per_vp ? result_bytes : rounds.bytes * levels;
  if (meeting.result.size() < result_bytes + scratch_bytes)
    meeting.result.resize(result_bytes + scratch_bytes);
  const std::span<std::byte> shared(meeting.result);
  combine(context, meeting.inputs, shared.first(result_bytes),
          shared.subspan(result_bytes, scratch_bytes));
}

// Waits for the release of the meeting after `generation`: yields the core, to whichever VP on
// it can run, for the fabric's yield time, then sleeps on the meeting's futex word. Throws
// Aborted when the run is aborted, CollectiveMismatch when a VP finishes without coming.
void Port::wait_for_meeting(std::uint32_t generation, const MessageTag& tag) {
  detail::Meeting& meeting = fabric_->meeting();
  auto released = [&] { return meeting.released.load(std::memory_order_acquire) != generation; };
  auto abandoned = [&] {
    return Aborted(vp_name(id_) + ": " + operation_name() +
                   " abandoned: another VP failed or the run deadlocked");
  };
  // As a VP waiting for a message does (Port::wait_until): the other VPs may be in a different
  // call of the same sequence number, or have finished.
  auto check = [&] {
    if (fabric_->aborted()) throw abandoned();
    if (std::string problem = disagreement(tag); !problem.empty() && !released())
      throw CollectiveMismatch(problem);
    const int finished = fabric_->finished_vp();
    if (finished < 0 || released()) return;
    if (!fabric_->settle()) throw abandoned();
    if (released()) return;
    throw CollectiveMismatch(vp_name(id_) + ": " + operation_name() +
                             " waits for every VP to join it, but " + vp_name(finished) +
                             " has already finished: the VPs disagree on the collectives they "
                             "call. Every VP: " +
                             fabric_->describe_waits());
  };

  const auto poll = [&](detail::Waiter::Phase) { return released(); };
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
    if (released()) return;
    check();
    meeting.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (meeting.released.load(std::memory_order_seq_cst) == generation)
      detail::Waiter::sleep(meeting.signal, signal, detail::Waiter::kRecheck);  // check again
    meeting.sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace hypercomm
