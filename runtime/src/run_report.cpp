// The run's Report (Fabric::collect, complete): clocks, messages and bytes from the VPs' ports,
// link traffic from the link counters and the grid's straight runs, events in wall-time order;
// under the contention model the clocks replayed (replay.cpp).
#include <algorithm>
#include <cstdint>
#include <hypercomm/report.hpp>
#include <vector>

#include "fabric.hpp"
#include "group_info.hpp"
#include "port.hpp"

namespace hypercomm::detail {

Report Fabric::collect(double wall_seconds) const {
  Report r;
  r.wall_seconds = wall_seconds;
  r.topology = topology_.name();
  r.clocks.reserve(static_cast<std::size_t>(last_ - first_));
  for (int i = first_; i < last_; ++i) {
    const Port& port = *ports_[static_cast<std::size_t>(i)];
    r.clocks.push_back(port.clock_);
    r.model_time = std::max(r.model_time, port.clock_);
    r.messages += port.messages_sent_;
    r.bytes += port.bytes_sent_;
    r.events.insert(r.events.end(), port.events_.begin(), port.events_.end());
    if (port.recording_) r.operations.push_back(port.operations_);
  }
  // The straight runs' marks summed along each line of the grid: link (id, slot) carried the
  // runs marked at or before it on its line, in the slot's order.
  const std::size_t counters = static_cast<std::size_t>(size_) * link_stride_;
  std::vector<std::uint64_t> run_messages(run_marks_ != nullptr ? counters : 0);
  std::vector<std::uint64_t> run_bytes(run_messages.size());
  if (run_marks_ != nullptr) {
    const int rows = topology_.rows(), cols = topology_.cols();
    for (int slot = 0; slot < topology_.max_degree(); ++slot) {
      const bool along_row = slot < 2;
      for (int line = 0; line < (along_row ? rows : cols); ++line) {
        std::uint64_t messages = 0, bytes = 0;
        for (int at = 0; at < (along_row ? cols : rows); ++at) {
          const std::size_t i = link_index(along_row ? line * cols + at : at * cols + line, slot);
          messages += run_marks_[i].messages.load(std::memory_order_relaxed);
          bytes += run_marks_[i].bytes.load(std::memory_order_relaxed);
          run_messages[i] = messages;
          run_bytes[i] = bytes;
        }
      }
    }
  }
  for (int from = 0; from < size_; ++from) {
    for (int to : topology_.neighbors(from)) {
      const int slot = topology_.link_slot(from, to);
      const LinkCounter& c = link_counter(from, slot);
      std::uint64_t messages = c.messages(), bytes = c.bytes();
      if (!run_messages.empty()) {
        messages += run_messages[link_index(from, slot)];
        bytes += run_bytes[link_index(from, slot)];
      }
      if (messages > 0) r.link_traffic[{from, to}] = LinkStats{messages, bytes};
    }
  }
  return r;
}

Report Fabric::complete(Report r) const {
  std::stable_sort(r.events.begin(), r.events.end(),
                   [](const Event& a, const Event& b) { return a.wall_begin < b.wall_begin; });
  for (const Event& e : r.events)
    if (e.group != 0 && !r.group_names.contains(e.group))
      r.group_names.emplace(e.group, group_name(e.group, topology_));
  if (options_.model.contention) {
    // Messages that share a directed link at overlapping model times serialize on it: the
    // run's operations replayed in logical-time order (replay.cpp states the rule exactly).
    const Replay timed = r.replay(ReplayModel{.cost = options_.model, .contention = true});
    r.clocks = timed.clocks;
    r.model_time = timed.model_time;
    if (!options_.trace && !options_.record) r.operations.clear();
  }
  return r;
}

}  // namespace hypercomm::detail
