// A grid route as straight runs, for counting a message on every link of a long route in a
// constant number of steps (Fabric::count_straight_run). Arithmetic in topology.cpp.
#pragma once

#include <array>
#include <hypercomm/topology.hpp>

namespace hypercomm::detail {

// `length` consecutive links in one direction, the first leaving VP `from` by its link in
// `slot` (Topology::link_slot: 0 column + 1, 1 column - 1, 2 row + 1, 3 row - 1); every link of
// the run has that slot. length 0: no run.
struct StraightRun {
  int from = 0;
  int slot = -1;
  int length = 0;
};

// route(a, b) of a ring, linear array or mesh (not a hypercube): the run along a's row (the
// column changes), then the run along b's column, as Topology::route takes them.
[[nodiscard]] std::array<StraightRun, 2> straight_runs(const Topology& grid, int a, int b) noexcept;

}  // namespace hypercomm::detail
