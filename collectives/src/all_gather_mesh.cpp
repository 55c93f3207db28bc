// All-to-all broadcast (all-gather) on a rows x cols mesh: Grama et al., Algorithm 4.6,
// generalised from the square mesh. Two ring phases (Algorithm 4.4):
//
//   row phase:    within row r, member k owns block r*cols + k   (cols - 1 steps of m bytes)
//   column phase: within each column, member r owns the whole row r of blocks
//                 r*cols .. r*cols + cols - 1                      (rows - 1 steps of cols*m bytes)
//
//   T = ts*(rows + cols - 2) + tw*m*(p - 1)    (m = bytes per block, equal blocks)
//   square mesh: T = 2*ts*(sqrt p - 1) + tw*m*(p - 1)
//
// Restrictions: a mesh topology (any rows x cols, 1 x n included); neighbours only (each ring
// runs along a torus row or column, wraparound included).
//
// 2 x 3 mesh, VP 4 (row 1, column 1):
//
//   row phase:    receives blocks 3 and 5 from its row        -> holds blocks 3 4 5
//   column phase: receives blocks 0 1 2 from VP 1 (row 0)      -> holds all six

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void all_gather_mesh(const Comm& c, Bytes buf, const Blocks& blocks, const Grid& grid) {
  const int my_id = c.id();
  const int rows = grid.rows;
  const int cols = grid.cols;
  const int my_row = grid.row_of(my_id);

  // Row phase: one block a part, the parts of my row.
  all_gather_ring(c, buf, Blocks::grouped(blocks, my_row * cols, 1, cols), grid.row(my_id));
  // Column phase: a whole row of blocks a part.
  if (rows > 1) all_gather_ring(c, buf, Blocks::grouped(blocks, 0, cols, rows), grid.column(my_id));
}

namespace {
double all_gather_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  return (q.ts() + q.mesh_th()) * (rows + cols - 2) + q.tw() * q.m() * (q.p() - 1);
}
}  // namespace

// Selection: the capped steps. textbook_time_v: equal counts as all_gather; uneven, no closed
// form (the rows end at different times). reduce_scatterv, the dual, alike.
double all_gatherv_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  if (q.selection) return (cols - 1) * q.w(q.cap(1)) + (rows - 1) * q.w(q.cap(cols));
  // Equal counts: the regular formula, exact where it counts th (a torus, or th = 0).
  if (!q.equal_counts() || q.mesh_th() != q.th()) return kNoClosedForm;
  return all_gather_mesh_cost(q.as_regular());
}

namespace {
void run(const Comm& c, const Args& a) {
  all_gather_mesh(c, a.out, *a.blocks, Grid::of(c.topology()));
}
}  // namespace

extern const AlgorithmCard all_gather_mesh_card{
    {Collective::all_gather, Algo::mesh, "Grama et al., Algorithm 4.6 (any rows x cols)",
     "(ts + th)*(rows+cols-2) + tw*m*(p-1)", kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    needs_mesh,
    all_gather_mesh_cost,
    run,
    mesh_counts_hops};

extern const AlgorithmCard all_gatherv_mesh_card{
    {Collective::all_gatherv, Algo::mesh,
     "Grama et al., Algorithm 4.6 with uneven blocks: ring all-gathers along the rows, then of "
     "the row bundles along the columns",
     "uneven: no closed form (the rows end at different times); equal blocks of m: (ts + "
     "th)*(rows+cols-2) + tw*m*(p-1)",
     kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    needs_mesh,
    all_gatherv_mesh_cost,
    run};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): the row phase along the VPs of one id prefix, the column phase along
// those of one id suffix, each in Gray-code order, every message one link.
extern const AlgorithmCard all_gather_mesh_gray_card{
    {Collective::all_gather, Algo::mesh,
     "Grama et al., Algorithm 4.6 on the torus embedded in the hypercube by the reflected Gray "
     "code (section 2.7)",
     "(ts + th)*(rows+cols-2) + tw*m*(p-1), rows = 2^floor(d/2), cols = 2^ceil(d/2)",
     kGrayMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)", "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh(q, all_gather_mesh_cost); },
    [](const Comm& c, const Args& a) {
      all_gather_mesh(c, a.out, *a.blocks, Grid::gray_code(c.p()));
    }};

}  // namespace hypercomm::detail
