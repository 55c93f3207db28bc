// Scatter on a 2-D torus, neighbours only: Grama et al., section 4.4 on a mesh (row phase, then
// column phase). The root scatters along its row the column bundles (bundle c: the blocks of
// ids r*cols + c for every row r, packed in row order), then each VP of the root's row scatters
// its bundle down its column. Both phases are the two-way ring scatter (scatter_ring).
//
//   T = S(cols, rows*m) + S(rows, m)       (m = one block)
//   S(n, m) = a*ts + tw*m*a(a+1)/2                 (n even, a = n/2)
//   S(n, m) = (a+1)*ts + tw*m*(a + a(a+1)/2)       (n odd >= 3, a = (n-1)/2);   S(1, m) = 0
//
// Each column phase starts when its row member has its bundle, the last one at S(cols, rows*m).
// A 1 x n or n x 1 mesh runs the one phase straight on the blocks (no packing).
// Restrictions: a mesh topology; neighbours only.
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void scatter_mesh(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                  bool open) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  const int my_id = c.id();
  const int my_col = t.col_of(my_id);
  const int root_row = t.row_of(root), root_col = t.col_of(root);
  const RingArms row_arms = open ? RingArms::line(cols, root_col) : RingArms::balanced(cols);
  const RingArms column_arms = open ? RingArms::line(rows, root_row) : RingArms::balanced(rows);

  if (rows == 1) {  // one row: the blocks are the parts
    ring_scatter_parts(c, row_group(t, my_id), root_col, blocks, in, out, row_arms);
    return;
  }
  const Blocks column_parts =
      Blocks::of_sizes(rows, [&](int r) { return blocks.size(r * cols + my_col); });
  Buffer bundle;
  ConstBytes column_data = in;  // cols == 1: the root's column bundle is all of in
  if (cols > 1) {
    if (t.row_of(my_id) == root_row) {
      const ColumnBundles bundles{blocks, rows, cols};
      Buffer packed;  // the root's blocks in bundle order
      if (my_id == root) {
        packed.resize(in.size());
        bundles.pack(in, packed);
      }
      bundle.resize(column_parts.total());
      ring_scatter_parts(c, row_group(t, my_id), root_col, bundles.layout(), packed, bundle,
                         row_arms);
    }
    column_data = bundle;
  }
  ring_scatter_parts(c, column_group(t, my_id), root_row, column_parts, column_data, out,
                     column_arms);
}

namespace {
double scatter_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  const CostQuery::Arms arms = q.mesh_arms();
  return q.ring_scatter(cols, rows * q.m(), q.mesh_th(), arms) +
         q.ring_scatter(rows, q.m(), q.mesh_th(), arms);
}
// Selection: the capped arms; textbook_time_v: equal counts as scatter, uneven no closed form
// (each column starts when its bundle arrives).
double scatterv_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  if (q.selection)
    return q.capped_ring_scatter(cols, rows * q.m()) + q.capped_ring_scatter(rows, q.m());
  // Equal counts: the regular formula, exact where it counts th (a torus, or th = 0).
  if (!q.equal_counts() || q.mesh_th() != q.th()) return kNoClosedForm;
  return scatter_mesh_cost(q.as_regular());
}
void run(const Comm& c, const Args& a) { scatter_mesh(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard scatter_mesh_card{
    {Collective::scatter, Algo::mesh,
     "Grama et al., section 4.4 on a mesh: column bundles along the root's row, then down "
     "every column",
     "S(cols, rows*m) + S(rows, m)", kMeshNeeds, "ts log p + tw m (p - 1)"},
    needs_mesh,
    scatter_mesh_cost,
    run,
    mesh_counts_hops};

extern const AlgorithmCard scatterv_mesh_card{
    {Collective::scatterv, Algo::mesh,
     "Grama et al., section 4.4 on a mesh with uneven blocks: column bundles along the root's "
     "row, then down every column",
     "uneven: a ring scatter (see scatterv / ring) of the column bundles along the root's row, "
     "then each column's ring scatter from the time its bundle arrived: no closed form; equal "
     "blocks of m: S(cols, rows*m) + S(rows, m)",
     kMeshNeeds, "ts log p + tw m (p - 1)"},
    needs_mesh,
    scatterv_mesh_cost,
    run};

double open_mesh_scatter(const CostQuery& q, int root, double block) {
  const CostQuery::Arms arms = q.open_mesh_arms();
  return q.line_scatter(q.t.cols(), q.t.col_of(root), q.t.rows() * block, q.th(), arms) +
         q.line_scatter(q.t.rows(), q.t.row_of(root), block, q.th(), arms);
}

namespace {
double scatter_mesh_open_cost(const CostQuery& q) { return open_mesh_scatter(q, q.root(), q.m()); }
// Selection: every block as large as the largest; textbook_time_v: equal counts as scatter,
// uneven no closed form.
double scatterv_mesh_open_cost(const CostQuery& q) {
  if (q.selection) return scatter_mesh_open_cost(q);
  if (!q.equal_counts()) return kNoClosedForm;
  return scatter_mesh_open_cost(q.as_regular());
}
}  // namespace

extern const AlgorithmCard scatter_mesh_open_card{
    {Collective::scatter, Algo::mesh,
     "Grama et al., section 4.4 on a mesh without wraparound: column bundles along the root's row, "
     "then down every column (lines)",
     "S(cols, c, rows*m) + S(rows, r, m), the root at row r, column c; S(n, k, x): the line "
     "scatter of n parts of x from k (see scatter / ring (linear array))",
     kOpenMeshNeeds, "ts log p + tw m (p - 1) (routed)", "open mesh"},
    needs_open_mesh,
    scatter_mesh_open_cost,
    [](const Comm& c, const Args& a) { scatter_mesh(c, a.in, a.out, *a.blocks, a.root, true); }};

extern const AlgorithmCard scatterv_mesh_open_card{
    {Collective::scatterv, Algo::mesh,
     "Grama et al., section 4.4 on a mesh without wraparound with uneven blocks: column bundles "
     "along the root's row, then down every column (lines)",
     "uneven: line scatters (see scatterv / ring (linear array)) along the root's row, then up "
     "and down every column: no closed form; equal blocks of m: S(cols, c, rows*m) + S(rows, r, "
     "m)",
     kOpenMeshNeeds, "ts log p + tw m (p - 1) (routed)", "open mesh"},
    needs_open_mesh,
    scatterv_mesh_open_cost,
    [](const Comm& c, const Args& a) { scatter_mesh(c, a.in, a.out, *a.blocks, a.root, true); }};

}  // namespace hypercomm::detail
