// Johnsson & Ho's edge-disjoint spanning binomial trees and their pipelined schedule, checked by
// property rather than trusted: every tree
// spans the cube over cube edges, the d trees share no directed edge, and simulating the
// schedule delivers every chunk everywhere in k + d steps with one send and one receive per
// label per step.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <hypercomm/errors.hpp>
#include <hypercomm/topology.hpp>
#include <set>
#include <utility>
#include <vector>

#include "esbt_trees.hpp"

using hypercomm::TopologyError;
using hypercomm::detail::esbt_children;
using hypercomm::detail::esbt_move;
using hypercomm::detail::esbt_parent;
using hypercomm::detail::EsbtMove;

namespace {

// Every dimension the library supports for trees.
constexpr int kMaxD = hypercomm::Topology::kMaxDimension;

bool is_cube_edge(int a, int b) { return std::popcount(static_cast<unsigned>(a ^ b)) == 1; }

// Rotation by moving one bit at a time: bit b goes to bit (b - j) mod d.
unsigned naive_rotate_right(unsigned x, int j, int d) {
  unsigned result = 0;
  for (int b = 0; b < d; ++b) {
    if ((x >> b) & 1u) result |= 1u << ((b - j + d) % d);
  }
  return result;
}

// Pipelines k chunks from label 0 through the schedule of esbt_move and checks every step: chunk
// c goes down tree c mod d during global steps c .. c + d (local step t - c).
void check_schedule(int d, int k) {
  CAPTURE(d);
  CAPTURE(k);
  const int labels = 1 << d;
  // holds[x][c]: label x has chunk c; the source starts with all of them.
  std::vector<std::vector<bool>> holds(labels, std::vector<bool>(k, false));
  holds[0].assign(k, true);
  // Local steps 0..d of the last chunk end at global step k - 1 + d. For d = 1 local step d is
  // empty (tree 0 is the single edge 0 -> 1), so the last step only has to deliver nothing.
  const int steps = k + d;
  const int last_busy_step = d == 1 ? k - 1 : k + d - 1;
  for (int t = 0; t < steps; ++t) {
    CAPTURE(t);
    std::vector<int> sends(labels, 0);
    std::vector<int> receives(labels, 0);
    std::set<std::pair<int, int>> links_used;     // directed (from, to) within this step
    std::vector<std::pair<int, int>> deliveries;  // (label, chunk), applied after the step
    for (int c = std::max(0, t - d); c <= std::min(t, k - 1); ++c) {
      const int j = c % d;
      const int i = t - c;
      CAPTURE(c);
      CAPTURE(i);
      for (int x = 0; x < labels; ++x) {
        const EsbtMove move = esbt_move(d, j, i, x);
        if (move.send_to != -1) {
          const int to = move.send_to;
          CAPTURE(x);
          CAPTURE(to);
          REQUIRE(to >= 0);
          REQUIRE(to < labels);
          CHECK(is_cube_edge(x, to));
          CHECK(holds[x][c]);                            // sends only what it held before this step
          CHECK(!holds[to][c]);                          // and nothing the receiver already has
          CHECK(esbt_parent(d, j, to) == x);             // along an edge of tree j
          CHECK(esbt_move(d, j, i, to).recv_from == x);  // the receiver expects it
          CHECK(links_used.insert({x, to}).second);
          ++sends[x];
          ++receives[to];
          deliveries.emplace_back(to, c);
        }
        if (move.recv_from != -1) {
          CAPTURE(x);
          REQUIRE(move.recv_from >= 0);
          REQUIRE(move.recv_from < labels);
          CHECK(esbt_move(d, j, i, move.recv_from).send_to == x);  // someone sends it
        }
      }
    }
    for (int x = 0; x < labels; ++x) {
      CAPTURE(x);
      CHECK(sends[x] <= 1);
      CHECK(receives[x] <= 1);
    }
    if (t > last_busy_step) CHECK(deliveries.empty());
    for (const auto& [label, chunk] : deliveries) holds[label][chunk] = true;
    const bool everyone_has_everything = std::all_of(holds.begin(), holds.end(), [](const auto& h) {
      return std::all_of(h.begin(), h.end(), [](bool held) { return held; });
    });
    // Done exactly after global step k + d - 1 (k + d steps), not a step earlier.
    CHECK(everyone_has_everything == (t >= last_busy_step));
  }
}

}  // namespace

TEST_CASE("rotate_right equals a bit-by-bit rotation") {
  static_assert(hypercomm::detail::rotate_right(0b0100u, 2, 4) == 0b0001u);
  static_assert(hypercomm::detail::rotate_right(0b0001u, 1, 4) == 0b1000u);
  for (int d = 1; d <= kMaxD; ++d) {
    for (int j = 0; j < d; ++j) {
      for (unsigned x = 0; x < (1u << d); ++x) {
        CAPTURE(d);
        CAPTURE(j);
        CAPTURE(x);
        CHECK(hypercomm::detail::rotate_right(x, j, d) == naive_rotate_right(x, j, d));
      }
    }
  }
}

TEST_CASE("hand-worked trees of the 3-cube") {
  using V = std::vector<int>;
  // Tree 0: 0 -> 1; 1 -> 3, 5; 3 -> 7, 2; 5 -> 4; 7 -> 6.
  CHECK(esbt_children(3, 0, 0) == V{1});
  CHECK(esbt_children(3, 0, 1) == V{3, 5});
  CHECK(esbt_children(3, 0, 3) == V{2, 7});
  CHECK(esbt_children(3, 0, 5) == V{4});
  CHECK(esbt_children(3, 0, 7) == V{6});
  CHECK(esbt_children(3, 0, 6).empty());
  CHECK(esbt_parent(3, 0, 0) == -1);
  CHECK(esbt_parent(3, 0, 1) == 0);
  CHECK(esbt_parent(3, 0, 7) == 3);
  CHECK(esbt_parent(3, 0, 6) == 7);
  // Tree 1 is tree 0 with every label rotated left by one: 0 -> 2; 2 -> 6, 3; 6 -> 7, 4; ...
  CHECK(esbt_children(3, 1, 0) == V{2});
  CHECK(esbt_children(3, 1, 2) == V{3, 6});
  CHECK(esbt_children(3, 1, 6) == V{4, 7});
  CHECK(esbt_parent(3, 1, 1) == 3);
  // Its schedule: step 0: 0->2, step 1: 2->6, step 2: 2->3, 6->7, step 3: 3->1, 6->4, 7->5.
  CHECK(esbt_move(3, 1, 0, 0).send_to == 2);
  CHECK(esbt_move(3, 1, 0, 2).recv_from == 0);
  CHECK(esbt_move(3, 1, 1, 2).send_to == 6);
  CHECK(esbt_move(3, 1, 1, 6).recv_from == 2);
  CHECK(esbt_move(3, 1, 2, 2).send_to == 3);
  CHECK(esbt_move(3, 1, 2, 6).send_to == 7);
  CHECK(esbt_move(3, 1, 2, 6).recv_from == -1);
  CHECK(esbt_move(3, 1, 3, 3).send_to == 1);
  CHECK(esbt_move(3, 1, 3, 2).send_to == -1);  // the root does not feed the source back
  CHECK(esbt_move(3, 1, 3, 5).recv_from == 7);
  CHECK(esbt_move(3, 1, 3, 0).recv_from == -1);
  CHECK(esbt_move(3, 1, 1, 0).send_to == -1);  // the source only sends at local step 0
}

TEST_CASE("each ESBT spans the cube over cube edges and children agree with parents") {
  for (int d = 1; d <= kMaxD; ++d) {
    const int labels = 1 << d;
    for (int j = 0; j < d; ++j) {
      CAPTURE(d);
      CAPTURE(j);
      CHECK(esbt_parent(d, j, 0) == -1);
      CHECK(esbt_children(d, j, 0) == std::vector<int>{1 << j});
      // Children as the parent function implies them, ascending by construction.
      std::vector<std::vector<int>> expected_children(labels);
      for (int x = 1; x < labels; ++x) {
        CAPTURE(x);
        const int parent = esbt_parent(d, j, x);
        REQUIRE(parent >= 0);
        REQUIRE(parent < labels);
        CHECK(is_cube_edge(parent, x));
        expected_children[parent].push_back(x);
        // Following parents reaches the source, with no cycle: a binomial tree of the
        // (d-1)-subcube is d - 1 deep, plus the edge from 0 and the leaf edge.
        int depth = 0;
        for (int at = x; at != 0 && depth <= labels; at = esbt_parent(d, j, at)) ++depth;
        CHECK(depth <= d + 1);
      }
      for (int x = 0; x < labels; ++x) {
        CAPTURE(x);
        CHECK(esbt_children(d, j, x) == expected_children[x]);
      }
    }
  }
}

TEST_CASE("the d trees are pairwise disjoint as sets of directed edges") {
  for (int d = 1; d <= kMaxD; ++d) {
    CAPTURE(d);
    const int labels = 1 << d;
    std::set<std::pair<int, int>> used;  // (parent, child) over all trees so far
    for (int j = 0; j < d; ++j) {
      for (int x = 1; x < labels; ++x) {
        const std::pair<int, int> edge{esbt_parent(d, j, x), x};
        CAPTURE(j);
        CAPTURE(x);
        CHECK(used.insert(edge).second);
      }
    }
    CHECK(used.size() == static_cast<std::size_t>(d) * static_cast<std::size_t>(labels - 1));
  }
}

TEST_CASE("the pipelined schedule: k + d steps, one send and one receive per label per step") {
  for (int d = 1; d <= 10; ++d) {
    for (const int k : {1, d, 3 * d + 1}) check_schedule(d, k);
  }
  // The largest cube with d + 1 chunks: every tree busy, tree 0 at local steps 0 and d at once.
  check_schedule(kMaxD, kMaxD + 1);
}

TEST_CASE("invalid tree arguments throw TopologyError") {
  struct Arguments {
    int d, j, x;
  };
  for (const Arguments bad :
       {Arguments{0, 0, 0}, Arguments{-1, 0, 0}, Arguments{13, 0, 0}, Arguments{3, 3, 0},
        Arguments{3, -1, 0}, Arguments{3, 0, 8}, Arguments{3, 0, -1}, Arguments{1, 0, 2}}) {
    CAPTURE(bad.d);
    CAPTURE(bad.j);
    CAPTURE(bad.x);
    CHECK_THROWS_AS((void)esbt_parent(bad.d, bad.j, bad.x), TopologyError);
    CHECK_THROWS_AS((void)esbt_children(bad.d, bad.j, bad.x), TopologyError);
    CHECK_THROWS_AS((void)esbt_move(bad.d, bad.j, 0, bad.x), TopologyError);
  }
  CHECK_THROWS_AS((void)esbt_move(3, 0, -1, 0), TopologyError);
  CHECK_THROWS_AS((void)esbt_move(3, 0, 4, 0), TopologyError);
  CHECK_THROWS_WITH_AS((void)esbt_move(13, 0, 0, 0), "esbt_move: d = 13 is out of range [1, 12]",
                       TopologyError);
  CHECK_NOTHROW((void)esbt_move(3, 0, 3, 7));
  CHECK_NOTHROW((void)esbt_parent(12, 11, 4095));
}
