// write_chrome_trace (picture.hpp; Report::write_chrome_trace): a Chrome/Perfetto trace (JSON, "X"
// complete events), one track per VP, twice: process 1 "wall time" (seconds since the run started)
// and process 2 "model time" (one model time unit drawn as one second). Collective spans contain
// their sends, receives and waits, and an arrow (flow event) joins each send to its receive.
//
// Times are written in microseconds with three decimals, rounded to the nanosecond first, so
// that a viewer reading them back gets exactly the integer nanoseconds we nested: every child
// lies within its parent and siblings never overlap.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <hypercomm/errors.hpp>
#include <hypercomm/picture.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>

#include "event_tree.hpp"

namespace hypercomm {

namespace {

using detail::kNoEvent;
using detail::TraceNode;

constexpr int kWallPid = 1;
constexpr int kModelPid = 2;

// VP v is thread v + 1 (tid 0 means "no thread" to some viewers).
int tid_of(int vp) noexcept { return vp + 1; }

std::int64_t to_ns(double seconds) noexcept {
  constexpr double kMax = 9e18;
  const double ns = seconds * 1e9;
  if (!(ns > 0)) return 0;  // negative or NaN
  return ns >= kMax ? static_cast<std::int64_t>(kMax) : std::llround(ns);
}

// Nanoseconds as microseconds with exactly three decimals.
void put_us(std::string& out, std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  out += buf;
}

const char* kind_name(Event::Kind k) noexcept {
  switch (k) {
    case Event::Kind::send: return "send";
    case Event::Kind::recv: return "recv";
    case Event::Kind::sendrecv: return "sendrecv";
    case Event::Kind::collective: return "collective";
    case Event::Kind::wait: return "wait";
  }
  return "event";
}

struct Span {
  std::int64_t b = 0;
  std::int64_t e = 0;
};

// Each node's span in one clock, clamped so that children stay inside their parents and
// siblings follow each other (a no-op for a well-formed trace; rounding cannot break it either,
// since rounding is monotonic, but a hand-made Report might).
std::vector<Span> place(const std::vector<TraceNode>& nodes, const std::vector<Event>& events,
                        bool model) {
  std::vector<Span> spans(nodes.size());
  std::vector<std::int64_t> last_child_end(nodes.size(), 0);
  std::int64_t last_root_end = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Event& e = events[nodes[i].event];
    Span s{to_ns(model ? e.model_begin : e.wall_begin), to_ns(model ? e.model_end : e.wall_end)};
    const std::size_t parent = nodes[i].parent;
    std::int64_t& previous_end = parent == kNoEvent ? last_root_end : last_child_end[parent];
    s.b = std::max(s.b, previous_end);
    s.e = std::max(s.e, s.b);
    if (parent != kNoEvent) {
      s.b = std::min(std::max(s.b, spans[parent].b), spans[parent].e);
      s.e = std::min(std::max(s.e, s.b), spans[parent].e);
    }
    previous_end = s.e;
    last_child_end[i] = s.b;
    spans[i] = s;
  }
  return spans;
}

// A point inside node i and outside its children, near its start (where a send leaves) or its
// end (where a receive completes), for binding a flow arrow to this very slice.
std::int64_t flow_point(const std::vector<TraceNode>& nodes, const std::vector<Span>& spans,
                        std::size_t i, bool at_end) {
  const Span s = spans[i];
  std::int64_t first_child = s.e;
  std::int64_t last_child = s.b;
  for (std::size_t c = i + 1; c < nodes.size() && nodes[c].level > nodes[i].level; ++c) {
    if (nodes[c].parent != i) continue;
    first_child = std::min(first_child, spans[c].b);
    last_child = std::max(last_child, spans[c].e);
  }
  if (!at_end && first_child - s.b >= 2) return s.b + 1;
  if (at_end && s.e - last_child >= 2) return s.e - 1;
  return s.b + (s.e - s.b) / 2;
}

class TraceWriter {
  // The name of the group a collective span ran on, from its id and the run's topology.
  [[nodiscard]] std::string group_name(std::uint32_t id) const {
    if (const auto found = r_.group_names.find(id); found != r_.group_names.end())
      return found->second;
    return "group " + std::to_string(id);
  }

 public:
  explicit TraceWriter(const Report& r)
      : r_(r),
        vps_(detail::traced_vps(r, 0)),
        forest_(detail::event_forest(r, vps_)),
        messages_(detail::traced_messages(r, vps_)),
        outgoing_(r.events.size(), kNoEvent) {
    for (std::size_t m = 0; m < messages_.messages.size(); ++m)
      outgoing_[messages_.messages[m].send_event] = m;
  }

  std::string json() {
    out_ = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"topology\":" +
           detail::json_string(r_.topology) + ",\"vps\":" + std::to_string(vps_) +
           ",\"messages\":" + std::to_string(r_.messages) +
           ",\"bytes\":" + std::to_string(r_.bytes) + "},\"traceEvents\":[";
    metadata(kWallPid, "wall time", 0);
    metadata(kModelPid, "model time (1 unit = 1 s)", 1);
    for (const bool model : {false, true}) {
      std::vector<std::vector<Span>> spans;
      for (const auto& nodes : forest_) spans.push_back(place(nodes, r_.events, model));
      for (std::size_t v = 0; v < forest_.size(); ++v)
        for (std::size_t i = 0; i < forest_[v].size(); ++i)
          slice(model ? kModelPid : kWallPid, forest_[v][i], spans[v][i]);
      flows(model, spans);
    }
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  void begin_record() {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
  }

  void metadata(int pid, const char* process, int sort_index) {
    begin_record();
    out_ += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"args\":{\"name\":" + detail::json_string(process) + "}}";
    begin_record();
    out_ += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"args\":{\"sort_index\":" + std::to_string(sort_index) + "}}";
    for (int vp = 0; vp < vps_; ++vp) {
      const std::string ids =
          ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid_of(vp));
      begin_record();
      out_ += "{\"name\":\"thread_name\",\"ph\":\"M\"" + ids + ",\"args\":{\"name\":\"VP " +
              std::to_string(vp) + "\"}}";
      begin_record();
      out_ += "{\"name\":\"thread_sort_index\",\"ph\":\"M\"" + ids +
              ",\"args\":{\"sort_index\":" + std::to_string(vp) + "}}";
    }
  }

  void slice(int pid, const TraceNode& node, Span s) {
    const Event& e = r_.events[node.event];
    begin_record();
    out_ += "{\"name\":" + detail::json_string(e.name) + ",\"cat\":\"" + kind_name(e.kind) +
            "\",\"ph\":\"X\",\"pid\":" + std::to_string(pid) +
            ",\"tid\":" + std::to_string(tid_of(e.vp)) + ",\"ts\":";
    put_us(out_, s.b);
    out_ += ",\"dur\":";
    put_us(out_, s.e - s.b);
    out_ += ",\"args\":{";
    const std::string bytes = std::to_string(e.bytes);
    const std::size_t m = outgoing_[node.event];
    switch (e.kind) {
      case Event::Kind::collective:
        out_ += "\"algorithm\":" + detail::json_string(e.algo) + ",\"bytes\":" + bytes;
        if (e.group != 0)  // spans of a group's collective say which group ("row 2 of mesh:4x4")
          out_ += ",\"group\":" + detail::json_string(group_name(e.group));
        break;
      case Event::Kind::send:
        out_ += "\"to\":" + std::to_string(e.peer) + ",\"bytes\":" + bytes;
        break;
      case Event::Kind::recv:
        out_ += "\"from\":" + std::to_string(e.peer) + ",\"bytes\":" + bytes;
        break;
      case Event::Kind::sendrecv:
        out_ += "\"from\":" + std::to_string(e.peer) + ",\"bytes\":" + bytes;
        if (m != kNoEvent && messages_.exact) {  // else the destination is a guess
          const std::uint64_t sent = messages_.messages[m].bytes;
          out_ += ",\"to\":" + std::to_string(messages_.messages[m].dst) +
                  ",\"bytes_out\":" + std::to_string(sent) +
                  ",\"bytes_in\":" + std::to_string(e.bytes - std::min(sent, e.bytes));
        }
        break;
      case Event::Kind::wait: out_ += "\"for\":" + std::to_string(e.peer); break;
    }
    out_ += "}}";
  }

  // A flow arrow from each message's sending slice to its receiving slice.
  void flows(bool model, const std::vector<std::vector<Span>>& spans) {
    if (!messages_.exact) return;  // a guessed destination could draw a wrong arrow
    std::vector<std::size_t> node_of(r_.events.size(), kNoEvent);
    for (const auto& nodes : forest_)
      for (std::size_t i = 0; i < nodes.size(); ++i) node_of[nodes[i].event] = i;
    const int pid = model ? kModelPid : kWallPid;
    const std::size_t first_id = model ? messages_.messages.size() + 1 : 1;
    for (std::size_t k = 0; k < messages_.messages.size(); ++k) {
      const detail::TracedMessage& m = messages_.messages[k];
      if (m.recv_event == kNoEvent) continue;
      const auto src = static_cast<std::size_t>(m.src);
      const auto dst = static_cast<std::size_t>(m.dst);
      const std::size_t s = node_of[m.send_event];
      const std::size_t f = node_of[m.recv_event];
      if (s == kNoEvent || f == kNoEvent) continue;
      const std::string id = std::to_string(first_id + k);
      begin_record();
      out_ += R"({"name":"message","cat":"message","ph":"s","id":)" + id +
              ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid_of(m.src)) +
              ",\"ts\":";
      put_us(out_, flow_point(forest_[src], spans[src], s, false));
      out_ += "}";
      begin_record();
      out_ += R"({"name":"message","cat":"message","ph":"f","bp":"e","id":)" + id +
              ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid_of(m.dst)) +
              ",\"ts\":";
      put_us(out_, flow_point(forest_[dst], spans[dst], f, true));
      out_ += "}";
    }
  }

  const Report& r_;
  int vps_;
  std::vector<std::vector<TraceNode>> forest_;
  detail::TracedMessages messages_;
  std::vector<std::size_t> outgoing_;  // event index -> index of the message it sends
  std::string out_;
  bool first_ = true;
};

}  // namespace

void write_chrome_trace(const Report& report, const std::string& path) {
  const std::string text = TraceWriter(report).json();
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("write_chrome_trace: cannot open '" + path + "' for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error("write_chrome_trace: writing '" + path + "' failed");
}

// The member API.md names, over the free function: observability is a layer over the plain-data
// Report, not a part of it.
void Report::write_chrome_trace(const std::string& path) const {
  hypercomm::write_chrome_trace(*this, path);
}

}  // namespace hypercomm
