// Broadcast on a 2-D torus: CS 584 lecture notes (Grama et al. section 4.1.2 on a mesh): a ring
// broadcast along the root's row, then every member of that row broadcasts down its column.
//
//   T = (ts + tw*m) * (h(cols) + h(rows)),   h(n) = ceil(n/2) for n >= 2, h(1) = 0
//     (broadcast_ring's cost per phase; sqrt p x sqrt p, even sqrt p: (ts + tw*m) * sqrt p,
//      the lecture's 2 (ts + tw*m) sqrt(p)/2)
//
// The column phase of the column whose row member got the message last starts at step h(cols);
// the root's own column starts no later (its clock after its row sends is <= h(cols) steps).
// Restrictions: a mesh topology (any rows x cols, 1 x n and n x 1 included); neighbours only.
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void broadcast_mesh(const Comm& c, Bytes buf, int root, const Grid& grid, bool open) {
  const int my_id = c.id();
  const int root_row = grid.row_of(root), root_col = grid.col_of(root);
  const auto arms = [open](int n, int r) {
    return open ? RingArms::line(n, r) : RingArms::balanced(n);
  };
  if (grid.row_of(my_id) == root_row)
    broadcast_arms(c, buf, root, grid.row(my_id), arms(grid.cols, root_col));
  broadcast_arms(c, buf, grid.id_at(root_row, grid.col_of(my_id)), grid.column(my_id),
                 arms(grid.rows, root_row));
}

namespace {
double broadcast_mesh_cost(const CostQuery& q) {
  const CostQuery::Arms arms = q.mesh_arms();
  return q.ring_broadcast(q.t.cols(), q.m(), q.mesh_th(), arms) +
         q.ring_broadcast(q.t.rows(), q.m(), q.mesh_th(), arms);
}
}  // namespace

extern const AlgorithmCard broadcast_mesh_card{
    {Collective::broadcast, Algo::mesh,
     "CS 584 lecture: two-way ring broadcast along the root's row, then down every column",
     "(ts + tw*m)*(c(cols) + c(rows)) + th*(floor(cols/2) + floor(rows/2))", kMeshNeeds,
     "(ts + tw m) log p"},
    needs_mesh,
    broadcast_mesh_cost,
    [](const Comm& c, const Args& a) { broadcast_mesh(c, a.out, a.root, Grid::of(c.topology())); },
    mesh_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

// On an open mesh each phase is a line broadcast from the root's column / row.
double open_mesh_broadcast(const CostQuery& q, int root, double size) {
  const CostQuery::Arms arms = q.open_mesh_arms();
  return q.line_broadcast(q.t.cols(), q.t.col_of(root), size, q.th(), arms) +
         q.line_broadcast(q.t.rows(), q.t.row_of(root), size, q.th(), arms);
}

namespace {
double broadcast_mesh_open_cost(const CostQuery& q) {
  return open_mesh_broadcast(q, q.root(), q.m());
}
}  // namespace

extern const AlgorithmCard broadcast_mesh_open_card{
    {Collective::broadcast, Algo::mesh,
     "Grama et al., section 4.1.2 on a mesh without wraparound: a line broadcast along the "
     "root's row, then down every column",
     "B(cols, c) + B(rows, r), the root at row r, column c; B(n, k) = max(L*(ts + tw*m + th), "
     "(S+1)*(ts + tw*m) + S*th), L and S the longer and shorter of k and n-1-k (S = 0: "
     "L*(ts + tw*m + th))",
     kOpenMeshNeeds, "2 (ts + tw m)(sqrt p - 1) (routed: (ts + tw m) log p)", "open mesh"},
    needs_open_mesh,
    broadcast_mesh_open_cost,
    [](const Comm& c, const Args& a) {
      broadcast_mesh(c, a.out, a.root, Grid::of(c.topology()), true);
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): every message one link, so it runs under Links::strict.
extern const AlgorithmCard broadcast_mesh_gray_card{
    {Collective::broadcast, Algo::mesh,
     "CS 584 lecture: two-way ring broadcast along the root's row, then down every column, on the "
     "torus embedded in the hypercube by the reflected Gray code (Grama et al. section 2.7)",
     "(ts + tw*m + th)*(c(cols) + c(rows)), rows = 2^floor(d/2), cols = 2^ceil(d/2)",
     kGrayMeshNeeds, "(ts + tw m) log p", "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh(q, broadcast_mesh_cost); },
    [](const Comm& c, const Args& a) { broadcast_mesh(c, a.out, a.root, Grid::gray_code(c.p())); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_tree_work};

}  // namespace hypercomm::detail
