// How a VP waits: the runtime's one wait policy, used by a VP waiting for a message
// (Port::wait_until), for a meeting's release (Port::meet) and for a receiver to
// take a large message (await_receiver in proc.cpp).
//
// With a core to itself a VP spins: its partner runs on another core and a message is a
// cache-line transfer away. When VPs outnumber cores it yields its core to a VP of that core
// that can run (or polls when none can): the VP it waits for may need this very core, and a
// switch between two VPs of one core costs a fraction of a futex sleep and wake-up (a VP waiting
// for one of another process pinned to another core spins a little first: Fabric::spin_time).
// After either phase it sleeps on a futex word until woken, waking now and then to look again.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>

#include "futex.hpp"

namespace hypercomm::detail {

class Waiter {
 public:
  enum class Outcome : std::uint8_t {
    done,     // poll() saw what was awaited
    stopped,  // check() or audit() ended the wait
    sleep,    // both busy phases ran out: the caller sleeps (sleep())
  };
  enum class Phase : std::uint8_t { spin, yield };

  // A sleeper in a collective wakes this often to compare its call with the others' again (the
  // VP whose call differs may have entered after it slept and passed through without waiting).
  static constexpr std::chrono::milliseconds kRecheck{25};
  // A sleeper outside a collective wakes this often to look at the run's state.
  static constexpr std::chrono::milliseconds kIdleRecheck{100};

  Waiter(std::chrono::nanoseconds spin, std::chrono::nanoseconds yield) noexcept
      : spin_(spin), yield_(yield) {}

  // The busy phases: spinning for the spin time, then yielding for the yield time (either may
  // be zero). Each pass calls poll(phase), true when what is awaited has come. Every 64th pass
  // while spinning and every 16th while yielding (a clock read costs tens of passes) it calls
  // check(), true to stop waiting (an abort, a peer gone); while yielding also audit() once
  // every quarter of the yield time, the costlier look (do the VPs agree on the collective?).
  // Between passes it relaxes while spinning and calls give_core() while yielding.
  template <class Poll, class Check, class Audit, class GiveCore>
  Outcome busy(Poll&& poll, Check&& check, Audit&& audit, GiveCore&& give_core) const {
    using Clock = std::chrono::steady_clock;
    // Each phase reads the clock first at its first check, not on entry: most waits end within
    // a few passes, and a clock read costs tens of them (more under a hypervisor).
    if (spin_.count() > 0) {
      Clock::time_point spin_until{};
      for (unsigned i = 1;; ++i) {
        if (poll(Phase::spin)) return Outcome::done;
        cpu_relax();
        if ((i & 63) == 0) {
          if (check()) return Outcome::stopped;
          const auto now = Clock::now();
          if (i == 64) spin_until = now + spin_;
          if (now >= spin_until) break;
        }
      }
    }
    if (yield_.count() > 0) {
      Clock::time_point yield_until{}, next_audit{};
      for (unsigned i = 1;; ++i) {
        if (poll(Phase::yield)) return Outcome::done;
        if ((i & 15) == 0) {
          if (check()) return Outcome::stopped;
          const auto now = Clock::now();
          if (i == 16) yield_until = now + yield_, next_audit = now + yield_ / 4;
          if (now >= next_audit) {
            next_audit = now + yield_ / 4;
            if (audit()) return Outcome::stopped;
          }
          if (now >= yield_until) break;
        }
        give_core();
      }
    }
    return Outcome::sleep;
  }

  // Sleeps while word holds `seen`, at most `timeout`.
  static void sleep(std::atomic<std::uint32_t>& word, std::uint32_t seen,
                    std::chrono::nanoseconds timeout) noexcept {
    futex_wait(word, seen, timeout);
  }

  static void give_core() noexcept { sched_yield(); }

 private:
  std::chrono::nanoseconds spin_;
  std::chrono::nanoseconds yield_;
};

// Paces a wait's costly looks, those that read every member of the group (does each call the
// same collective? has one finished?). A wait looks whenever it is woken; in a group of many
// members every member waits and wakes, so looking each time costs n^2 reads (a scan on a
// subcube of 4096 VPs took 3-5 s, where the whole machine's took 0.2 s). Up to kFreelyLooked
// members a wait looks every time; beyond, at most once a period, the first a period after it
// began (the period of a sleeper's recheck, Fabric::recheck_time: a mismatch is still found
// before a deadlock would be reported).
class LookPace {
 public:
  static constexpr int kFreelyLooked = 64;
  LookPace(int members, std::chrono::nanoseconds period) noexcept
      : paced_(members > kFreelyLooked), period_(period) {}
  [[nodiscard]] bool due() noexcept {
    if (!paced_) return true;
    const auto now = std::chrono::steady_clock::now();
    if (next_ == std::chrono::steady_clock::time_point{}) {
      next_ = now + period_;
      return false;
    }
    if (now < next_) return false;
    next_ = now + period_;
    return true;
  }

 private:
  bool paced_;
  std::chrono::nanoseconds period_;
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace hypercomm::detail
