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

// The row and the column of a mesh VP (ring and hypercube: one row of p).
[[nodiscard]] inline Ring row_group(const Topology& t, int id) noexcept {
  return {t.row_of(id) * t.cols(), t.cols(), 1};
}
[[nodiscard]] inline Ring column_group(const Topology& t, int id) noexcept {
  return {t.col_of(id), t.rows(), t.cols()};
}

// The family of sub-algorithms a composite algorithm (two_phase, the mesh phases) uses on this
// machine; select.cpp decides it (family_of, card.hpp), so every VP agrees.
enum class Family : std::uint8_t { hypercube, ring, mesh };

}  // namespace hypercomm::detail
