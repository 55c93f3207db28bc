// Ring, linear array, 2-D mesh (torus or open) and hypercube arithmetic (API.md, "Topologies"):
// neighbours, distances, standard routes and per-VP link slots. The shapes are those of Grama et
// al., "Introduction to Parallel Computing", 2nd ed., section 2.4.3 (linear arrays with and
// without the wraparound link, meshes with and without wraparound, hypercubes); routing follows
// section 2.6: the ring the shorter way, the linear array straight along the line, the mesh XY
// (dimension-ordered, row first), the hypercube E-cube (lowest differing bit first).
//
// Ring, linear array and mesh are one rows x cols grid, VP r*cols + c at (r, c): a ring of p is a
// 1 x p torus and a linear array of p a 1 x p open mesh, so their neighbours, distances, routes
// and link slots are exactly the mesh rules with a single row, and all share one code path below.
// The grid wraps (ring, torus) or stops at its edges (linear array, open mesh).
#include "hypercomm/topology.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hypercomm/errors.hpp"
#include "straight_runs.hpp"

namespace hypercomm {
namespace {

// value mod extent in [0, extent), also for negative values (C++'s % keeps the sign).
constexpr int wrap(int value, int extent) noexcept {
  const int rest = value % extent;
  return rest < 0 ? rest + extent : rest;
}

// The position after `from` on the shorter way to `to` around a cycle of `extent` positions;
// when both ways are equally long the step goes up (+1).
constexpr int step_toward(int from, int to, int extent) noexcept {
  const int up = wrap(to - from, extent);
  if (up == 0) return from;
  return up <= extent - up ? wrap(from + 1, extent) : wrap(from - 1, extent);
}

// The position after `from` toward `to` on a line: one step closer, no wraparound.
constexpr int step_along(int from, int to) noexcept {
  return from < to ? from + 1 : (from > to ? from - 1 : from);
}

// The VPs one grid step from `id` in the link slot order: column + 1, column - 1, row + 1,
// row - 1. On a wrapping grid every direction reaches a VP (on a short extent the same one twice,
// or id itself); on an open grid a step off the edge is -1.
std::array<int, 4> grid_steps(const Topology& grid, int id) noexcept {
  const int row = grid.row_of(id);
  const int col = grid.col_of(id);
  return {grid.id_at(row, col + 1), grid.id_at(row, col - 1), grid.id_at(row + 1, col),
          grid.id_at(row - 1, col)};
}

// Slot of the directed grid link from -> to, -1 when there is none. The first matching
// direction wins, which keeps slots distinct when a short extent makes two directions reach the
// same VP (a 2-wide torus, a ring of 2).
int grid_link_slot(const Topology& grid, int from, int to) noexcept {
  if (from == to) return -1;
  const std::array<int, 4> toward = grid_steps(grid, from);
  for (int slot = 0; slot < static_cast<int>(toward.size()); ++slot) {
    if (toward[slot] == to) return slot;
  }
  return -1;
}

// Slot of the hypercube link from -> to: the dimension it crosses, -1 unless they differ in
// exactly one bit.
int hypercube_link_slot(int from, int to) noexcept {
  const auto differing = static_cast<unsigned>(from ^ to);
  return std::has_single_bit(differing) ? std::countr_zero(differing) : -1;
}

// next_hop for ids already checked.
int next_hop_unchecked(const Topology& topology, int a, int b) noexcept {
  if (a == b) return a;
  if (topology.kind() == Topology::Kind::hypercube) {
    // E-cube: correct the lowest differing bit first.
    const auto differing = static_cast<unsigned>(a ^ b);
    return a ^ static_cast<int>(differing & (~differing + 1u));
  }
  // XY: along the row (the column index changes) first, then along the column; round the
  // shorter way on a wrapping grid, straight on an open one.
  const int row = topology.row_of(a);
  const int col = topology.col_of(a);
  const int target_row = topology.row_of(b);
  const int target_col = topology.col_of(b);
  if (!topology.wraps()) {
    if (col != target_col) return topology.id_at(row, step_along(col, target_col));
    return topology.id_at(step_along(row, target_row), col);
  }
  if (col != target_col) return topology.id_at(row, step_toward(col, target_col, topology.cols()));
  return topology.id_at(step_toward(row, target_row, topology.rows()), col);
}

// distance for ids already checked.
int distance_unchecked(const Topology& topology, int a, int b) noexcept {
  if (topology.kind() == Topology::Kind::hypercube) {
    return std::popcount(static_cast<unsigned>(a ^ b));
  }
  if (!topology.wraps()) {
    return std::abs(topology.col_of(a) - topology.col_of(b)) +
           std::abs(topology.row_of(a) - topology.row_of(b));
  }
  return ring_distance(topology.col_of(a), topology.col_of(b), topology.cols()) +
         ring_distance(topology.row_of(a), topology.row_of(b), topology.rows());
}

std::string_view trim(std::string_view text) noexcept {
  constexpr std::string_view kWhitespace = " \t\n\r\f\v";
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kWhitespace);
  return text.substr(first, last - first + 1);
}

// A non-empty run of decimal digits that fits an int; nullopt for anything else (signs, spaces,
// other characters, overflow).
std::optional<int> parse_decimal(std::string_view digits) noexcept {
  const bool all_digits = std::all_of(digits.begin(), digits.end(),
                                      [](char ch) noexcept { return ch >= '0' && ch <= '9'; });
  if (digits.empty() || !all_digits) return std::nullopt;
  int value = 0;
  const char* const end = digits.data() + digits.size();
  const auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

// text in double quotes for an error message, control bytes written as \xHH so that an
// embedded NUL or newline cannot cut or break the message.
std::string quoted(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string result = "\"";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      result += "\\x";
      result += kHex[byte >> 4];
      result += kHex[byte & 0xf];
    } else {
      result += ch;
    }
  }
  return result + "\"";
}

}  // namespace

Topology Topology::ring(int p) {
  if (p < 1 || p > kMaxVps) {
    throw TopologyError("ring: p = " + std::to_string(p) + " is out of range [1, " +
                        std::to_string(kMaxVps) + "]");
  }
  return Topology(Kind::ring, 1, p, -1, Wrap::around);
}

Topology Topology::linear(int p) {
  if (p < 1 || p > kMaxVps) {
    throw TopologyError("linear: p = " + std::to_string(p) + " is out of range [1, " +
                        std::to_string(kMaxVps) + "]");
  }
  return Topology(Kind::linear, 1, p, -1, Wrap::none);
}

Topology Topology::mesh(int rows, int cols, Wrap w) {
  if (w != Wrap::around && w != Wrap::none)
    throw TopologyError("mesh: " + std::to_string(rows) + "x" + std::to_string(cols) +
                        ": wrap must be Wrap::around or Wrap::none (got Wrap(" +
                        std::to_string(static_cast<int>(w)) + "))");
  // 64-bit product: rows * cols may overflow int before the limit check.
  const std::int64_t vps = std::int64_t{rows} * std::int64_t{cols};
  if (rows < 1 || cols < 1 || vps > kMaxVps) {
    throw TopologyError(
        "mesh: " + std::to_string(rows) + "x" + std::to_string(cols) +
        (w == Wrap::around ? " is not a valid torus" : " is not a valid open mesh") +
        "; rows and cols must be >= 1 and rows*cols <= " + std::to_string(kMaxVps));
  }
  return Topology(Kind::mesh, rows, cols, -1, w);
}

Topology Topology::hypercube(int d) {
  if (d < 0 || d > kMaxDimension) {
    throw TopologyError("hypercube: d = " + std::to_string(d) + " is out of range [0, " +
                        std::to_string(kMaxDimension) + "]");
  }
  return Topology(Kind::hypercube, 1, 1 << d, d, Wrap::around);
}

Topology Topology::parse(std::string_view text) {
  const std::string_view body = trim(text);
  const auto colon = body.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view kind = body.substr(0, colon);
    const std::string_view shape = body.substr(colon + 1);
    if (kind == "ring") {
      if (const auto p = parse_decimal(shape)) return ring(*p);
    } else if (kind == "linear") {
      if (const auto p = parse_decimal(shape)) return linear(*p);
    } else if (kind == "hypercube") {
      if (const auto d = parse_decimal(shape)) return hypercube(*d);
    } else if (kind == "mesh") {
      // "RxC" is the torus, "RxC:open" the open mesh; no other suffix.
      constexpr std::string_view kOpen = ":open";
      const bool open = shape.ends_with(kOpen);
      const std::string_view extents = open ? shape.substr(0, shape.size() - kOpen.size()) : shape;
      const auto times = extents.find('x');
      if (times != std::string_view::npos) {
        const auto rows = parse_decimal(extents.substr(0, times));
        const auto cols = parse_decimal(extents.substr(times + 1));
        if (rows && cols) return mesh(*rows, *cols, open ? Wrap::none : Wrap::around);
      }
    }
  }
  throw TopologyError(
      "parse: " + quoted(text) +
      " is not a topology; accepted forms are \"ring:P\", \"linear:P\", "
      "\"mesh:RxC\", \"mesh:RxC:open\" and \"hypercube:D\" with decimal P, R, C, D");
}

int Topology::max_degree() const noexcept {
  switch (kind_) {
    case Kind::ring:
    case Kind::linear: return 2;
    case Kind::mesh: return 4;
    case Kind::hypercube: return dimension_;
  }
  return 0;  // unreachable: every Kind is handled above
}

void Topology::check_id(int id, const char* what) const {
  if (id < 0 || id >= size()) {
    throw TopologyError(std::string(what) + ": id " + std::to_string(id) + " is outside [0, " +
                        std::to_string(size()) + ") of " + name());
  }
}

std::vector<int> Topology::neighbors(int id) const {
  check_id(id, "neighbors");
  std::vector<int> result;
  result.reserve(static_cast<std::size_t>(max_degree()));
  if (kind_ == Kind::hypercube) {
    for (int k = 0; k < dimension_; ++k) result.push_back(id ^ (1 << k));
  } else {
    // On a short wrapping extent several directions reach the same VP, or the VP itself; both
    // go below, as do the steps off the edge of an open grid (-1).
    for (const int candidate : grid_steps(*this, id)) {
      if (candidate >= 0 && candidate != id) result.push_back(candidate);
    }
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

bool Topology::ring_adjacent() const noexcept {
  switch (kind_) {
    case Kind::ring: return true;
    case Kind::linear: return size() <= 2;  // no link from p-1 back to 0
    case Kind::mesh: return (rows_ == 1 || cols_ == 1) && (wraps() || size() <= 2);
    case Kind::hypercube: return dimension_ <= 1;
  }
  return false;
}

bool Topology::adjacent(int a, int b) const {
  check_id(a, "adjacent");
  check_id(b, "adjacent");
  return (kind_ == Kind::hypercube ? hypercube_link_slot(a, b) : grid_link_slot(*this, a, b)) >= 0;
}

int Topology::distance(int a, int b) const {
  check_id(a, "distance");
  check_id(b, "distance");
  return distance_unchecked(*this, a, b);
}

std::vector<int> Topology::route(int a, int b) const {
  check_id(a, "route");
  check_id(b, "route");
  std::vector<int> path;
  path.reserve(static_cast<std::size_t>(distance_unchecked(*this, a, b)) + 1);
  path.push_back(a);
  for (int at = a; at != b;) {
    at = next_hop_unchecked(*this, at, b);
    path.push_back(at);
  }
  return path;
}

int Topology::next_hop(int a, int b) const {
  check_id(a, "next_hop");
  check_id(b, "next_hop");
  return next_hop_unchecked(*this, a, b);
}

int Topology::link_slot(int from, int to) const {
  check_id(from, "link_slot");
  check_id(to, "link_slot");
  return kind_ == Kind::hypercube ? hypercube_link_slot(from, to) : grid_link_slot(*this, from, to);
}

std::string Topology::name() const {
  switch (kind_) {
    case Kind::ring: return "ring:" + std::to_string(cols_);
    case Kind::linear: return "linear:" + std::to_string(cols_);
    case Kind::mesh:
      return "mesh:" + std::to_string(rows_) + "x" + std::to_string(cols_) +
             (wraps() ? "" : ":open");
    case Kind::hypercube: return "hypercube:" + std::to_string(dimension_);
  }
  return {};  // unreachable: every Kind is handled above
}

int Topology::id_at(int r, int c) const noexcept {
  if (wraps()) return wrap(r, rows_) * cols_ + wrap(c, cols_);
  return r >= 0 && r < rows_ && c >= 0 && c < cols_ ? r * cols_ + c : -1;
}

namespace detail {

std::array<StraightRun, 2> straight_runs(const Topology& grid, int a, int b) noexcept {
  std::array<StraightRun, 2> runs{};
  const int corner = grid.id_at(grid.row_of(a), grid.col_of(b));  // where XY turns
  const auto run = [&grid](int from, int to, int position, int target, int extent) {
    if (from == to) return StraightRun{};
    const int length =
        grid.wraps() ? ring_distance(position, target, extent) : std::abs(position - target);
    return StraightRun{from, grid_link_slot(grid, from, next_hop_unchecked(grid, from, to)),
                       length};
  };
  runs[0] = run(a, corner, grid.col_of(a), grid.col_of(b), grid.cols());
  runs[1] = run(corner, b, grid.row_of(a), grid.row_of(b), grid.rows());
  return runs;
}

}  // namespace detail

}  // namespace hypercomm
