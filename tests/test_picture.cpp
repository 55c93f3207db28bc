// write_svg and write_link_heatmap_svg: the step pictures of known algorithms have the textbook's
// number of steps and messages per step, the knowledge labels grow as in Grama et al.'s figures,
// the heat map has one element per used link, and the errors are clear.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <hypercomm/picture.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

hc::Report traced(const hc::Topology& t, const std::function<void(hc::Proc&)>& body,
                  bool trace = true) {
  hc::Options o = hctest::test_options();
  o.trace = trace;
  return hc::run(t, body, o);
}

// The panels of a picture, each as its text.
std::vector<std::string> panels(const std::string& svg) {
  std::vector<std::string> result;
  const std::string open = "<g class=\"panel\">";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1))
    result.push_back(svg.substr(at, svg.find("</g>", at) - at));
  return result;
}

// Writes the picture of `r` and returns its text, checked for the basic SVG structure.
std::string picture(const hc::Report& r, const hc::Topology& t, const std::string& name) {
  const std::string path = "test_picture_" + name + ".svg";
  hc::write_svg(r, t, path);
  const std::string svg = read(path);
  CHECK(svg.starts_with("<?xml"));
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("viewBox=\"0 0 ") != std::string::npos);
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(count(svg, "<g") == count(svg, "</g>"));
  CHECK(count(svg, "<text") == count(svg, "</text>"));
  CHECK(count(svg, "class=\"msg\"") == count(svg, "marker-end=\"url(#head)\""));
  // Rendered when rsvg-convert is installed; otherwise svg_to_png says it could not.
  const std::string png = "test_picture_" + name + ".png";
  if (hc::svg_to_png(path, png)) {
    CHECK(read(png).starts_with("\x89PNG"));
    std::remove(png.c_str());
  }
  std::remove(path.c_str());
  return svg;
}

// The centres of the VP circles in a piece of a picture, in VP order.
std::vector<std::pair<double, double>> vp_centres(const std::string& text) {
  std::vector<std::pair<double, double>> at;
  const std::string open = "<circle cx=\"";
  for (auto pos = text.find(open); pos != std::string::npos; pos = text.find(open, pos + 1)) {
    const std::string tag = text.substr(pos, text.find("/>", pos) - pos);
    if (tag.find("class=\"vp\"") == std::string::npos) continue;
    at.emplace_back(std::stod(tag.substr(open.size())),
                    std::stod(tag.substr(tag.find("cy=\"") + 4)));
  }
  return at;
}

// The topology links of a panel drawn as two stubs (a wraparound link leaving one edge of the
// grid and entering the other): edge paths with two sub-paths.
std::size_t stub_pairs(const std::string& panel) {
  const std::string edge = "class=\"edge\" d=\"";
  std::size_t stubs = 0;
  for (auto at = panel.find(edge); at != std::string::npos; at = panel.find(edge, at + 1))
    stubs +=
        panel.substr(at, panel.find('"', at + edge.size()) - at).find(" M") != std::string::npos;
  return stubs;
}

void all_gather_body(hc::Proc& vp, hc::Algo a) {
  std::vector<int> in{vp.id()}, out(static_cast<std::size_t>(vp.size()));
  hc::all_gather(vp, in, out, a);
}

}  // namespace

TEST_CASE("hypercube all-gather: 3 steps of 8 exchanges, knowledge doubling each step") {
  const auto t = hc::Topology::hypercube(3);
  const auto r = traced(t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::hypercube); });
  const std::string svg = picture(r, t, "cube");
  const auto ps = panels(svg);
  REQUIRE(ps.size() == 3);
  for (const auto& p : ps) CHECK(count(p, "class=\"msg\"") == 8);
  CHECK(count(svg, "stroke-dasharray=\"5 3\"") == 0);  // neighbours only
  CHECK(ps[0].find("all_gather (hypercube)") != std::string::npos);
  CHECK(ps[0].find("step 1 of 3") != std::string::npos);
  CHECK(count(ps[0], ">0,1</text>") == 2);  // VPs 0 and 1 after exchanging along dimension 0
  CHECK(count(ps[1], ">0-3</text>") == 4);
  CHECK(count(ps[2], ">0-7</text>") == 8);
}

TEST_CASE("ring all-gather: p - 1 steps of p messages (Grama et al., Figure 4.8)") {
  const auto t = hc::Topology::ring(4);
  const auto r = traced(t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::ring); });
  const auto ps = panels(picture(r, t, "ring"));
  REQUIRE(ps.size() == 3);
  for (const auto& p : ps) CHECK(count(p, "class=\"msg\"") == 4);
  CHECK(count(ps[0], ">0,1</text>") == 1);  // VP 1 heard from VP 0
  CHECK(count(ps[0], ">0,3</text>") == 1);  // VP 0 from VP 3
  CHECK(count(ps[2], ">0-3</text>") == 4);
}

TEST_CASE("mesh broadcast: rows then columns, every VP reached once, wraparound stubs") {
  const auto t = hc::Topology::mesh(3, 3);
  const auto r = traced(t, [](hc::Proc& vp) {
    std::vector<double> buf(2, vp.id() == 4 ? 1.0 : 0.0);
    hc::broadcast(vp, buf, 4, hc::Algo::mesh);
  });
  const std::string svg = picture(r, t, "mesh");
  const auto ps = panels(svg);
  CHECK(ps.size() >= 2);
  CHECK(count(svg, "class=\"msg\"") == 8);
  CHECK(ps.back().find("broadcast (mesh)") != std::string::npos);
  // Each panel draws the 3x3 torus's 6 wraparound links (3 row, 3 column) as pairs of stubs:
  // paths with two sub-paths.
  CHECK(stub_pairs(ps.front()) == 6);
}

TEST_CASE("a linear array is drawn as a row, an open mesh as a grid without wraparound links") {
  struct Case {
    hc::Topology t;
    std::size_t links, rows, cols;  // undirected links, distinct VP heights and x positions
  };
  for (const Case& c : {Case{hc::Topology::linear(5), 4, 1, 5},
                        Case{hc::Topology::mesh(3, 3, hc::Wrap::none), 12, 3, 3},
                        Case{hc::Topology::mesh(2, 4, hc::Wrap::none), 10, 2, 4}}) {
    CAPTURE(c.t.name());
    hc::Options o = hctest::test_options();
    o.trace = true;
    o.links = hc::Links::strict;
    // Every VP swaps ids with each neighbour in turn: one message per directed link.
    const auto r = hc::run(
        c.t,
        [](hc::Proc& vp) {
          for (const int peer : vp.topology().neighbors(vp.id())) {
            std::vector<int> out{vp.id()}, in(1);
            vp.sendrecv(peer, out, in);
          }
        },
        o);
    const std::string svg = picture(r, c.t, "open");
    const auto ps = panels(svg);
    REQUIRE(!ps.empty());
    CHECK(count(svg, "class=\"msg\"") == 2 * c.links);
    CHECK(count(svg, "stroke-dasharray=\"5 3\"") == 0);  // neighbours only, nothing routed
    for (const auto& p : ps) {
      CHECK(count(p, "class=\"edge\"") == c.links);  // the book's links, no wraparound
      CHECK(stub_pairs(p) == 0);
    }
    const auto at = vp_centres(ps.front());
    REQUIRE(at.size() == static_cast<std::size_t>(c.t.size()));
    std::set<double> xs, ys;
    for (int id = 0; id < c.t.size(); ++id) {
      CAPTURE(id);
      const auto [x, y] = at[static_cast<std::size_t>(id)];
      xs.insert(x);
      ys.insert(y);
      // Row by row, left to right: VP r*cols + c at column c of row r.
      if (c.t.col_of(id) > 0) {
        CHECK(x > at[static_cast<std::size_t>(id - 1)].first);
        CHECK(y == at[static_cast<std::size_t>(id - 1)].second);
      }
      if (c.t.row_of(id) > 0) {
        const auto above = at[static_cast<std::size_t>(id - c.t.cols())];
        CHECK(y > above.second);
        CHECK(x == above.first);
      }
    }
    CHECK(ys.size() == c.rows);
    CHECK(xs.size() == c.cols);
    // The heat map draws the same links.
    const std::string path = "test_picture_open_heat.svg";
    hc::write_link_heatmap_svg(r, c.t, path);
    const std::string heat = read(path);
    std::remove(path.c_str());
    CHECK(count(heat, "class=\"link\"") == r.link_traffic.size());
    CHECK(r.link_traffic.size() == 2 * c.links);
    CHECK(count(heat, "class=\"vp\"") == static_cast<std::size_t>(c.t.size()));
  }
}

TEST_CASE("routed messages are dashed; calls are drawn one after the other") {
  const auto t = hc::Topology::ring(8);
  const auto r = traced(t, [](hc::Proc& vp) {
    all_gather_body(vp, hc::Algo::hypercube);  // distances 1, 2 and 4 on the ring
    std::vector<int> in{vp.id()}, out(1);
    hc::all_reduce(vp, in, out, std::plus<>{}, hc::Algo::ring);
  });
  const std::string svg = picture(r, t, "calls");
  const auto ps = panels(svg);
  REQUIRE(ps.size() >= 4);
  CHECK(ps[0].find("all_gather (hypercube)") != std::string::npos);
  CHECK(ps[2].find("step 3 of 3") != std::string::npos);
  CHECK(ps[3].find("all_reduce (ring)") != std::string::npos);
  CHECK(ps[3].find("step 1 of") != std::string::npos);
  CHECK(count(ps[0], "stroke-dasharray=\"5 3\"") == 0);
  CHECK(count(ps[1], "stroke-dasharray=\"5 3\"") == 8);
  CHECK(count(ps[2], "stroke-dasharray=\"5 3\"") == 8);
  // Knowledge starts afresh with each call: VP 0 knows only itself and what arrived.
  CHECK(ps[3].find(">0-7</text>") == std::string::npos);
}

TEST_CASE("pictures of larger hypercubes: two joined cubes, then a 2-D projection") {
  for (int d : {4, 5}) {
    CAPTURE(d);
    const auto t = hc::Topology::hypercube(d);
    const auto r = traced(t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::hypercube); });
    const auto ps = panels(picture(r, t, "cube" + std::to_string(d)));
    REQUIRE(ps.size() == static_cast<std::size_t>(d));
    for (const auto& p : ps) CHECK(count(p, "class=\"msg\"") == static_cast<std::size_t>(t.size()));
    CHECK(count(ps.back(), ">0-" + std::to_string(t.size() - 1) + "</text>") ==
          static_cast<std::size_t>(t.size()));
  }
}

TEST_CASE("the link heat map has one element per used directed link") {
  for (const char* name : {"ring:8", "mesh:3x4", "hypercube:3"}) {
    CAPTURE(name);
    const auto t = hc::Topology::parse(name);
    // No trace needed: the link counters are always kept.
    const auto r = traced(
        t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::automatic); }, false);
    REQUIRE(!r.link_traffic.empty());
    const std::string path = "test_picture_heat.svg";
    hc::write_link_heatmap_svg(r, t, path);
    const std::string svg = read(path);
    std::remove(path.c_str());
    CHECK(count(svg, "class=\"link\"") == r.link_traffic.size());
    CHECK(count(svg, "class=\"vp\"") == static_cast<std::size_t>(t.size()));
    CHECK(svg.find("class=\"legend\"") != std::string::npos);
    CHECK(svg.ends_with("</svg>\n"));
  }
}

TEST_CASE("pictures refuse untraced reports, other topologies and unwritable paths") {
  const auto t = hc::Topology::ring(4);
  const auto plain = traced(
      t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::ring); }, false);
  try {
    hc::write_svg(plain, t, "never.svg");
    FAIL("write_svg accepted a report without events");
  } catch (const hc::Error& e) {
    CHECK(std::string(e.what()).find("Options::trace = true") != std::string::npos);
  }
  const auto r = traced(t, [](hc::Proc& vp) { all_gather_body(vp, hc::Algo::ring); });
  CHECK_THROWS_AS(hc::write_svg(r, hc::Topology::ring(8), "never.svg"), hc::Error);
  CHECK_THROWS_AS(hc::write_link_heatmap_svg(r, hc::Topology::mesh(2, 2), "never.svg"), hc::Error);
  CHECK_THROWS_AS(hc::write_svg(r, t, "/nonexistent-dir/x.svg"), hc::Error);
  CHECK_THROWS_AS(hc::write_link_heatmap_svg(r, t, "/nonexistent-dir/x.svg"), hc::Error);
  CHECK(!hc::svg_to_png("/nonexistent-dir/x.svg", "/nonexistent-dir/x.png"));
}
