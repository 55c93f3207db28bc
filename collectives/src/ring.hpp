// A ring of ranks inside a group (Ring), so that the mesh algorithms are the ring algorithms run
// along rows and then along columns (Grama et al. 4.6), and the family of sub-algorithms a
// composite algorithm uses.
#pragma once

#include <cstdint>
#include <hypercomm/topology.hpp>

namespace hypercomm::detail {

// A ring of `size` ranks inside the group: member k is rank first + k*stride. The whole group
// is {0, p, 1}; on a group of mesh shape, row r of rows x cols is {r*cols, cols, 1} and column c
// is {c, rows, cols}.
struct Ring {
  int first;
  int size;
  int stride;

  [[nodiscard]] static Ring all(int p) noexcept { return {0, p, 1}; }
  [[nodiscard]] int member(int k) const noexcept { return first + k * stride; }
  [[nodiscard]] int rank_of(int id) const noexcept { return (id - first) / stride; }
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
