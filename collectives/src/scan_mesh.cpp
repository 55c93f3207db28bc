// Prefix sums on a rows x cols torus, neighbours only (after Grama et al. section 4.3, Alg. 4.9,
// mapped onto the mesh the way 4.6 maps all-to-all broadcast: rows, then a column, then rows).
//
//   1. Row chains:   VP (r, c) receives the prefix of its row's VPs left of it from (r, c-1),
//                    adds its own value and passes it on to (r, c+1); (r, cols-1) ends up with
//                    the row total T_r.
//   2. Last column:  (r, cols-1) receives E_r = T_0 + ... + T_{r-1} from (r-1, cols-1) and passes
//                    E_r + T_r down.
//   3. Row broadcast of E_r from (r, cols-1) (two-way ring broadcast along the row).
//   4. VP (r, c) = E_r + (its row prefix): the fold over ids 0..r*cols+c in id order, so
//      non-commutative operators are exact.
//
// T = (ts + tw*m) * ((cols - 1) + (rows - 1) + ceil(cols / 2))  (the three phases in turn).
// Restrictions: a mesh topology; any rows x cols.
//
// On a mesh without wraparound (neighbours only) step 3 is a line broadcast from the row's end,
// one arm of cols - 1 members: T = (ts + tw*m + th) * ((cols - 1) + (rows - 1) + (cols - 1)).
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void scan_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, bool exclusive,
               bool open) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  const int my_row = t.row_of(c.id()), my_col = t.col_of(c.id());
  const std::size_t m = in.size();

  // 1. Row chain.
  Buffer row_before(m);                      // fold of the VPs left of me in my row
  Buffer row_through(in.begin(), in.end());  // ... and me
  if (my_col > 0) {
    c.recv_to_combine(t.id_at(my_row, my_col - 1), row_before);
    op(row_through.data(), row_before.data(), in.data(), m);
  }
  if (my_col < cols - 1) c.send(t.id_at(my_row, my_col + 1), row_through);

  // 2. The last column carries the totals of the rows above.
  Buffer rows_above(m);  // E_r
  const int last = t.id_at(my_row, cols - 1);
  if (my_col == cols - 1) {
    if (my_row > 0) c.recv_to_combine(t.id_at(my_row - 1, cols - 1), rows_above);
    if (my_row < rows - 1) {
      Buffer down(row_through);
      if (my_row > 0) op(down.data(), rows_above.data(), row_through.data(), m);
      c.send(t.id_at(my_row + 1, cols - 1), down);
    }
  }

  // 3. Every row but the first learns E_r from its last VP.
  if (my_row > 0 && cols > 1) {
    if (open)
      broadcast_arms(c, rows_above, last, row_group(t, c.id()), RingArms::line(cols, cols - 1));
    else
      broadcast_ring(c, rows_above, last, row_group(t, c.id()));
  }

  // 4. Combine in id order: rows above, then my row's prefix.
  if (!exclusive) {
    if (my_row > 0)
      op(out.data(), rows_above.data(), row_through.data(), m);
    else
      copy_bytes(out, row_through);
  } else if (my_row > 0 && my_col > 0) {
    op(out.data(), rows_above.data(), row_before.data(), m);
  } else if (my_row > 0) {
    copy_bytes(out, rows_above);
  } else if (my_col > 0) {
    copy_bytes(out, row_before);
  }  // VP 0's out is left untouched
}

namespace {
// Row chains, the last column's chain, then (rows > 1) a ring broadcast along each row.
double scan_mesh_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  return (rows + cols - 2) * (q.w(q.m()) + q.mesh_th()) +
         (rows > 1 ? q.ring_broadcast(cols, q.m(), q.mesh_th(), q.mesh_arms()) : 0);
}
// Open: the row broadcast is one arm of cols - 1 members.
double scan_mesh_open_cost(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  return (rows + cols - 2 + (rows > 1 ? cols - 1 : 0)) * (q.w(q.m()) + q.th());
}
// The row chains' rows*(cols-1) messages, the last column's rows-1 and the row broadcasts'
// rows*(cols-1), each VP folding twice (AlgorithmCard::work).
double scan_mesh_work(const CostQuery& q) {
  const int rows = q.t.rows(), cols = q.t.cols();
  const double messages = 2.0 * rows * (cols - 1) + (rows - 1);
  return messages * (q.message_work() + q.tw() * q.m()) + 2 * q.p() * q.tc * q.m();
}
}  // namespace

extern const AlgorithmCard scan_mesh_card{
    {Collective::scan, Algo::mesh,
     "Algorithm 4.9 mapped on a mesh: row chains, the last column's chain, row broadcasts",
     "(ts + tw*m + th)*(rows+cols-2) + (rows > 1: (ts + tw*m)*c(cols) + th*floor(cols/2))",
     kMeshNeeds, nullptr},
    needs_mesh,
    scan_mesh_cost,
    [](const Comm& c, const Args& a) { scan_mesh(c, a.in, a.out, *a.op, false); },
    mesh_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_mesh_work};

extern const AlgorithmCard exscan_mesh_card{
    {Collective::exscan, Algo::mesh, "Algorithm 4.9 mapped on a mesh (exclusive)",
     "(ts + tw*m + th)*(rows+cols-2) + (rows > 1: (ts + tw*m)*c(cols) + th*floor(cols/2))",
     kMeshNeeds, nullptr},
    needs_mesh,
    scan_mesh_cost,
    [](const Comm& c, const Args& a) { scan_mesh(c, a.in, a.out, *a.op, true); },
    mesh_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_mesh_work};

// On a mesh without wraparound: the same with a line broadcast from each row's end.
extern const AlgorithmCard scan_mesh_open_card{
    {Collective::scan, Algo::mesh,
     "Algorithm 4.9 mapped on a mesh without wraparound: row chains, the last column's chain, "
     "line broadcasts from the rows' ends",
     "(ts + tw*m + th)*(rows+cols-2 + (rows > 1: cols-1))", kOpenMeshNeeds, nullptr, "open mesh"},
    needs_open_mesh,
    scan_mesh_open_cost,
    [](const Comm& c, const Args& a) { scan_mesh(c, a.in, a.out, *a.op, false, true); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_mesh_work};

extern const AlgorithmCard exscan_mesh_open_card{
    {Collective::exscan, Algo::mesh,
     "Algorithm 4.9 mapped on a mesh without wraparound (exclusive)",
     "(ts + tw*m + th)*(rows+cols-2 + (rows > 1: cols-1))", kOpenMeshNeeds, nullptr, "open mesh"},
    needs_open_mesh,
    scan_mesh_open_cost,
    [](const Comm& c, const Args& a) { scan_mesh(c, a.in, a.out, *a.op, true, true); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/scan_mesh_work};

}  // namespace hypercomm::detail
