// What a run returns (API.md, "Running virtual processors").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

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
  const char* name = "";  // collective name, or "send"/"recv"/"sendrecv"/"wait"
  const char* algo = "";  // collective algorithm
  int depth = 0;          // nesting: 1 inside a collective span, 0 outside
};

struct Report {
  double wall_seconds = 0;
  double model_time = 0;       // max over VPs of the VP's model clock
  std::vector<double> clocks;  // each VP's model clock at the end of the run
  std::uint64_t messages = 0;  // point-to-point messages, collectives included
  std::uint64_t bytes = 0;
  // Keyed by directed topology link (from, to); a routed message counts on every link it crosses.
  std::map<std::pair<int, int>, LinkStats> link_traffic;
  std::vector<Event> events;  // when Options::trace, ordered by wall_begin

  // Chrome/Perfetto trace JSON: one track per VP.
  void write_chrome_trace(const std::string& path) const;
};

}  // namespace hypercomm
