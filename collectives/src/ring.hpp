// A ring of ranks inside a group (Ring), so that the mesh algorithms are the ring algorithms run
// along rows and then along columns (Grama et al. 4.6), and the family of sub-algorithms a
// composite algorithm uses.
#pragma once

#include <cstdint>
#include <hypercomm/topology.hpp>

namespace hypercomm::detail {

// A ring of `size` ranks inside the group: member k is rank first + slot(k)*stride, slot(k) = k
// in id order. The whole group is {0, p, 1}; on a group of mesh shape, row r of rows x cols is
// {r*cols, cols, 1} and column c is {c, rows, cols}. In reflected Gray-code order (gray_order),
// slot(k) = gray(k): the ring of a hypercube's 2^d VPs embedded with dilation 1 (Grama et al.
// section 2.7), consecutive members (the last and the first too) one link apart.
struct Ring {
  int first;
  int size;
  int stride;
  bool gray_order = false;

  [[nodiscard]] static Ring all(int p) noexcept { return {0, p, 1}; }
  [[nodiscard]] static Ring gray_code(int p) noexcept { return {0, p, 1, true}; }
  // Where member k's VP stands among the ring's VPs in id order: the index of its part in a
  // layout of the ring's blocks by id (all_gather_ring, reduce_scatter_ring_group).
  [[nodiscard]] int slot(int k) const noexcept {
    return gray_order ? static_cast<int>(gray(static_cast<unsigned>(k))) : k;
  }
  [[nodiscard]] int member(int k) const noexcept { return first + slot(k) * stride; }
  [[nodiscard]] int rank_of(int id) const noexcept {
    const int s = (id - first) / stride;
    return gray_order ? static_cast<int>(gray_inverse(static_cast<unsigned>(s))) : s;
  }
  [[nodiscard]] int right(int k) const noexcept { return member((k + 1) % size); }
  [[nodiscard]] int left(int k) const noexcept { return member((k - 1 + size) % size); }
};

// The rows and columns a mesh algorithm runs along: a mesh topology's own (id = r*cols + c), or
// a 2^a x 2^b torus embedded in a hypercube of d = a + b dimensions by the reflected Gray code
// (Grama et al. section 2.7: mesh node (i, j) is VP gray(i)*2^b + gray(j), dilation 1, the
// wraparound included), a = floor(d/2). Either way a row is the VPs of one id prefix
// (row_of(id) = id / cols, its blocks contiguous in id order) and a column the VPs of one id
// suffix; the embedded rows and columns are Gray-code rings over them (Ring::gray_order), so
// consecutive members, the last and the first too, are one link apart.
struct Grid {
  int rows;
  int cols;
  bool gray_order = false;

  [[nodiscard]] static Grid of(const Topology& t) noexcept { return {t.rows(), t.cols()}; }
  [[nodiscard]] static Grid gray_code(int p) noexcept {
    int d = 0;
    while ((1 << d) < p) ++d;
    return {1 << (d / 2), 1 << (d - d / 2), true};
  }
  // The same rows and columns laid out by id (row r: ids r*cols .. r*cols + cols-1), which a
  // non-commutative fold keeps in id order; their neighbours are hypercube routes, not links.
  [[nodiscard]] static Grid in_id_order(int p) noexcept {
    Grid g = gray_code(p);
    g.gray_order = false;
    return g;
  }
  // The Gray-code grid, or the grid in id order for a non-commutative operator (routed links).
  [[nodiscard]] static Grid for_fold(int p, bool commutative) noexcept {
    return commutative ? gray_code(p) : in_id_order(p);
  }
  [[nodiscard]] int row_of(int id) const noexcept { return id / cols; }
  [[nodiscard]] int col_of(int id) const noexcept { return id % cols; }
  [[nodiscard]] int id_at(int r, int c) const noexcept { return r * cols + c; }
  [[nodiscard]] Ring row(int id) const noexcept { return {row_of(id) * cols, cols, 1, gray_order}; }
  [[nodiscard]] Ring column(int id) const noexcept { return {col_of(id), rows, cols, gray_order}; }
};

// The row and the column of a mesh VP in the topology's own layout (ring and hypercube: one row
// of p).
[[nodiscard]] inline Ring row_group(const Topology& t, int id) noexcept {
  return Grid::of(t).row(id);
}
[[nodiscard]] inline Ring column_group(const Topology& t, int id) noexcept {
  return Grid::of(t).column(id);
}

// The family of sub-algorithms a composite algorithm (two_phase, the mesh phases) uses on this
// machine; select.cpp decides it (family_of, card.hpp), so every VP agrees.
enum class Family : std::uint8_t { hypercube, ring, mesh };

}  // namespace hypercomm::detail
