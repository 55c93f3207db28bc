// Where each VP of a ring, a linear array, a mesh (torus or open) or a hypercube is drawn, how
// links and messages between them are drawn, and the small SVG writer the pictures share.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <hypercomm/errors.hpp>
#include <numbers>

#include "picture_svg.hpp"

namespace hypercomm::detail::picture {

namespace {

constexpr double kStub = 28;  // length of a wraparound stub

Point operator+(Point a, Point b) { return {a.x + b.x, a.y + b.y}; }
Point operator-(Point a, Point b) { return {a.x - b.x, a.y - b.y}; }
Point operator*(Point a, double k) { return {a.x * k, a.y * k}; }
double length(Point a) { return std::hypot(a.x, a.y); }
Point unit(Point a) {
  const double n = length(a);
  return n > 1e-9 ? a * (1 / n) : Point{0, 0};
}

// Moves the drawing, its VPs and the peaks of its curved links, to start `pad` from the top
// left corner and sets its size, with `pad` to spare on every side.
void frame(const Topology& t, Layout& l, Point pad) {
  std::vector<Point> points = l.at;
  for (const auto& [u, v] : undirected_links(t))
    for (const Segment& s : connection(t, l, u, v).parts)
      if (s.curved) points.push_back((s.a + s.b) * 0.25 + s.c * 0.5);
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
  for (const Point& p : points) {
    x0 = std::min(x0, p.x), y0 = std::min(y0, p.y);
    x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
  }
  for (Point& p : l.at) p = p + Point{pad.x - x0, pad.y - y0};
  l.width = x1 - x0 + 2 * pad.x;
  l.height = y1 - y0 + 2 * pad.y;
}

Layout ring_layout(int p) {
  Layout l;
  const double r = p == 1 ? 0 : std::max(70.0, 11.0 * p);
  for (int i = 0; i < p; ++i) {
    const double a = 2 * std::numbers::pi * i / p;
    l.at.push_back({r * std::sin(a), -r * std::cos(a)});
  }
  return l;
}

// A grid: VP i in column column_of(i) and row row_of(i), sx and sy apart.
Layout grid_layout(int p, auto&& column_of, auto&& row_of, double sx, double sy) {
  Layout l;
  for (int i = 0; i < p; ++i) l.at.push_back({column_of(i) * sx, row_of(i) * sy});
  return l;
}

// d <= 4: bit 0 to the right, bit 1 up, bit 2 into the page (up and to the right, as the book
// draws its cube), bit 3 a second cube beside the first, lower by half an edge so that the
// straight links between the cubes pass clear of every VP.
Layout cube_layout(int d) {
  Layout l;
  constexpr double s = 120;
  const Point depth{0.55 * s, -0.42 * s};
  const int p = 1 << d;
  for (int i = 0; i < p; ++i) {
    const auto bit = [&](int k) { return static_cast<double>((i >> k) & 1); };
    l.at.push_back(Point{bit(0) * s, (1 - bit(1)) * s} + depth * bit(2) +
                   Point{2.65 * s, 0.6 * s} * bit(3));
  }
  return l;
}

// d > 4: the low half of the bits (the larger half) along a row, the high half down a column, each
// in Gray-code order so that the VPs beside each other are neighbours.
Layout projected_layout(int d, double sx) {
  const int lo = (d + 1) / 2;
  const unsigned mask = (1u << lo) - 1;
  return grid_layout(
      1 << d,
      [&](int i) { return static_cast<double>(gray_inverse(static_cast<unsigned>(i) & mask)); },
      [&](int i) { return static_cast<double>(gray_inverse(static_cast<unsigned>(i) >> lo)); }, sx,
      62);
}

// Each VP's label goes into the widest empty angle between its links; among about equal ones,
// the one nearest the lower right.
void place_labels(const Topology& t, Layout& l) {
  constexpr double kTwoPi = 2 * std::numbers::pi;
  for (int u = 0; u < t.size(); ++u) {
    std::vector<double> angles;
    for (int v : t.neighbors(u)) {
      const Path path = connection(t, l, u, v);
      const Segment& s = path.parts.front();
      const Point d = (s.curved ? s.c : s.b) - s.a;
      angles.push_back(std::atan2(d.y, d.x));
    }
    std::sort(angles.begin(), angles.end());
    Point best{0.8, 0.6};
    double widest = -1, best_score = 0;
    for (std::size_t k = 0; k < angles.size(); ++k) {
      const double from = angles[k];
      const double to = k + 1 < angles.size() ? angles[k + 1] : angles.front() + kTwoPi;
      const double mid = (from + to) / 2, gap = to - from;
      const Point dir{std::cos(mid), std::sin(mid)};
      const double score = dir.x + dir.y;  // nearest the lower right
      if (gap > widest + 0.05 || (gap > widest - 0.05 && score > best_score)) {
        widest = std::max(widest, gap);
        best = dir;
        best_score = score;
      }
    }
    l.label_dir.push_back(best);
  }
}

Segment line(Point a, Point b) { return {a, Point{}, b, false}; }

// An arc from a to b bowing `bow` to the left of its direction.
Segment arc(Point a, Point b, double bow) {
  const Point mid = (a + b) * 0.5;
  const Point d = unit(b - a);
  return {a, mid + Point{d.y, -d.x} * bow, b, true};
}

}  // namespace

Layout layout_of(const Topology& t, double label_width) {
  // Grids leave room for a label between a VP and the next one in its row.
  const double sx = std::max(84.0, label_width + 34);
  Layout l;
  switch (t.kind()) {
    case Topology::Kind::ring: l = ring_layout(t.size()); break;
    case Topology::Kind::linear:  // one row of the grid, as the book draws a linear array
    case Topology::Kind::mesh:
      l = grid_layout(
          t.size(), [&](int i) { return static_cast<double>(t.col_of(i)); },
          [&](int i) { return static_cast<double>(t.row_of(i)); }, sx, 66);
      break;
    case Topology::Kind::hypercube:
      l = t.dimension() <= 4 ? cube_layout(t.dimension()) : projected_layout(t.dimension(), sx);
      break;
  }
  frame(t, l, {36, 32});
  place_labels(t, l);
  return l;
}

Path connection(const Topology& t, const Layout& l, int u, int v) {
  const Point a = l.at[static_cast<std::size_t>(u)], b = l.at[static_cast<std::size_t>(v)];
  Path path;
  if (!t.adjacent(u, v)) {
    path.parts.push_back(line(a, b));
    path.routed = true;
    return path;
  }
  if (t.kind() == Topology::Kind::mesh && t.wraps()) {
    // A wraparound link leaves u off the edge of the grid and enters v from the other edge (an
    // open mesh and a linear array have none: all their links join VPs beside each other).
    const int dr = t.row_of(v) - t.row_of(u), dc = t.col_of(v) - t.col_of(u);
    Point out{};
    if (dr == 0 && std::abs(dc) > 1) out = {dc < 0 ? kStub : -kStub, 0};
    if (dc == 0 && std::abs(dr) > 1) out = {0, dr < 0 ? kStub : -kStub};
    if (out.x != 0 || out.y != 0) {
      path.parts.push_back({a, Point{}, a + out, false});
      path.parts.push_back({b - out, Point{}, b, false});
      return path;
    }
  }
  if (t.kind() == Topology::Kind::hypercube) {
    const int d = t.dimension();
    const int bit = std::countr_zero(static_cast<unsigned>(u ^ v));
    if (d > 4) {
      // Not beside each other in the grid (see projected_layout): an arc, bowing to one side
      // for even dimensions and to the other for odd ones.
      const int lo = (d + 1) / 2;
      const unsigned mask = (1u << lo) - 1;
      const auto cu = static_cast<int>(gray_inverse(static_cast<unsigned>(u) & mask));
      const auto cv = static_cast<int>(gray_inverse(static_cast<unsigned>(v) & mask));
      const auto ru = static_cast<int>(gray_inverse(static_cast<unsigned>(u) >> lo));
      const auto rv = static_cast<int>(gray_inverse(static_cast<unsigned>(v) >> lo));
      if (std::abs(cu - cv) + std::abs(ru - rv) > 1) {
        const bool left = (bit % 2 == 0) == (a.x + a.y < b.x + b.y);
        path.parts.push_back(arc(a, b, (left ? 1 : -1) * (0.16 * length(b - a) + 8)));
        return path;
      }
    }
  }
  path.parts.push_back(line(a, b));
  return path;
}

std::vector<std::pair<int, int>> undirected_links(const Topology& t) {
  std::vector<std::pair<int, int>> links;
  for (int u = 0; u < t.size(); ++u)
    for (int v : t.neighbors(u))
      if (u < v) links.emplace_back(u, v);
  return links;
}

void check_topology(const Report& r, const Topology& t, const char* what) {
  if (!r.topology.empty() && r.topology != t.name())
    throw Error(std::string(what) + ": the report is of a run on " + r.topology + ", not on " +
                t.name());
  for (const Event& e : r.events)
    if (e.vp < 0 || e.vp >= t.size() || e.peer >= t.size())
      throw Error(std::string(what) + ": the report's events name VP " +
                  std::to_string(std::max(e.vp, e.peer)) + ", which " + t.name() + " lacks");
  for (const auto& [link, stats] : r.link_traffic)
    if (!t.adjacent(link.first, link.second))
      throw Error(std::string(what) + ": the report's link " + std::to_string(link.first) + " -> " +
                  std::to_string(link.second) + " is not a link of " + t.name());
}

std::string path_d(const Path& p, Point origin, double offset, double r) {
  std::string d;
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    Segment s = p.parts[k];
    const Point dir = unit(s.b - s.a);
    const Point right{-dir.y, dir.x};  // y grows downwards
    const Point shift = origin + right * offset;
    s.a = s.a + shift, s.b = s.b + shift, s.c = s.c + shift;
    // Cut back the ends that sit on a VP: a stub's outer end does not.
    const bool cut_a = p.parts.size() == 1 || k == 0;
    const bool cut_b = p.parts.size() == 1 || k + 1 == p.parts.size();
    const double room = length(s.b - s.a);
    const double cut = std::min(r, std::max(0.0, (room - 6) / 2));
    if (cut_a) s.a = s.a + unit((s.curved ? s.c : s.b) - s.a) * cut;
    if (cut_b) s.b = s.b - unit(s.b - (s.curved ? s.c : s.a)) * cut;
    d += (k == 0 ? "M" : " M") + num(s.a.x) + "," + num(s.a.y);
    if (s.curved) d += " Q" + num(s.c.x) + "," + num(s.c.y);
    d += (s.curved ? " " : " L") + num(s.b.x) + "," + num(s.b.y);
  }
  return d;
}

double text_width(std::string_view s, double size) {
  double w = 0;
  for (const char c : s) w += (c == ',' || c == '.' ? 0.36 : c == '-' ? 0.42 : 0.64) * size;
  return w;
}

Label label_box(const Layout& l, std::size_t i, std::string_view text, double size) {
  const Point dir = l.label_dir[i];
  Label b;
  b.at = l.at[i] +
         Point{dir.x * (l.node_r + 4), dir.y * (l.node_r + 4) + size * (0.35 + 0.45 * dir.y)};
  const double w = text_width(text, size);
  b.anchor = dir.x > 0.3 ? "start" : dir.x < -0.3 ? "end" : "middle";
  b.x0 = dir.x > 0.3 ? b.at.x : dir.x < -0.3 ? b.at.x - w : b.at.x - w / 2;
  b.x1 = b.x0 + w;
  b.y0 = b.at.y - 0.8 * size;
  b.y1 = b.at.y + 0.25 * size;
  return b;
}

std::string ranges(const std::vector<bool>& set) {
  std::string s;
  const int n = static_cast<int>(set.size());
  for (int i = 0; i < n;) {
    if (!set[static_cast<std::size_t>(i)]) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < n && set[static_cast<std::size_t>(j + 1)]) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(i);
    if (j > i) s += (j == i + 1 ? "," : "-") + std::to_string(j);
    i = j + 1;
  }
  return s;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", std::abs(v) < 0.005 ? 0.0 : v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::text(Point p, std::string_view s, double size, std::string_view anchor,
               std::string_view extra) {
  body_ += "<text x=\"" + num(p.x) + "\" y=\"" + num(p.y) + "\" font-size=\"" + num(size) + "\"";
  if (anchor != "start") body_ += " text-anchor=\"" + std::string(anchor) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += ">" + xml_escape(s) + "</text>\n";
}

void Svg::circle(Point p, double r, std::string_view fill, std::string_view stroke,
                 std::string_view extra) {
  body_ += "<circle cx=\"" + num(p.x) + "\" cy=\"" + num(p.y) + "\" r=\"" + num(r) + "\" fill=\"" +
           std::string(fill) + "\" stroke=\"" + std::string(stroke) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>\n";
}

void Svg::topology(const Topology& t, const Layout& l, Point origin,
                   const std::vector<std::string>& fills) {
  for (const auto& [u, v] : undirected_links(t)) {
    const Path p = connection(t, l, u, v);
    body_ += "<path class=\"edge\" d=\"" + path_d(p, origin, 0, 0) +
             "\" fill=\"none\" stroke=\"#c4c4c4\" stroke-width=\"1.6\"" +
             (p.parts.size() > 1 ? " stroke-dasharray=\"4 3\"" : "") + "/>\n";
  }
  for (int i = 0; i < t.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    const Point c = l.at[k] + origin;
    circle(c, l.node_r, k < fills.size() ? fills[k] : "white", "#333",
           "stroke-width=\"1.3\" class=\"vp\"");
    text(c + Point{0, 4}, std::to_string(i), i >= 100 ? 8.5 : 11, "middle");
  }
}

void Svg::save(const std::string& path, const char* what) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(std::string(what) + ": cannot open '" + path + "' for writing");
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width_) << "\" height=\""
      << num(height_) << "\" viewBox=\"0 0 " << num(width_) << " " << num(height_)
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
      << "<defs>\n"
      << "<marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"8.5\" refY=\"5\" markerWidth=\"5\" "
         "markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#d62728\"/></marker>\n"
      << "<marker id=\"head-grey\" viewBox=\"0 0 10 10\" refX=\"8.5\" refY=\"5\" "
         "markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" "
         "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#555\"/></marker>\n"
      << "</defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << body_ << "</svg>\n";
  out.close();
  if (!out) throw Error(std::string(what) + ": writing '" + path + "' failed");
}

}  // namespace hypercomm::detail::picture
