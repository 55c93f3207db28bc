// write_svg: a traced run drawn step by step, the way Grama et al. draw their collectives (see
// picture.hpp), and svg_to_png.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/errors.hpp>
#include <hypercomm/picture.hpp>
#include <map>
#include <utility>

#include "event_tree.hpp"
#include "picture_svg.hpp"

namespace hypercomm {

namespace {

// A model time in the model's own units (seconds once calibrated), three significant digits.
std::string model_time_text(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", t);
  return buf;
}

using detail::kNoEvent;
using detail::picture::bytes_text;
using detail::picture::Layout;
using detail::picture::Point;
using detail::picture::Svg;

constexpr double kTitle = 40;   // height of a panel's title
constexpr double kHeader = 58;  // height of the picture's header
constexpr double kGap = 14;     // between panels
constexpr double kMaxWidth = 1500;

struct Step {
  int call = -1;         // index of the collective call on each VP, -1 outside any
  long time = 0;         // the sends' start under unit costs
  double model = 1e300;  // the earliest model time a send of the step starts
  std::vector<std::size_t> messages;
  int number = 0;  // 1-based within its call
  int of = 0;      // steps of its call
};

struct Steps {
  std::vector<Step> steps;
  std::vector<const Event*> calls;  // the collective event of each call (on its first VP)
  detail::TracedMessages traced;
};

bool is_transfer(Event::Kind k) {
  return k == Event::Kind::send || k == Event::Kind::recv || k == Event::Kind::sendrecv;
}

// Unit-cost start time of every message's send: the cost model with ts = 1, tw = th = 0
// replayed over the traced operations (a send takes 1; a receive ends no earlier than its
// message's send + 1; a sendrecv both).
std::vector<long> unit_times(const Report& r, const std::vector<std::vector<std::size_t>>& ops,
                             const detail::TracedMessages& traced) {
  std::vector<std::size_t> out_msg(r.events.size(), kNoEvent), in_msg(r.events.size(), kNoEvent);
  for (std::size_t m = 0; m < traced.messages.size(); ++m) {
    out_msg[traced.messages[m].send_event] = m;
    if (traced.messages[m].recv_event != kNoEvent) in_msg[traced.messages[m].recv_event] = m;
  }
  std::vector<long> sent(traced.messages.size(), -1);
  std::vector<long> clock(ops.size(), 0);
  std::vector<std::size_t> next(ops.size(), 0);
  bool force = false;  // a receive whose message never became ready: take it as arrived
  for (bool busy = true; busy;) {
    busy = false;
    bool progress = false;
    for (std::size_t v = 0; v < ops.size(); ++v) {
      while (next[v] < ops[v].size()) {
        busy = true;
        const std::size_t e = ops[v][next[v]];
        if (out_msg[e] != kNoEvent && sent[out_msg[e]] < 0) sent[out_msg[e]] = clock[v];
        const std::size_t in = in_msg[e];
        const bool ready = in == kNoEvent || sent[in] >= 0;
        if (!ready && !force) break;
        force = false;
        const long arrival = ready && in != kNoEvent ? sent[in] + 1 : 0;
        const Event::Kind kind = r.events[e].kind;
        if (kind == Event::Kind::send) clock[v] += 1;
        if (kind == Event::Kind::recv) clock[v] = std::max(clock[v], arrival);
        if (kind == Event::Kind::sendrecv) clock[v] = std::max(clock[v] + 1, arrival);
        ++next[v];
        progress = true;
      }
    }
    if (busy && !progress) force = true;
  }
  return sent;
}

Steps find_steps(const Report& r, int p) {
  Steps result;
  result.traced = detail::traced_messages(r, p);
  const auto forest = detail::event_forest(r, p);
  // The collective call each event belongs to (its outermost collective span), and each VP's
  // transfers in program order.
  std::vector<int> call_of(r.events.size(), -1);
  std::vector<std::vector<std::size_t>> ops(static_cast<std::size_t>(p));
  for (std::size_t v = 0; v < forest.size(); ++v) {
    int calls = 0, current = -1;
    for (const detail::TraceNode& node : forest[v]) {
      const Event& e = r.events[node.event];
      if (node.level == 0) current = e.kind == Event::Kind::collective ? calls++ : -1;
      if (node.level == 0 && current >= static_cast<int>(result.calls.size()))
        result.calls.push_back(&e);
      call_of[node.event] = current;
      if (is_transfer(e.kind)) ops[v].push_back(node.event);
    }
  }
  const std::vector<long> sent = unit_times(r, ops, result.traced);
  std::map<std::pair<int, long>, Step> by_key;
  for (std::size_t m = 0; m < result.traced.messages.size(); ++m) {
    const Event& e = r.events[result.traced.messages[m].send_event];
    Step& s = by_key[{call_of[result.traced.messages[m].send_event], sent[m]}];
    s.call = call_of[result.traced.messages[m].send_event];
    s.time = sent[m];
    s.model = std::min(s.model, e.model_begin);
    s.messages.push_back(m);
  }
  for (auto& [key, step] : by_key) result.steps.push_back(std::move(step));
  for (std::size_t i = 0; i < result.steps.size(); ++i) {
    const bool first = i == 0 || result.steps[i - 1].call != result.steps[i].call;
    result.steps[i].number = first ? 1 : result.steps[i - 1].number + 1;
  }
  for (std::size_t i = result.steps.size(); i-- > 0;) {
    const bool last =
        i + 1 == result.steps.size() || result.steps[i + 1].call != result.steps[i].call;
    result.steps[i].of = last ? result.steps[i].number : result.steps[i + 1].of;
  }
  return result;
}

constexpr double kLabel = 11;  // font size of the knowledge labels

// The label of every VP after every step: the VPs it has heard from since its collective call
// began. A message u -> v adds to v what u knew when the step began.
std::vector<std::vector<std::string>> knowledge(const Steps& all, int p) {
  std::vector<std::vector<std::string>> labels;
  std::vector<std::vector<bool>> knows;
  for (const Step& step : all.steps) {
    if (step.number == 1) {  // a new collective call: every VP knows itself only
      knows.assign(static_cast<std::size_t>(p), std::vector<bool>(static_cast<std::size_t>(p)));
      for (std::size_t v = 0; v < knows.size(); ++v) knows[v][v] = true;
    }
    const auto before = knows;
    for (std::size_t m : step.messages) {
      const auto& msg = all.traced.messages[m];
      auto& to = knows[static_cast<std::size_t>(msg.dst)];
      const auto& from = before[static_cast<std::size_t>(msg.src)];
      for (std::size_t k = 0; k < to.size(); ++k) to[k] = to[k] || from[k];
    }
    labels.emplace_back();
    for (const auto& set : knows) labels.back().push_back(detail::picture::ranges(set));
  }
  return labels;
}

// A panel: its size and where the layout's origin sits in it (below the title).
struct Panel {
  double width = 0;
  double height = 0;
  Point shift;
};

Panel panel_of(const Layout& l, const std::vector<std::vector<std::string>>& labels) {
  double x0 = 0, y0 = 0, x1 = l.width, y1 = l.height;
  for (const auto& step : labels)
    for (std::size_t i = 0; i < step.size(); ++i) {
      const auto b = detail::picture::label_box(l, i, step[i], kLabel);
      x0 = std::min(x0, b.x0 - 8), x1 = std::max(x1, b.x1 + 8);
      y0 = std::min(y0, b.y0 - 6), y1 = std::max(y1, b.y1 + 6);
    }
  Panel panel{std::max(x1 - x0, 270.0), y1 - y0 + kTitle, Point{-x0, kTitle - y0}};
  panel.shift.x += (panel.width - (x1 - x0)) / 2;
  return panel;
}

void draw_step(Svg& svg, const Topology& t, const Layout& l, const Panel& panel, Point at,
               const Step& step, const Steps& all, const std::vector<std::string>& labels) {
  using detail::picture::num;
  const auto& traced = all.traced.messages;
  svg.raw("<g class=\"panel\">\n<rect x=\"" + num(at.x) + "\" y=\"" + num(at.y) + "\" width=\"" +
          num(panel.width) + "\" height=\"" + num(panel.height) +
          "\" rx=\"6\" fill=\"#fbfbfb\" stroke=\"#dddddd\"/>\n");
  std::string title = "point-to-point";
  if (step.call >= 0 && static_cast<std::size_t>(step.call) < all.calls.size()) {
    const Event& c = *all.calls[static_cast<std::size_t>(step.call)];
    title = std::string(c.name) + " (" + c.algo + ")";
  }
  svg.text({at.x + 10, at.y + 17}, title, 13, "start",
           "font-weight=\"bold\" class=\"panel-title\"");
  std::uint64_t bytes = 0;
  for (std::size_t m : step.messages) bytes += traced[m].bytes;
  svg.text({at.x + 10, at.y + 33},
           "step " + std::to_string(step.number) + " of " + std::to_string(step.of) + " \u00b7 " +
               std::to_string(step.messages.size()) + " msg \u00b7 " + bytes_text(bytes) +
               " \u00b7 t = " + model_time_text(step.model),
           10.5, "start", "fill=\"#555\"");
  const Point origin{at.x + panel.shift.x, at.y + panel.shift.y};
  std::vector<std::string> fills(static_cast<std::size_t>(t.size()), "white");
  for (std::size_t m : step.messages) fills[static_cast<std::size_t>(traced[m].dst)] = "#fde3a0";
  svg.topology(t, l, origin, fills);
  for (std::size_t m : step.messages) {
    const auto& msg = traced[m];
    const auto path = detail::picture::connection(t, l, msg.src, msg.dst);
    svg.raw("<path class=\"msg\" d=\"" + detail::picture::path_d(path, origin, 3.2, l.node_r + 1) +
            "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" marker-end=\"url(#head)\"" +
            (path.routed ? " stroke-dasharray=\"5 3\"" : "") + "><title>" +
            std::to_string(msg.src) + " \u2192 " + std::to_string(msg.dst) + ": " +
            bytes_text(msg.bytes) + "</title></path>\n");
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto b = detail::picture::label_box(l, i, labels[i], kLabel);
    svg.text({b.at.x + origin.x, b.at.y + origin.y}, labels[i], kLabel, b.anchor,
             "class=\"knows\" fill=\"#1f4e9c\" font-weight=\"bold\"");
  }
  svg.raw("</g>\n");
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void write_svg(const Report& report, const Topology& topology, const std::string& path) {
  if (report.events.empty())
    throw Error("write_svg: the report has no events; run with Options::trace = true");
  detail::picture::check_topology(report, topology, "write_svg");
  const int p = topology.size();
  const Steps all = find_steps(report, p);
  const auto labels = knowledge(all, p);
  double label_width = 0;
  for (const auto& step : labels)
    for (const auto& text : step)
      label_width = std::max(label_width, detail::picture::text_width(text, kLabel));
  const Layout l = detail::picture::layout_of(topology, label_width);
  const Panel panel = panel_of(l, labels);

  // Each collective call starts a new row of panels, wrapping when wider than kMaxWidth.
  const double pw = panel.width + kGap, ph = panel.height + kGap;
  const int per_row = std::max(1, static_cast<int>((kMaxWidth + kGap) / pw));
  std::vector<Point> place;
  int rows = 0, col = per_row, widest = 1;
  for (std::size_t i = 0; i < all.steps.size(); ++i) {
    if (col == per_row || all.steps[i].number == 1) col = 0, ++rows;
    place.push_back({kGap + col * pw, kHeader + (rows - 1) * ph});
    widest = std::max(widest, ++col);
  }
  Svg svg(std::max(kGap + widest * pw, 900.0), kHeader + std::max(rows, 1) * ph);
  const std::string head = topology.name() + ": " + std::to_string(all.steps.size()) +
                           (all.steps.size() == 1 ? " step, " : " steps, ") +
                           std::to_string(all.traced.messages.size()) + " messages, model time " +
                           model_time_text(report.model_time);
  svg.text({kGap, 22}, head, 15, "start", "font-weight=\"bold\"");
  svg.text({kGap, 42},
           "Red arrows: the step's messages (dashed: routed over several links). Blue, beside "
           "each VP: the VPs it has heard from so far in the collective. Shaded: receivers.",
           11, "start", "fill=\"#444\"");
  if (all.steps.empty()) svg.text({kGap, kHeader + 20}, "(no messages were sent)", 12, "start");
  if (!all.traced.exact)
    svg.text({kGap, kHeader - 4},
             "Report::operations is missing: sendrecv destinations are guessed.", 10, "start",
             "fill=\"#b00\"");
  for (std::size_t i = 0; i < all.steps.size(); ++i)
    draw_step(svg, topology, l, panel, place[i], all.steps[i], all, labels[i]);
  svg.save(path, "write_svg");
}

bool svg_to_png(const std::string& svg, const std::string& png) {
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) return false;
  const std::string command =
      "rsvg-convert -b white -o " + shell_quote(png) + " " + shell_quote(svg) + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

}  // namespace hypercomm
