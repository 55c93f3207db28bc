// Run options (API.md, "Running virtual processors" and "Cost model").
#pragma once

#include <chrono>
#include <hypercomm/export.hpp>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

// Which pairs of VPs may exchange messages.
enum class Links {
  routed,  // any pair; a message is routed (and accounted) over the topology's links
  strict,  // topology neighbours only; any other send throws LinkError
};

// Where VP threads run.
enum class Pinning {
  compact,  // VP i on the (i mod n)-th core this process may use
  none,     // left to the OS scheduler
};

// The textbook cost model: a message of m bytes costs ts + tw*m at the sender and arrives
// th*hops later (cut-through routing).
struct CostModel {
  double ts = 1.0;  // start-up time per message
  double tw = 0.0;  // time per byte
  double th = 0.0;  // time per hop
  // Messages whose routes use the same directed link at overlapping model times serialize on
  // it (off: the rule above exactly, as the book's formulas assume).
  bool contention = false;
  // A VP may send on all its links at once (Grama et al. section 4.7); off: one port, a VP's
  // sends follow one another.
  bool all_port = false;

  // The rule (API.md, "Cost model"), written once: the runtime, meetings and replay use these.
  // A message of `bytes` bytes that leaves at `start` occupies its sender (one port) or the
  // first link of its route (all ports) until sent(start, bytes) = start + ts + tw*m, and
  // arrives over `hops` links at arrival(start, bytes, hops) = start + ts + tw*m + th*hops.
  [[nodiscard]] constexpr double sent(double start, double bytes) const noexcept {
    return start + ts + tw * bytes;
  }
  [[nodiscard]] constexpr double arrival(double start, double bytes, int hops) const noexcept {
    return start + ts + tw * bytes + th * hops;
  }

  bool operator==(const CostModel&) const = default;
};

struct Options {
  Links links = Links::routed;
  Pinning pinning = Pinning::compact;
  CostModel model{};
  bool trace = false;   // record per-message events into Report::events (and the operations)
  bool record = false;  // record each VP's operations for Report::replay (implied by trace)
  // Every unfinished VP blocked in the runtime and nothing delivered for this long: Deadlock.
  std::chrono::nanoseconds deadlock_timeout = std::chrono::seconds(10);
  // When VPs outnumber cores, a small barrier or all-reduce of the whole machine may run as one
  // meeting in shared memory (same results, model time, message and link counts as its
  // messages); false: always the messages.
  bool meetings = true;

  bool operator==(const Options&) const = default;
};

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
