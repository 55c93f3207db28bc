// How a VP waits in a meeting (Port::wait_in_meeting) and the small pieces every kind of meeting
// shares (meeting.cpp, meeting_prefix.cpp, meeting_rooted.cpp): the VP's state while it is in one
// (InMeeting), whether a pipelined meeting has concluded, and the wake-up of its sleepers.
#pragma once

#include <chrono>
#include <climits>
#include <cstdint>
#include <hypercomm/errors.hpp>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "futex.hpp"
#include "group_info.hpp"
#include "port.hpp"
#include "waiter.hpp"

namespace hypercomm::detail {

// "VP 3", as the meetings' errors name a VP.
inline std::string vp_name(int id) { return "VP " + std::to_string(id); }

// What a VP in (or entering) a meeting of operation `op` throws when the run has been aborted.
inline Aborted meeting_abandoned(int id, const char* op) {
  return Aborted(vp_name(id) + ": " + op + " abandoned: another VP failed or the run deadlocked");
}

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

// Whether pipelined meeting `generation` (a prefix or rooted one) has concluded: every VP came,
// every clock is set.
inline bool concluded(const PipelinedMeeting& chain, std::uint64_t generation) noexcept {
  return chain.concluded.load(std::memory_order_acquire) > generation;
}

// Called right after the store that ends a wait (a mark, a slot's generation), often a release
// store: the fence keeps that store from sitting in the store buffer while the sleepers count is
// read, or a waiter that has just counted itself (wait_in_meeting) could find the old value and
// sleep unwoken until its recheck. Both sides full barriers: the waker sees the sleeper or the
// sleeper sees the store.
inline void wake_sleepers(Meeting& meeting) noexcept {
  detail::store_load_fence();
  if (meeting.sleepers.load(std::memory_order_seq_cst) == 0) return;
  meeting.signal.fetch_add(1, std::memory_order_seq_cst);
  detail::futex_wake(meeting.signal, INT_MAX);
}

// A VP's seat in the whole machine's pipelined chain or its group's (inline: every prefix and
// rooted meeting asks it first).
inline Port::ChainSeat Port::chain_seat(const GroupInfo* group) {
  if (group == nullptr)
    return {fabric_->pipelined_meeting(), nullptr, id_, size_, pipelined_calls_};
  return {fabric_->group_chain(*group), group, group->rank, group->size, group->pipelined_calls};
}

inline int Port::ChainSeat::vp(int r) const noexcept {
  return group == nullptr ? r : group->vp_of(r);
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
  auto abandoned = [&] { return meeting_abandoned(id_, operation_name()); };
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

}  // namespace hypercomm::detail
