// All-to-one reduction on a 2-D torus: the mesh broadcast reversed, phases swapped so that the
// fold keeps the id order (id = row*cols + col): every row is reduced (ring reduction, in id
// order) to its member in the root's column, then the root's column reduces those row results
// (in row order) to the root. A fold over rows of folds over each row is the fold over all ids.
//
//   T = (ts + tw*m) * (floor(cols/2) + floor(rows/2))      (m = in.size() bytes)
//     non-commutative op: (ts + tw*m) * (f(cols, root_col) + f(rows, root_row)) with
//     f(n, r) = floor(n/2) for r = 0 or n-1, else max(r, n-1-r) (reduce_ring's order-keeping arms)
//
// Every row finishes its phase at the same step, so the column phase adds its own length.
// Restrictions: a mesh topology (any rows x cols, 1 x n and n x 1 included); neighbours only.
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                 const Grid& grid, bool open) {
  const int my_id = c.id();
  const int root_col = grid.col_of(root);
  const bool in_root_col = grid.col_of(my_id) == root_col;

  // This row's result, kept by the row's member in the root's column: the root keeps it in out
  // (reduce_ring lets in alias out at the root), the others in a temporary.
  Buffer row_storage;
  Bytes row_result;
  if (my_id == root) {
    row_result = out;
  } else if (in_root_col) {
    row_storage.resize(in.size());
    row_result = row_storage;
  }
  const int row_root = grid.id_at(grid.row_of(my_id), root_col);
  if (open) {  // lines: the arms cut at the root keep the id order whatever the operator
    reduce_arms(c, in, row_result, op, row_root, grid.row(my_id),
                RingArms::line(grid.cols, root_col));
    if (in_root_col)
      reduce_arms(c, row_result, out, op, root, grid.column(my_id),
                  RingArms::line(grid.rows, grid.row_of(root)));
    return;
  }
  reduce_ring(c, in, row_result, op, row_root, grid.row(my_id));
  if (in_root_col) reduce_ring(c, row_result, out, op, root, grid.column(my_id));
}

namespace {
double reduce_mesh_cost(const CostQuery& q) {
  const int r = q.root();
  return (q.ring_reduce_steps(q.t.cols(), q.t.col_of(r)) +
          q.ring_reduce_steps(q.t.rows(), q.t.row_of(r))) *
         (q.w(q.m()) + q.mesh_th() + q.landing_tc() * q.m());
}
}  // namespace

extern const AlgorithmCard reduce_mesh_card{
    {Collective::reduce, Algo::mesh,
     "the mesh broadcast reversed: every row into the root's column, then that column",
     "(ts + tw*m + th)*(floor(cols/2) + floor(rows/2)); non-commutative: each floor(n/2) "
     "becomes max(r, n-1-r) when the root's rank r in that row/column is not 0 or n-1",
     kMeshNeeds, "(ts + tw m) log p"},
    needs_mesh,
    reduce_mesh_cost,
    [](const Comm& c, const Args& a) {
      reduce_mesh(c, a.in, a.out, *a.op, a.root, Grid::of(c.topology()));
    },
    mesh_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

double open_mesh_reduce(const CostQuery& q, int root, double size) {
  return q.line_reduce(q.t.cols(), q.t.col_of(root), size, q.th()) +
         q.line_reduce(q.t.rows(), q.t.row_of(root), size, q.th());
}

namespace {
double reduce_mesh_open_cost(const CostQuery& q) { return open_mesh_reduce(q, q.root(), q.m()); }
}  // namespace

extern const AlgorithmCard reduce_mesh_open_card{
    {Collective::reduce, Algo::mesh,
     "the open-mesh broadcast reversed: every row into the root's column, then that column "
     "(lines, id order kept)",
     "(max(c, cols-1-c) + max(r, rows-1-r))*(ts + tw*m + th), the root at row r, column c",
     kOpenMeshNeeds, "2 (ts + tw m)(sqrt p - 1) (routed: (ts + tw m) log p)", "open mesh"},
    needs_open_mesh,
    reduce_mesh_open_cost,
    [](const Comm& c, const Args& a) {
      reduce_mesh(c, a.in, a.out, *a.op, a.root, Grid::of(c.topology()), true);
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): every message one link; it folds in Gray-code order.
extern const AlgorithmCard reduce_mesh_gray_card{
    {Collective::reduce, Algo::mesh,
     "the mesh broadcast reversed, on the torus embedded in the hypercube by the reflected Gray "
     "code (Grama et al. section 2.7)",
     "(ts + tw*m + th)*(floor(cols/2) + floor(rows/2)), rows = 2^floor(d/2), cols = 2^ceil(d/2)",
     kGrayMeshCommutativeNeeds, "(ts + tw m) log p", "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh_folding(q, reduce_mesh_cost); },
    [](const Comm& c, const Args& a) {
      reduce_mesh(c, a.in, a.out, *a.op, a.root, Grid::for_fold(c.p(), a.op->commutative));
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/false,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work,
    /*id_order_when_routed=*/true};

}  // namespace hypercomm::detail
