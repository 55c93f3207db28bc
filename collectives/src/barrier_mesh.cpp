// Barrier on a rows x cols torus, neighbours only: a ring barrier (barrier_ring.cpp) along each
// row, then one along each column.
//
//   T = ts * (cols - 1) + ts * (rows - 1) = ts * (rows + cols - 2)     (square: 2 ts (sqrt p - 1))
//
// Restrictions: mesh topology, any rows x cols (1 x n included); neighbours only.
//
// Why it is a barrier: a VP leaves the row phase only after every member of its row has
// entered. It starts the column phase only after that, so every message of the column phase is
// sent by a VP whose whole row has entered. A VP leaves the column phase only after hearing
// (directly or through the VPs it heard from) from every member of its column, i.e. from one
// VP of every row: so every row, the whole machine, has entered.

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void barrier_mesh(const Comm& c, const Grid& grid) {
  ring_barrier(c, grid.row(c.id()));
  ring_barrier(c, grid.column(c.id()));
}

namespace {
double barrier_mesh_cost(const CostQuery& q) {
  return (q.t.rows() + q.t.cols() - 2) * (q.ts() + q.mesh_th());
}
}  // namespace

extern const AlgorithmCard barrier_mesh_card{
    {Collective::barrier, Algo::mesh, "ring barrier along the rows, then the columns",
     "(ts + th)*(rows+cols-2)", kMeshNeeds, nullptr},
    needs_mesh,
    barrier_mesh_cost,
    [](const Comm& c, const Args&) { barrier_mesh(c, Grid::of(c.topology())); },
    mesh_counts_hops};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): every message one link.
extern const AlgorithmCard barrier_mesh_gray_card{
    {Collective::barrier, Algo::mesh,
     "ring barrier along the rows, then the columns, of the torus embedded in the hypercube by "
     "the reflected Gray code (Grama et al. section 2.7)",
     "(ts + th)*(rows+cols-2), rows = 2^floor(d/2), cols = 2^ceil(d/2)", kGrayMeshNeeds, nullptr,
     "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh(q, barrier_mesh_cost); },
    [](const Comm& c, const Args&) { barrier_mesh(c, Grid::gray_code(c.p())); }};

}  // namespace hypercomm::detail
