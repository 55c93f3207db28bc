// What a run returns (API.md, "Running virtual processors").
#pragma once

#include <cstdint>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

struct LinkStats {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

// One traced operation of one VP (Options::trace).
struct Event {
  enum class Kind : std::uint8_t { send, recv, sendrecv, collective, wait };
  Kind kind = Kind::send;
  int vp = 0;
  // The other VP (sendrecv: the source of the receive side; wait: the VP waited for); -1 for
  // collectives.
  int peer = -1;
  std::uint64_t bytes = 0;
  double wall_begin = 0;  // seconds since the run started
  double wall_end = 0;
  double model_begin = 0;  // the VP's model clock
  double model_end = 0;
  const char* name = "";    // collective name, or "send"/"recv"/"sendrecv"/"wait"
  const char* algo = "";    // collective algorithm
  std::uint32_t group = 0;  // collectives: the group it ran on (0: the whole machine)
  int depth = 0;            // nesting: 1 inside a collective span, 0 outside
};

// One communication operation of one VP, in program order: what Report::replay re-times.
struct CommOp {
  enum class Kind : std::uint8_t { send, recv, sendrecv };
  Kind kind = Kind::send;
  int dest = -1;  // send, sendrecv
  int src = -1;   // recv, sendrecv
  std::uint64_t bytes_out = 0;
  std::uint64_t bytes_in = 0;
  // A collective's message, not a point-to-point one: the two are taken in order apart (a
  // receive of one kind takes the other's messages ahead of their turn), so a receive matches the
  // k-th message of its own kind from its sender.
  bool collective = false;
};

// The cost model of an offline replay: the online rules (API.md) plus what they lack.
struct ReplayModel {
  CostModel cost{};
  // Half-duplex VPs: a VP sends or receives in one step, never both (CS 584 lecture model), so
  // a sendrecv costs its send and then its receive.
  bool half_duplex = false;
  // Store-and-forward routing: a message arrives after ts + (tw*m + th) * hops instead of
  // ts + tw*m + th*hops (cut-through).
  bool store_and_forward = false;
  // Link contention: transfers that overlap on a directed link serialize, in logical-time order.
  bool contention = false;
};

struct Replay {
  double model_time = 0;
  std::vector<double> clocks;
  // The most messages in transit at once on each directed link used.
  std::map<std::pair<int, int>, int> peak_link_load;
};

class Topology;

struct Report {
  double wall_seconds = 0;
  double model_time = 0;       // max over VPs of the VP's model clock
  std::vector<double> clocks;  // each VP's model clock at the end of the run
  std::uint64_t messages = 0;  // point-to-point messages, collectives included
  std::uint64_t bytes = 0;
  // Keyed by directed topology link (from, to); a routed message counts on every link it crosses.
  std::map<std::pair<int, int>, LinkStats> link_traffic;
  std::vector<Event> events;  // when Options::trace, ordered by wall_begin
  // The names of the groups the traced collectives ran on, by Event::group ("row 2 of
  // mesh:4x4"; the whole machine, 0, is not listed).
  std::map<std::uint32_t, std::string> group_names;
  std::string topology;  // the machine's topology name (Topology::parse reads it)
  // Each VP's communication operations in program order (Options::trace or Options::record).
  std::vector<std::vector<CommOp>> operations;

  // Recomputes every clock offline under `model`, on the run's topology or on another of the
  // same size ("what would this cost on a ring instead?"). Needs the recorded operations.
  [[nodiscard]] Replay replay(const ReplayModel& model) const;
  [[nodiscard]] Replay replay(const ReplayModel& model, const Topology& on) const;

  // Chrome/Perfetto trace JSON: one track per VP in a "wall time" and a "model time" process,
  // a span per collective, send, receive and wait, and a flow arrow per message.
  void write_chrome_trace(const std::string& path) const;
};

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
