// The deadlock watchdog (Fabric::watch): the run's own thread, asleep until the VPs' count of
// unfinished drops or a tick passes; when every unfinished VP has waited with nothing delivered
// for Options::deadlock_timeout, it fails the run with Deadlock, or CollectiveMismatch where all
// wait inside collectives, naming each VP's wait (describe_waits). And what it reads: each VP's
// published calls (read_calls, which the mismatch checks read too) and its wait state.
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdint>
#include <hypercomm/errors.hpp>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fabric.hpp"
#include "futex.hpp"
#include "group_info.hpp"

namespace hypercomm::detail {

namespace {

// Whether a blocked VP's VpState::operation names a collective (the point-to-point waits name
// "recv" or "sendrecv", or none).
bool waits_in_collective(const char* op) {
  return op != nullptr && std::string_view(op) != "recv" && std::string_view(op) != "sendrecv";
}

MessageTag tag_of(std::uint64_t first, std::uint64_t second) noexcept {
  return std::bit_cast<MessageTag>(std::array<std::uint64_t, 2>{first, second});
}

}  // namespace

bool read_calls(const VpState& state, PublishedCalls& calls) noexcept {
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::uint32_t before = state.call_version.load(std::memory_order_acquire);
    if ((before & 1u) != 0) {
      cpu_relax();
      continue;
    }
    const std::uint32_t entered = state.entered.load(kSeqlockWordLoad);
    PublishedCalls read;
    for (std::uint32_t k = 0; k < kPublishedCalls && k < entered; ++k) {
      const auto& place = state.calls[(entered - 1 - k) % kPublishedCalls];
      read.recent[k] = tag_of(place[0].load(kSeqlockWordLoad), place[1].load(kSeqlockWordLoad));
    }
    seqlock_read_fence();
    if (state.call_version.load(std::memory_order_relaxed) != before) continue;
    calls = read;
    return true;
  }
  return false;
}

std::string Fabric::describe_waits() const {
  std::string text;
  int listed = 0, finished = 0;
  auto add = [&](const std::string& item) {
    if (listed++ < 64)
      text += (text.empty() ? "" : "; ") + item;
    else if (listed == 65)
      text += "; ...";
  };
  // Each VP's latest call on the whole machine (its sequence; -1: none or unreadable), read once
  // when a meeting's wait first asks who is not in it: p VPs waiting would otherwise read p each.
  std::vector<std::int64_t> machine_calls;
  const auto machine_call = [&](int j) {
    if (machine_calls.empty()) {
      machine_calls.assign(static_cast<std::size_t>(last_ - first_), -1);
      for (int k = first_; k < last_; ++k) {
        PublishedCalls theirs;
        if (read_calls(states_[static_cast<std::size_t>(k)], theirs) &&
            theirs.latest().group == 0 && theirs.latest().kind != 0)
          machine_calls[static_cast<std::size_t>(k - first_)] = theirs.latest().sequence;
      }
    }
    return machine_calls[static_cast<std::size_t>(j - first_)];
  };
  for (int i = first_; i < last_; ++i) {
    const VpState& s = states_[static_cast<std::size_t>(i)];
    const std::uint32_t status = s.status.load(std::memory_order_acquire);
    if (status == kFinished) {
      ++finished;
      continue;
    }
    const std::string vp = "VP " + std::to_string(i);
    if (status == kRunning) {
      add(vp + " is running");
      continue;
    }
    const int peer = s.waiting_for.load(std::memory_order_relaxed);
    const char* op = s.operation.load(std::memory_order_relaxed);
    std::string item = vp + " waits in " + (op != nullptr ? op : "recv");
    // Blocked in a collective: in the last call it entered.
    PublishedCalls calls;
    if (waits_in_collective(op) && read_calls(s, calls) && calls.latest().kind != 0)
      item += " (call " + std::to_string(calls.latest().sequence) + " on " +
              group_name(calls.latest().group, topology_) + ")";
    // " (not in it: VP a, b, ...)": this process's VPs among `vps` for which `in_it` is false.
    const auto not_in_it = [&](const auto& vps, const auto& in_it) {
      std::string absent;
      int count = 0;
      for (const int j : vps) {
        if (j < first_ || j >= last_ || j == i || in_it(j)) continue;
        if (count++ < 8) absent += (absent.empty() ? "VP " : ", ") + std::to_string(j);
      }
      if (count > 8) absent += ", ...";
      return count > 0 ? " (not in it: " + absent + ")" : std::string();
    };
    const MessageTag& call = calls.latest();
    const std::vector<int>* members = s.meeting_members.load(std::memory_order_acquire);
    if (peer == kWaitsForAll && members != nullptr && call.kind != 0) {
      // A group's meeting: its members that have not entered this call.
      item += " for every member to join it" + not_in_it(*members, [&](int j) {
                PublishedCalls theirs;
                return read_calls(states_[static_cast<std::size_t>(j)], theirs) &&
                       theirs.find(call.group, call.sequence) != nullptr;
              });
    } else if (peer == kWaitsForAll) {
      item += " for every VP to join it";
      // Which have not: on the whole machine, the VPs whose latest call is another.
      if (call.kind != 0 && call.group == 0) {
        // A vector, not std::views::iota: Clang 14 cannot take libstdc++ 12's iota_view.
        std::vector<int> this_process(static_cast<std::size_t>(last_ - first_));
        std::iota(this_process.begin(), this_process.end(), first_);
        item += not_in_it(this_process, [&](int j) {
          return machine_call(j) == static_cast<std::int64_t>(call.sequence);
        });
      }
    } else {
      item += " for VP " + std::to_string(peer);
      if (peer >= 0 && states_[static_cast<std::size_t>(peer)].status.load() == kFinished)
        item += ", which has already finished";
    }
    add(item);
  }
  if (finished > 0)
    text +=
        "; " + std::to_string(finished) + (finished == 1 ? " VP has" : " VPs have") + " finished";
  return text;
}

bool Fabric::settle() const {
  using namespace std::chrono;
  const auto until =
      steady_clock::now() + std::min<nanoseconds>(options_.deadlock_timeout, milliseconds(200));
  for (;;) {
    if (aborted()) return false;
    bool running = false;
    for (int i = first_; i < last_ && !running; ++i)
      running =
          states_[static_cast<std::size_t>(i)].status.load(std::memory_order_acquire) == kRunning;
    if (!running || steady_clock::now() >= until) return !aborted();
    std::this_thread::sleep_for(microseconds(200));
  }
}

// Whether every blocked VP waits inside a collective: then they disagree on the collectives
// they call. One blocked in a point-to-point receive makes it a plain deadlock.
bool Fabric::all_waiting_in_collectives() const {
  bool any = false;
  for (int i = first_; i < last_; ++i) {
    const VpState& s = states_[static_cast<std::size_t>(i)];
    if (s.status.load(std::memory_order_acquire) != kBlocked) continue;
    if (!waits_in_collective(s.operation.load(std::memory_order_relaxed))) return false;
    any = true;
  }
  return any;
}

void Fabric::watch(std::chrono::steady_clock::time_point start) {
  using namespace std::chrono;
  const nanoseconds timeout = options_.deadlock_timeout;
  const nanoseconds tick = std::clamp<nanoseconds>(timeout / 8, milliseconds(1), milliseconds(50));
  std::uint64_t last_progress = UINT64_MAX;
  auto stalled_since = start;
  // A short run's end, seen without a futex wake-up.
  if (between_runs_spin_.count() > 0) {
    const auto spin_until = steady_clock::now() + between_runs_spin_;
    while (remaining_.load(std::memory_order_acquire) != 0 && steady_clock::now() < spin_until)
      between_runs_pause();
  }
  for (;;) {
    // Said before the count is looked at, so that the last VP wakes this thread only when it
    // sleeps (Fabric::finish).
    watcher_sleeps_.store(true, std::memory_order_seq_cst);
    const std::uint32_t remaining = remaining_.load(std::memory_order_seq_cst);
    if (remaining != 0) futex_wait(remaining_, remaining, tick);
    watcher_sleeps_.store(false, std::memory_order_relaxed);
    if (remaining_.load(std::memory_order_acquire) == 0) return;
    if (aborted()) continue;  // the VPs are on their way out
    bool in_collectives = false;
    std::uint64_t progress = 0;
    const bool all_waiting = stalled(progress, in_collectives);
    const auto now = steady_clock::now();
    if (!all_waiting || progress != last_progress) {
      last_progress = all_waiting ? progress : UINT64_MAX;
      stalled_since = now;
      continue;
    }
    if (now - stalled_since >= timeout) {
      const double seconds = duration<double>(now - stalled_since).count();
      const std::string what = "nothing delivered for " + std::to_string(seconds) +
                               " s while every unfinished VP waits: " + describe_waits();
      // VPs stuck inside collectives wait for messages their peers never send: they disagree
      // on the collective, its root, count, operator or algorithm.
      if (in_collectives)
        fail(std::make_exception_ptr(CollectiveMismatch(
                 "deadlock inside collectives, the VPs disagree on the collective sequence: " +
                 what)),
             -1);
      else
        fail(std::make_exception_ptr(Deadlock("deadlock: " + what)), -1);
    }
  }
}

bool Fabric::stalled(std::uint64_t& progress, bool& in_collectives) {
  progress = 0;
  for (int i = first_; i < last_; ++i) {
    const VpState& s = states_[static_cast<std::size_t>(i)];
    if (s.status.load(std::memory_order_acquire) == kRunning) {
      look_progress_ = UINT64_MAX;  // it may send: a fresh snapshot once it waits
      return false;
    }
    progress += s.received.load(std::memory_order_relaxed);
  }
  // A VP sends only while it runs, and it runs again only after it took a message: once every
  // blocked VP has looked since the snapshot, a message sent before the snapshot would have been
  // taken (progress). Until then, one may be waiting for a VP the OS has not run: on a box whose
  // load average ran in the thousands, VPs waited 30-60 s for messages already sent.
  const std::size_t local = static_cast<std::size_t>(last_ - first_);
  const auto looks = [&](std::size_t k) {
    return states_[static_cast<std::size_t>(first_) + k].looks.load(std::memory_order_seq_cst);
  };
  if (progress != look_progress_ || looks_then_.size() != local) {
    look_progress_ = progress;
    looks_then_.resize(local);
    for (std::size_t k = 0; k < local; ++k) looks_then_[k] = looks(k);
    all_looked_ = false;
  }
  if (!all_looked_) {
    for (std::size_t k = 0; k < local; ++k) {
      const VpState& s = states_[static_cast<std::size_t>(first_) + k];
      if (s.status.load(std::memory_order_acquire) == kBlocked && looks(k) == looks_then_[k])
        return false;
    }
    all_looked_ = true;
  }
  in_collectives = all_waiting_in_collectives();
  return true;
}
}  // namespace hypercomm::detail
