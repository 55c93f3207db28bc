// The d edge-disjoint spanning binomial trees (ESBTs) of the d-cube and their pipelined
// broadcast schedule, source 0.
//
//   S. L. Johnsson and C.-T. Ho, "Optimum broadcasting and personalized communication in
//   hypercubes", IEEE Transactions on Computers 38(9), 1249-1268, 1989.
//   (XOR-and-rotating the binomial tree of the whole cube, the obvious construction, is NOT
//   edge-disjoint for d >= 3; the one below is, as tests/test_trees.cpp checks.)
//
// Tree j is described in rotated labels r = rotate_right(x, j, d), so that dimension j is bit 0
// and "rotated bit m" is dimension (j + m) mod d:
//   r == 1           the tree root 2^j, fed by the source 0 over dimension j;
//   r odd, r != 1    the binomial tree of the subcube {bit j = 1}: the parent clears r's highest
//                    set bit (the subcube's dimensions in the cyclic order j+1, j+2, ...);
//   r even, r != 0   a leaf hanging from r + 1 across dimension j.
//
// Schedule of one chunk down tree j (local steps i = 0..d):
//   i = 0            0 -> 2^j
//   i = 1 .. d-1     every odd r whose highest bit is below i sends to r + 2^i (dimension
//                    (j + i) mod d); after step i the holders are exactly the odd r < 2^(i+1)
//   i = d            every odd r != 1 sends to r - 1 (dimension j), reaching the even labels
// For d = 3, tree 0 (tree j is tree 0 with every label rotated left by j):
//   step 0: 0->1   step 1: 1->3   step 2: 1->5, 3->7   step 3: 3->2, 5->4, 7->6
// Chunk c runs at local step i = t - c in global step t and uses tree j = c mod d, so every send
// of global step t crosses dimension (j + i) mod d = t mod d, and in that step the senders of
// different trees are different labels: at most one send and one receive per label per step.
// For d = 1 local step d is empty (the only odd label is the root), so one chunk takes one step.
#include "esbt_trees.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "hypercomm/errors.hpp"
#include "hypercomm/topology.hpp"

namespace hypercomm::detail {
namespace {

std::string out_of_range(const char* operation, const char* what, int value, int low, int high) {
  return std::string(operation) + ": " + what + " = " + std::to_string(value) +
         " is out of range [" + std::to_string(low) + ", " + std::to_string(high) + "]";
}

// d in 1..12, j in [0, d), x in [0, 2^d).
void check_tree_label(const char* operation, int d, int j, int x) {
  if (d < 1 || d > Topology::kMaxDimension) {
    throw TopologyError(out_of_range(operation, "d", d, 1, Topology::kMaxDimension));
  }
  if (j < 0 || j >= d) throw TopologyError(out_of_range(operation, "tree j", j, 0, d - 1));
  if (x < 0 || x >= (1 << d)) {
    throw TopologyError(out_of_range(operation, "label x", x, 0, (1 << d) - 1));
  }
}

unsigned to_rotated(int d, int j, int x) noexcept {
  return rotate_right(static_cast<unsigned>(x), j, d);
}

int from_rotated(int d, int j, unsigned r) noexcept {
  return static_cast<int>(rotate_right(r, d - j, d));  // rotating right by d - j undoes j
}

int highest_bit(unsigned r) noexcept { return static_cast<int>(std::bit_width(r)) - 1; }

}  // namespace

int esbt_parent(int d, int j, int x) {
  check_tree_label("esbt_parent", d, j, x);
  if (x == 0) return -1;
  const unsigned r = to_rotated(d, j, x);
  if (r == 1) return 0;
  if (r % 2 == 1) return from_rotated(d, j, r & ~(1u << highest_bit(r)));
  return x ^ (1 << j);
}

std::vector<int> esbt_children(int d, int j, int x) {
  check_tree_label("esbt_children", d, j, x);
  if (x == 0) return {1 << j};
  const unsigned r = to_rotated(d, j, x);
  if (r % 2 == 0) return {};  // a leaf across dimension j
  std::vector<int> children;
  for (int m = highest_bit(r) + 1; m < d; ++m) {
    children.push_back(from_rotated(d, j, r | (1u << m)));  // binomial children: higher bits
  }
  if (r != 1) children.push_back(x ^ (1 << j));  // the root's r - 1 is the source itself
  std::sort(children.begin(), children.end());
  return children;
}

EsbtMove esbt_move(int d, int j, int i, int x) {
  check_tree_label("esbt_move", d, j, x);
  if (i < 0 || i > d) throw TopologyError(out_of_range("esbt_move", "step i", i, 0, d));
  const int tree_root = 1 << j;
  EsbtMove move;
  if (i == 0) {
    if (x == 0) move.send_to = tree_root;
    if (x == tree_root) move.recv_from = 0;
    return move;
  }
  const unsigned r = to_rotated(d, j, x);
  const bool in_subcube = r % 2 == 1;  // bit j of x set
  if (i == d) {
    if (in_subcube && r != 1) move.send_to = x ^ tree_root;
    if (!in_subcube && x != 0) move.recv_from = x ^ tree_root;
    return move;
  }
  if (!in_subcube) return move;
  const int partner = x ^ (1 << ((j + i) % d));
  const int h = highest_bit(r);
  if (h < i) move.send_to = partner;     // holds the chunk since local step h
  if (h == i) move.recv_from = partner;  // partner is r with its highest bit cleared
  return move;
}

}  // namespace hypercomm::detail
