// Gather on a 2-D torus, neighbours only: the mesh scatter reversed. Every column gathers its
// blocks (two-way ring gather, gather_ring) into its member in the root's row, as a column
// bundle in row order; then the root's row gathers the bundles into the root, which unpacks
// them into out in id order (block r*cols + c is row r of bundle c).
//
//   T = G(rows, m) + G(cols, rows*m)       (m = one block)
//   G(n, m) = a*ts + tw*m*a(a+1)/2, a = floor(n/2); G(1, m) = 0
//
// Every column finishes at the same step, so the row phase adds its own length.
// A 1 x n or n x 1 mesh runs the one phase straight on the blocks (no packing).
// Restrictions: a mesh topology; neighbours only.
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void gather_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                 bool open) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  const int my_id = c.id();
  const int my_col = t.col_of(my_id);
  const int root_row = t.row_of(root), root_col = t.col_of(root);
  const RingArms row_arms = open ? RingArms::line(cols, root_col) : RingArms::balanced(cols);
  const RingArms column_arms = open ? RingArms::line(rows, root_row) : RingArms::balanced(rows);

  if (rows == 1) {  // one row: the blocks are the parts
    ring_gather_parts(c, row_group(t, my_id), root_col, blocks, in, out, row_arms);
    return;
  }
  const Blocks column_parts =
      Blocks::of_sizes(rows, [&](int r) { return blocks.size(r * cols + my_col); });
  if (cols == 1) {  // one column: the root's column bundle is all of out
    ring_gather_parts(c, column_group(t, my_id), root_row, column_parts, in, out, column_arms);
    return;
  }
  Buffer bundle;
  if (t.row_of(my_id) == root_row) bundle.resize(column_parts.total());
  ring_gather_parts(c, column_group(t, my_id), root_row, column_parts, in, bundle, column_arms);
  if (t.row_of(my_id) != root_row) return;

  const ColumnBundles bundles{blocks, rows, cols};
  const Blocks bundle_parts = bundles.layout();
  Buffer packed(my_id == root ? bundle_parts.total() : 0);
  ring_gather_parts(c, row_group(t, my_id), root_col, bundle_parts, bundle, packed, row_arms);
  if (my_id == root) bundles.unpack(packed, out);
}

namespace {
double gather_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  return q.ring_gather(rows, q.m(), q.mesh_th()) + q.ring_gather(cols, rows * q.m(), q.mesh_th());
}
// Selection: the capped arms; textbook_time_v: equal counts as gather, uneven no closed form
// (the row phase starts as the columns arrive).
double gatherv_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  if (q.selection)
    return q.capped_ring_gather(rows, q.m()) + q.capped_ring_gather(cols, rows * q.m());
  // Equal counts: the regular formula, exact where it counts th (a torus, or th = 0).
  if (!q.equal_counts() || q.mesh_th() != q.th()) return kNoClosedForm;
  return gather_mesh_cost(q.as_regular());
}
void run(const Comm& c, const Args& a) { gather_mesh(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard gather_mesh_card{
    {Collective::gather, Algo::mesh,
     "Grama et al., section 4.4 on a mesh: every column into the root's row, then that row",
     "G(rows, m) + G(cols, rows*m)", kMeshNeeds, "ts log p + tw m (p - 1)"},
    needs_mesh,
    gather_mesh_cost,
    run,
    mesh_counts_hops};

extern const AlgorithmCard gatherv_mesh_card{
    {Collective::gatherv, Algo::mesh,
     "Grama et al., section 4.4 on a mesh with uneven blocks: every column into the root's "
     "row, then that row into the root",
     "uneven: ring gathers (see gatherv / ring) down every column, then along the root's row, "
     "each member of it sending when its column has arrived: no closed form; equal blocks of "
     "m: G(rows, m) + G(cols, rows*m)",
     kMeshNeeds, "ts log p + tw m (p - 1)"},
    needs_mesh,
    gatherv_mesh_cost,
    run};

double open_mesh_gather(const CostQuery& q, int root, double block) {
  return q.line_gather(q.t.rows(), q.t.row_of(root), block, q.th()) +
         q.line_gather(q.t.cols(), q.t.col_of(root), q.t.rows() * block, q.th());
}

namespace {
double gather_mesh_open_cost(const CostQuery& q) { return open_mesh_gather(q, q.root(), q.m()); }
// Selection: every block as large as the largest; textbook_time_v: equal counts as gather, uneven
// no closed form (the row phase starts as the columns arrive).
double gatherv_mesh_open_cost(const CostQuery& q) {
  if (q.selection) return gather_mesh_open_cost(q);
  if (!q.equal_counts()) return kNoClosedForm;
  return gather_mesh_open_cost(q.as_regular());
}
}  // namespace

extern const AlgorithmCard gather_mesh_open_card{
    {Collective::gather, Algo::mesh,
     "Grama et al., section 4.4 on a mesh without wraparound: every column into the root's row, "
     "then that row (lines)",
     "G(rows, r, m) + G(cols, c, rows*m), the root at row r, column c; G(n, k, x): the line gather "
     "of n parts of x into k (see gather / ring (linear array))",
     kOpenMeshNeeds, "ts log p + tw m (p - 1) (routed)", "open mesh"},
    needs_open_mesh,
    gather_mesh_open_cost,
    [](const Comm& c, const Args& a) { gather_mesh(c, a.in, a.out, *a.blocks, a.root, true); }};

extern const AlgorithmCard gatherv_mesh_open_card{
    {Collective::gatherv, Algo::mesh,
     "Grama et al., section 4.4 on a mesh without wraparound with uneven blocks: every column "
     "into the root's row, then that row (lines)",
     "uneven: line gathers (see gatherv / ring (linear array)) up and down every column, then "
     "along the root's row: no closed form; equal blocks of m: G(rows, r, m) + G(cols, c, "
     "rows*m)",
     kOpenMeshNeeds, "ts log p + tw m (p - 1) (routed)", "open mesh"},
    needs_open_mesh,
    gatherv_mesh_open_cost,
    [](const Comm& c, const Args& a) { gather_mesh(c, a.in, a.out, *a.blocks, a.root, true); }};

}  // namespace hypercomm::detail
