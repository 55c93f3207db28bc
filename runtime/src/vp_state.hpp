// What each VP publishes for the others (VpState): whether it runs, waits or has finished, whom
// it waits for and in what, whether it sleeps, and its latest collective calls' headers
// (publish_call, read_calls), which the mismatch checks and the deadlock watchdog read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "channel.hpp"
#include "port.hpp"

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

}  // namespace hypercomm::detail
