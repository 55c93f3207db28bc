// The spanning trees of the ESBT broadcast (broadcast_esbt.cpp): pure label arithmetic on a
// d-cube whose source is VP 0 (for another source s, XOR every label with s).
#pragma once

#include <vector>

namespace hypercomm::detail {

// Johnsson and Ho's d edge-disjoint spanning binomial trees (ESBTs) of the d-cube, built as
// esbt_trees.cpp describes (and tests/test_trees.cpp checks). Tree j (0 <= j < d) is rooted at
// 2^j, which the source feeds over dimension j.
[[nodiscard]] int esbt_parent(int d, int j, int x);  // -1 for x == 0 (the source)
[[nodiscard]] std::vector<int> esbt_children(int d, int j, int x);

// What label x does for tree j at local step i (0 <= i <= d) of the pipelined schedule: chunk c
// travels down tree c mod d during global steps c .. c + d (local step i = global step - c).
// In one global step every label sends at most one chunk and receives at most one.
struct EsbtMove {
  int send_to = -1;    // -1: no send
  int recv_from = -1;  // -1: no receive
};
[[nodiscard]] EsbtMove esbt_move(int d, int j, int i, int x);

// Rotate x right by j within d bits (bit j moves to bit 0).
[[nodiscard]] constexpr unsigned rotate_right(unsigned x, int j, int d) noexcept {
  if (d == 0) return x;
  const unsigned mask = d >= 32 ? ~0u : ((1u << d) - 1u);
  j %= d;
  x &= mask;
  return j == 0 ? x : ((x >> j) | (x << (d - j))) & mask;
}

}  // namespace hypercomm::detail
