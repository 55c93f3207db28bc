// The drawing kit behind picture.hpp: where each VP of a topology goes, how a link or a message
// between two VPs is drawn, and a small SVG writer.
#pragma once

#include <cstdint>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace hypercomm::detail::picture {

struct Point {
  double x = 0;
  double y = 0;
};

// One sub-path: a straight line a-b, or a quadratic curve a-c-b.
struct Segment {
  Point a, c, b;
  bool curved = false;
};
// How one connection is drawn: usually one segment; a torus wraparound is two stubs, one
// leaving the sender off the edge of the grid and one entering the receiver from the other.
struct Path {
  std::vector<Segment> parts;
  bool routed = false;  // not a topology link: a routed message, drawn dashed
};

struct Layout {
  std::vector<Point> at;         // VP centres, inside [0, width] x [0, height]
  std::vector<Point> label_dir;  // unit vector from a VP's centre towards its label
  double width = 0;
  double height = 0;
  double node_r = 12;
};

// The topology as Grama et al. draw it (see picture.hpp), with room for labels about
// `label_width` wide beside the VPs.
[[nodiscard]] Layout layout_of(const Topology& t, double label_width = 0);
// How the link (or the routed message) u -> v is drawn on that layout.
[[nodiscard]] Path connection(const Topology& t, const Layout& l, int u, int v);
// Every undirected topology link once (u < v), as drawn.
[[nodiscard]] std::vector<std::pair<int, int>> undirected_links(const Topology& t);

// Throws hypercomm::Error when the report was not made on `t` (its topology name differs, or
// its events or links name VPs beyond t's).
void check_topology(const Report& r, const Topology& t, const char* what);

// The SVG "d" of a path, moved `offset` to the right of its direction (so that u -> v and
// v -> u stay apart) and cut back by `r` at both ends (to stop at the node circles).
[[nodiscard]] std::string path_d(const Path& p, Point origin, double offset, double r);

// Where a VP's label goes and the box it takes, in layout coordinates (roughly: the width of
// the text is estimated for DejaVu Sans Bold).
struct Label {
  Point at;
  const char* anchor = "middle";
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};
[[nodiscard]] Label label_box(const Layout& l, std::size_t vp, std::string_view text, double size);
[[nodiscard]] double text_width(std::string_view s, double size);

// Compact text of a set of VPs: "0-3,5,7-8".
[[nodiscard]] std::string ranges(const std::vector<bool>& set);

[[nodiscard]] std::string xml_escape(std::string_view s);
[[nodiscard]] std::string num(double v);  // a coordinate, at most two decimals

// A minimal SVG document: elements are appended as text.
class Svg {
 public:
  Svg(double width, double height);
  void raw(std::string_view s) { body_ += s; }
  void text(Point p, std::string_view s, double size, std::string_view anchor = "middle",
            std::string_view extra = "");
  void circle(Point p, double r, std::string_view fill, std::string_view stroke,
              std::string_view extra = "");
  // The topology's links in grey and its VPs as numbered circles, with `fills` per VP (empty:
  // white), at `origin`.
  void topology(const Topology& t, const Layout& l, Point origin,
                const std::vector<std::string>& fills = {});
  // The document's text; throws hypercomm::Error when `path` cannot be written.
  void save(const std::string& path, const char* what) const;

 private:
  double width_;
  double height_;
  std::string body_;
};

// A byte count as the pictures print it: "512 B", "12.0 KiB", "1.5 MiB" (KiB from 10 KiB, MiB
// from 10 MiB, one decimal).
[[nodiscard]] std::string bytes_text(std::uint64_t bytes);

}  // namespace hypercomm::detail::picture
