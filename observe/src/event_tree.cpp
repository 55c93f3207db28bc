// The pieces of a trace that the Chrome trace and the pictures share: JSON strings, each VP's
// call tree of events, and the matching of sends with receives.
#include "event_tree.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace hypercomm::detail {

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += ch;  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

int traced_vps(const Report& report, int at_least) {
  int vps = std::max(at_least, static_cast<int>(report.clocks.size()));
  for (const Event& e : report.events) vps = std::max(vps, e.vp + 1);
  return vps;
}

namespace {

// Containers open before what they contain when two events start at the same time.
int nesting_rank(Event::Kind k) noexcept {
  switch (k) {
    case Event::Kind::collective: return 0;
    case Event::Kind::wait: return 2;
    default: return 1;
  }
}

bool is_transfer(Event::Kind k) noexcept {
  return k == Event::Kind::send || k == Event::Kind::recv || k == Event::Kind::sendrecv;
}

bool contains(const Event& outer, const Event& inner) noexcept {
  return outer.wall_begin <= inner.wall_begin && inner.wall_end <= outer.wall_end;
}

}  // namespace

std::vector<std::vector<TraceNode>> event_forest(const Report& report, int vps) {
  std::vector<std::vector<std::size_t>> by_vp(static_cast<std::size_t>(vps));
  for (std::size_t i = 0; i < report.events.size(); ++i) {
    const int vp = report.events[i].vp;
    if (vp >= 0 && vp < vps) by_vp[static_cast<std::size_t>(vp)].push_back(i);
  }
  const auto& ev = report.events;
  std::vector<std::vector<TraceNode>> forest(static_cast<std::size_t>(vps));
  for (std::size_t v = 0; v < by_vp.size(); ++v) {
    auto& ids = by_vp[v];
    std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) {
      if (ev[a].wall_begin != ev[b].wall_begin) return ev[a].wall_begin < ev[b].wall_begin;
      if (ev[a].wall_end != ev[b].wall_end) return ev[a].wall_end > ev[b].wall_end;
      return nesting_rank(ev[a].kind) < nesting_rank(ev[b].kind);
    });
    auto& nodes = forest[v];
    nodes.reserve(ids.size());
    std::vector<std::size_t> stack;  // node indices of the open ancestors
    for (const std::size_t id : ids) {
      while (!stack.empty() && !contains(ev[nodes[stack.back()].event], ev[id])) stack.pop_back();
      TraceNode node;
      node.event = id;
      node.parent = stack.empty() ? kNoEvent : stack.back();
      node.level = static_cast<int>(stack.size());
      stack.push_back(nodes.size());
      nodes.push_back(node);
    }
  }
  return forest;
}

TracedMessages traced_messages(const Report& report, int vps) {
  const auto& ev = report.events;
  const auto p = static_cast<std::size_t>(vps);
  // Each VP's transfers in program order, and whether Report::operations describes them.
  std::vector<std::size_t> transfers(p, 0);
  for (const Event& e : ev)
    if (is_transfer(e.kind) && e.vp >= 0 && e.vp < vps) ++transfers[static_cast<std::size_t>(e.vp)];
  std::vector<bool> described(p, false);
  for (std::size_t v = 0; v < p && v < report.operations.size(); ++v)
    described[v] = report.operations[v].size() == transfers[v];

  TracedMessages result;
  std::map<std::pair<int, int>, std::vector<std::size_t>> sent;      // -> message indices
  std::map<std::pair<int, int>, std::vector<std::size_t>> received;  // -> event indices
  std::vector<std::size_t> next_op(p, 0);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (!is_transfer(e.kind) || e.vp < 0 || e.vp >= vps) continue;
    const auto v = static_cast<std::size_t>(e.vp);
    const CommOp* op = described[v] ? &report.operations[v][next_op[v]] : nullptr;
    ++next_op[v];
    if (op != nullptr && static_cast<int>(op->kind) != static_cast<int>(e.kind)) op = nullptr;
    if (e.kind != Event::Kind::recv) {
      TracedMessage m;
      m.src = e.vp;
      m.send_event = i;
      if (e.kind == Event::Kind::send) {
        m.dst = e.peer;
        m.bytes = e.bytes;
      } else if (op != nullptr) {
        m.dst = op->dest;
        m.bytes = op->bytes_out;
      } else {
        m.dst = e.peer;  // a guess: the usual exchange with one partner
        m.bytes = e.bytes / 2;
        result.exact = false;
      }
      if (m.dst >= 0 && m.dst < vps) {
        sent[{m.src, m.dst}].push_back(result.messages.size());
        result.messages.push_back(m);
      }
    }
    if (e.kind != Event::Kind::send && e.peer >= 0 && e.peer < vps)
      received[{e.peer, e.vp}].push_back(i);
  }
  for (const auto& [pair, messages] : sent) {
    const auto it = received.find(pair);
    if (it == received.end()) continue;
    const std::size_t n = std::min(messages.size(), it->second.size());
    for (std::size_t k = 0; k < n; ++k) result.messages[messages[k]].recv_event = it->second[k];
  }
  return result;
}

}  // namespace hypercomm::detail
