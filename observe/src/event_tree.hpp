// Shared by the Chrome trace (chrome_trace.cpp) and the pictures (picture.cpp): JSON string
// escaping, the per-VP nesting of traced events, and the matching of each traced send to its
// receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <hypercomm/report.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace hypercomm::detail {

// `s` as a JSON string literal, quotes included.
[[nodiscard]] std::string json_string(std::string_view s);

inline constexpr std::size_t kNoEvent = static_cast<std::size_t>(-1);

// One traced event placed in its VP's call tree: collective spans contain their sends, receives
// and waits, a receive contains its wait. Built from wall times, which nest by construction.
struct TraceNode {
  std::size_t event = 0;          // index into Report::events
  std::size_t parent = kNoEvent;  // index into the same node vector, kNoEvent at the root
  int level = 0;                  // 0 for a root
};

// Each VP's events in pre-order (parents before children, siblings by start time).
[[nodiscard]] std::vector<std::vector<TraceNode>> event_forest(const Report& report, int vps);

// One point-to-point message of a traced run. A send (or the send side of a sendrecv) of src
// to dst is matched with a receive at dst from src in FIFO order per (src, dst): the k-th send
// from a to b with the k-th receive at b from a.
struct TracedMessage {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  std::size_t send_event = kNoEvent;  // index into Report::events: src's send or sendrecv
  std::size_t recv_event = kNoEvent;  // dst's recv or sendrecv; kNoEvent when never received
};

struct TracedMessages {
  std::vector<TracedMessage> messages;  // in the order their sends were traced
  // False when Report::operations does not cover the events, so that the destination of a
  // sendrecv's outgoing message had to be guessed (taken to be its source): then the matching
  // may be wrong wherever a sendrecv's two partners differ.
  bool exact = true;
};

[[nodiscard]] TracedMessages traced_messages(const Report& report, int vps);

// The number of VPs the events mention (1 + the largest id), at least `at_least`.
[[nodiscard]] int traced_vps(const Report& report, int at_least);

}  // namespace hypercomm::detail
