// All-to-all reduction (reduce-scatter) on a rows x cols mesh: the dual of Grama et al.,
// Algorithm 4.6, as two ring reduce-scatters (Algorithm 4.5, reduce_scatter_ring_group):
//
//   row phase:    within row r, member c gets the fold over the row (ids r*cols .. r*cols +
//                 cols - 1, in order) of blocks c, cols + c, 2*cols + c, ... (one per row):
//                 parts of rows blocks, packed                     (cols - 1 steps of rows*m)
//   column phase: within column c, member r gets the fold over the rows (in row order) of
//                 block r*cols + c                                 (rows - 1 steps of m)
//
// The column phase folds the row folds in row order, so the result is the fold over ids
// 0..p-1 in order, as a non-commutative operator needs.
//
//   commutative:     T = ts*(rows + cols - 2) + tw*m*(p - 1)     (m = bytes per block)
//                    square mesh: T = 2*ts*(sqrt p - 1) + tw*m*(p - 1)
//   non-commutative: T = ts*(rows + cols - 2) + tw*m*(rows*(2cols - 3) + 2rows - 3)
//                    (each phase with at least 2 members; a phase of one member costs nothing)
//
// Restrictions: a mesh topology (any rows x cols, 1 x n included); neighbours only.
//
// 2 x 3 mesh (blocks b0..b5), VP 4 (row 1, column 1):
//
//   packs its in as parts [b0 b3] [b1 b4] [b2 b5] for its row
//   row phase:    gets [b1 b4] folded over VPs 3 4 5
//   column phase: with VP 1 (row 0), gets b4 folded over VPs 0..5
//
// Blocks may be uneven (the all-reduce two-phase split). out may be in's own block.

#include <vector>

#include "card.hpp"
#include "symmetric.hpp"
#include "symmetric_util.hpp"

namespace hypercomm::detail {

void reduce_scatter_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks,
                         const Reducer& op, const Grid& grid) {
  const int my_id = c.id();
  const int rows = grid.rows;
  const int cols = grid.cols;
  const int my_col = grid.col_of(my_id);

  // Column phase parts: part r = block r*cols + my_col, packed in row order.
  const Blocks column_parts =
      Blocks::of_sizes(rows, [&](int r) { return blocks.size(r * cols + my_col); });
  if (rows == 1) {  // a single row: the row phase is the whole reduce-scatter, on in's blocks
    reduce_scatter_ring_group(c, in, out, blocks, grid.row(my_id), op);
    return;
  }
  if (cols == 1) {  // a single column: no row phase
    reduce_scatter_ring_group(c, in, out, column_parts, grid.column(my_id), op);
    return;
  }
  // Row phase parts: part k = blocks k, cols + k, ..., (rows-1)*cols + k, in that order (the
  // column bundles, packed).
  const ColumnBundles bundles{blocks, rows, cols};
  Buffer packed(in.size());
  bundles.pack(in, packed);
  Buffer row_result(column_parts.total());
  reduce_scatter_ring_group(c, packed, row_result, bundles.layout(), grid.row(my_id), op);
  reduce_scatter_ring_group(c, row_result, out, column_parts, grid.column(my_id), op);
}

double all_gatherv_mesh_cost(const CostQuery& q);  // the dual's: all_gather_mesh.cpp

namespace {
double reduce_scatter_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  if (q.shape.commutative)
    return (q.ts() + q.mesh_th()) * (rows + cols - 2) + q.tw() * q.m() * (q.p() - 1);
  return q.ring_reduce_scatter(cols, rows * q.m(), q.mesh_th()) +
         q.ring_reduce_scatter(rows, q.m(), q.mesh_th());
}
// Selection: the all-gather's; textbook_time_v: equal counts as reduce_scatter, uneven no
// closed form.
double reduce_scatterv_mesh_cost(const CostQuery& q) {
  if (q.selection) return all_gatherv_mesh_cost(q);
  // Equal counts: the regular formula, exact where it counts th (a torus, or th = 0).
  if (!q.equal_counts() || q.mesh_th() != q.th()) return kNoClosedForm;
  return reduce_scatter_mesh_cost(q.as_regular());
}
void run(const Comm& c, const Args& a) {
  reduce_scatter_mesh(c, a.in, a.out, *a.blocks, *a.op, Grid::of(c.topology()));
}
}  // namespace

extern const AlgorithmCard reduce_scatter_mesh_card{
    {Collective::reduce_scatter, Algo::mesh, "Grama et al., section 4.2: the dual of Algorithm 4.6",
     "(ts + th)*(rows+cols-2) + tw*m*(p-1); non-commutative: R(cols, rows*m) + R(rows, m), "
     "R(n, x) = (ts + th)*(n-1) + tw*x*(2n-3) for n >= 2, R(1, x) = 0",
     kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    needs_mesh,
    reduce_scatter_mesh_cost,
    run,
    mesh_counts_hops};

extern const AlgorithmCard reduce_scatterv_mesh_card{
    {Collective::reduce_scatterv, Algo::mesh,
     "Grama et al., section 4.2 with uneven blocks: the dual of Algorithm 4.6 (column bundles "
     "along the rows, then blocks along the columns)",
     "uneven: no closed form (the rows end at different times); equal blocks as "
     "reduce_scatter / mesh",
     kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    needs_mesh,
    reduce_scatterv_mesh_cost,
    run};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): every message one link; it folds in Gray-code order.
extern const AlgorithmCard reduce_scatter_mesh_gray_card{
    {Collective::reduce_scatter, Algo::mesh,
     "Grama et al., section 4.2: the dual of Algorithm 4.6, on the torus embedded in the "
     "hypercube by the reflected Gray code (section 2.7)",
     "(ts + th)*(rows+cols-2) + tw*m*(p-1), rows = 2^floor(d/2), cols = 2^ceil(d/2)",
     kGrayMeshCommutativeNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)", "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh_folding(q, reduce_scatter_mesh_cost); },
    [](const Comm& c, const Args& a) {
      reduce_scatter_mesh(c, a.in, a.out, *a.blocks, *a.op,
                          Grid::for_fold(c.p(), a.op->commutative));
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/false,
    /*needs_gray_ring_group=*/false,
    /*work=*/nullptr,
    /*id_order_when_routed=*/true};

}  // namespace hypercomm::detail
