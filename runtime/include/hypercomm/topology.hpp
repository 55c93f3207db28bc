// Ring, linear array, 2-D mesh (torus or open) and hypercube: pure arithmetic, no threads
// (DESIGN.md, "Topology"). This is the only place where neighbour, route, distance and embedding
// arithmetic lives.
#pragma once

#include <cstdint>
#include <hypercomm/export.hpp>
#include <string>
#include <string_view>
#include <vector>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

// Whether a mesh has wraparound links: Wrap::around is the 2-D torus, Wrap::none the open mesh
// (Grama et al., section 2.4.3: meshes with and without wraparound).
enum class Wrap : std::uint8_t { around, none };

class Topology {
 public:
  // An open mesh is Kind::mesh with wraps() false.
  enum class Kind : std::uint8_t { ring, mesh, hypercube, linear };

  static constexpr int kMaxVps = 4096;
  static constexpr int kMaxDimension = 12;

  static Topology ring(int p);    // p >= 1 VPs, i <-> (i +- 1) mod p
  static Topology linear(int p);  // p >= 1 VPs, i <-> i +- 1 inside [0, p): no wraparound
  // rows x cols VPs, id = r*cols + c: a 2-D torus (Wrap::around) or an open mesh (Wrap::none,
  // links only between grid neighbours inside the grid).
  static Topology mesh(int rows, int cols, Wrap w = Wrap::around);
  static Topology hypercube(int d);  // 2^d VPs, i <-> i XOR 2^k
  // "ring:8", "linear:8", "mesh:4x4", "mesh:4x4:open", "hypercube:3"
  static Topology parse(std::string_view text);

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] int size() const noexcept { return rows_ * cols_; }
  [[nodiscard]] int rows() const noexcept { return rows_; }            // ring, linear, hypercube: 1
  [[nodiscard]] int cols() const noexcept { return cols_; }            // ring, linear, hypercube: p
  [[nodiscard]] int dimension() const noexcept { return dimension_; }  // hypercube d, else -1
  // Whether the grid closes on itself: true for a ring, a torus and a hypercube (every VP alike),
  // false for a linear array and an open mesh (ends and edges have fewer links).
  [[nodiscard]] bool wraps() const noexcept { return wrap_ == Wrap::around; }
  // Largest number of outgoing links of one VP: ring and linear 2, mesh 4, hypercube d.
  [[nodiscard]] int max_degree() const noexcept;

  [[nodiscard]] std::vector<int> neighbors(int id) const;  // ascending, without id itself
  [[nodiscard]] bool adjacent(int a, int b) const;         // false for a == b
  // Whether VPs i and i + 1 (mod p) are neighbours for every i, so that each message of a ring
  // algorithm crosses one link: a ring, and the shapes that are one (a linear array or a line
  // of a mesh of p <= 2, a torus line, a hypercube of d <= 1).
  [[nodiscard]] bool ring_adjacent() const noexcept;
  // Whether every row and every column, taken as a ring, is made of links (a torus, or no row
  // or column longer than 2), so that each message of a mesh algorithm crosses one link.
  [[nodiscard]] bool lines_ring_adjacent() const noexcept {
    return wraps() || (rows_ <= 2 && cols_ <= 2);
  }
  [[nodiscard]] int distance(int a, int b) const;  // links on route(a, b)
  // VP ids along the standard route, a first, b last: ring the shorter way (ties go up), linear
  // straight along the line, mesh XY (along the row first; the torus the shorter way round in
  // each, ties going up), hypercube E-cube (lowest differing bit first).
  [[nodiscard]] std::vector<int> route(int a, int b) const;
  // The VP after a on route(a, b); a itself when a == b.
  [[nodiscard]] int next_hop(int a, int b) const;
  // Index in [0, max_degree()) of the directed link from -> to, -1 when not adjacent. Hypercube:
  // the dimension crossed. Ring, linear and mesh: the first of column + 1 (0), column - 1 (1),
  // row + 1 (2), row - 1 (3) that reaches `to` (wrapping on a ring and a torus, where on a short
  // extent two directions may reach the same VP). Distinct for the links of one VP.
  [[nodiscard]] int link_slot(int from, int to) const;

  [[nodiscard]] std::string name() const;  // round-trips through parse

  // Mesh coordinates (ring, linear and hypercube: row 0).
  [[nodiscard]] int row_of(int id) const noexcept { return id / cols_; }
  [[nodiscard]] int col_of(int id) const noexcept { return id % cols_; }
  // Id at (r, c). When wraps(), both are taken modulo the extents (the torus and the ring wrap);
  // otherwise (linear, open mesh) a position outside the grid has no VP: -1.
  [[nodiscard]] int id_at(int r, int c) const noexcept;

  bool operator==(const Topology&) const = default;

 private:
  Topology(Kind kind, int rows, int cols, int dimension, Wrap wrap) noexcept
      : kind_(kind), wrap_(wrap), rows_(rows), cols_(cols), dimension_(dimension) {}
  void check_id(int id, const char* what) const;

  Kind kind_;
  Wrap wrap_;
  int rows_;
  int cols_;
  int dimension_;
};

// Binary reflected Gray code: gray(i) and gray(i+1) differ in one bit, so VP gray(i) of a
// hypercube is the i-th VP of an embedded ring (Grama et al., section 2.7.1).
[[nodiscard]] constexpr unsigned gray(unsigned i) noexcept { return i ^ (i >> 1); }
[[nodiscard]] constexpr unsigned gray_inverse(unsigned g) noexcept {
  unsigned i = 0;
  for (; g != 0; g >>= 1) i ^= g;
  return i;
}

// Distance between a and b on a ring of p: the shorter way round.
[[nodiscard]] constexpr int ring_distance(int a, int b, int p) noexcept {
  const int up = ((b - a) % p + p) % p;
  return up <= p - up ? up : p - up;
}

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
