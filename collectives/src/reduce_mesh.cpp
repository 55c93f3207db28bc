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

namespace hypercomm::detail {

void reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root) {
  const Topology& t = c.topology();
  const int my_id = c.id();
  const int root_col = t.col_of(root);
  const bool in_root_col = t.col_of(my_id) == root_col;

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
  reduce_ring(c, in, row_result, op, t.id_at(t.row_of(my_id), root_col), row_group(t, my_id));
  if (in_root_col) reduce_ring(c, row_result, out, op, root, column_group(t, my_id));
}

namespace {
double reduce_mesh_cost(const CostQuery& q) {
  const int r = q.root();
  return (q.ring_reduce_steps(q.t.cols(), q.t.col_of(r)) +
          q.ring_reduce_steps(q.t.rows(), q.t.row_of(r))) *
         (q.w(q.m()) + q.th() + q.tc * q.m());
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
    [](const Comm& c, const Args& a) { reduce_mesh(c, a.in, a.out, *a.op, a.root); }};

}  // namespace hypercomm::detail
