// All-reduce on a rows x cols mesh: an all-reduce along each row, then along each column (the
// mesh form of Grama et al. 4.6 with a combine in place of the union). The row phase folds ids
// r*cols .. r*cols + cols - 1 in order and the column phase folds the row results in row order,
// so a non-commutative operator gets x0 op x1 op ... op x(p-1). Every member of a line folds
// the line's vectors as x0 op (x1 op (... op x(n-1))), so that every VP gets the same bits
// (floating point, user operators); an exact operator (Reducer::exact: integers) folds them as
// they come (below), which gives the same bits in any order.
//
// Each phase is an all-reduce over a ring of n members (n = cols, then rows) with the pattern of
// the all-to-all broadcast (section 4.3: messages that do not grow): the members' whole vectors
// go round the ring (Algorithm 4.4) and each member folds them in id order:
//
//   T = (ts + tw*m) * (n - 1) a phase,  T = (ts + tw*m) * (rows + cols - 2)
//
// A phase of one member costs nothing. (Until 2026-11-25 a phase switched by a size threshold of
// its own to a reduce-scatter and all-gather along the line, a choice hidden from the table; the
// split-message form is the two_phase card's, and automatic never preferred the per-line split
// to it, so it is gone.)
//
// Restrictions: a mesh topology (any rows x cols, 1 x n included); neighbours only.
//
// Gather-and-fold, member 1 of n = 4 (x0..x3): the vectors arrive from the left in the order
// x0, x3, x2. x0 is kept; high := x3 -> x2 x3 (prepend, above me); result := x1 op (x2 x3);
// result := x0 op (x1 (x2 x3)). An exact operator: result := x0 x1 as x0 comes, then
// result := (x0 x1) op (x2 x3).
//
// in may be out.

#include <utility>
#include <vector>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {
namespace {

// The whole vectors travel right round the ring: those of lower rank arrive first (my_rank-1,
// ..., 0), then those of higher rank (n-1, ..., my_rank+1), which each member prepends to `high`;
// then result := x(my_rank) op high. Folded as x0 op (x1 op (... op x(n-1))) on every member
// (the same bits everywhere), the lower ones are kept until then and prepended last (member k
// keeps k, member n-1 none: it prepends them as they come); with an exact operator every member
// prepends them to its result as they come, keeping none (the same bits in any order).
void gather_and_fold(const Comm& c, Bytes result, const Ring& g, const Reducer& op) {
  const int n = g.size;
  const int my_rank = g.rank_of(c.id());
  const int left = g.left(my_rank);
  const int right = g.right(my_rank);
  const std::size_t m = result.size();
  const auto kept = static_cast<std::size_t>(op.exact || my_rank == n - 1 ? 0 : my_rank);
  Buffer lower(kept * m);  // x(my_rank-1), ..., x0, in the order they come
  Buffer first_buffer(m);
  Buffer second_buffer(m);
  Buffer high;  // x(j) op (... op x(n-1)) for the higher ranks j come so far
  bool has_high = false;
  Bytes incoming = first_buffer;
  Bytes spare = second_buffer;
  ConstBytes msg = result;  // what goes right this step: my vector, then the last one received
  for (int i = 1; i < n; ++i) {
    const int source = (my_rank - i + n) % n;
    const bool keep = source < my_rank && kept != 0;
    const Bytes into =
        keep ? Bytes(lower).subspan(static_cast<std::size_t>(i - 1) * m, m) : incoming;
    c.sendrecv_to_combine(right, msg, left, into);
    if (source < my_rank && !keep) {
      op(result.data(), into.data(), result.data(), m);  // prepended as they come
    } else if (source > my_rank && !has_high) {
      high.assign(into.begin(), into.end());
      has_high = true;
    } else if (source > my_rank) {
      op(high.data(), into.data(), high.data(), m);
    }
    msg = into;
    if (!keep) std::swap(incoming, spare);
  }
  if (has_high) op(result.data(), result.data(), high.data(), m);
  for (std::size_t j = 0; j < kept; ++j) op(result.data(), lower.data() + j * m, result.data(), m);
}

}  // namespace

void all_reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, const Grid& grid) {
  copy_bytes(out, in);  // a no-op when in is out
  for (const Ring& line : {grid.row(c.id()), grid.column(c.id())})
    if (line.size > 1) gather_and_fold(c, out, line, op);
}

namespace {
// Every column's members finish their row phase together, so the phases add; each VP folds n-1
// whole vectors a phase.
double all_reduce_mesh_cost(const CostQuery& q) {
  return (q.t.rows() + q.t.cols() - 2) * (q.w(q.m()) + q.mesh_th() + q.tc * q.m());
}
}  // namespace

extern const AlgorithmCard all_reduce_mesh_card{
    {Collective::all_reduce, Algo::mesh,
     "Grama et al., section 4.3 on a mesh: all-reduce along the row, then the column, each "
     "gathering the whole vectors (Algorithm 4.4) and folding them",
     "(ts + tw*m + th)*(rows + cols - 2)", kMeshNeeds, nullptr},
    needs_mesh,
    all_reduce_mesh_cost,
    [](const Comm& c, const Args& a) {
      all_reduce_mesh(c, a.in, a.out, *a.op, Grid::of(c.topology()));
    },
    mesh_counts_hops};

// The same on the torus embedded in a hypercube by the reflected Gray code (Grama et al. section
// 2.7, Grid::gray_code): every message one link; it folds in Gray-code order.
extern const AlgorithmCard all_reduce_mesh_gray_card{
    {Collective::all_reduce, Algo::mesh,
     "Grama et al., section 4.3 on a mesh (row, then column) on the torus embedded in the "
     "hypercube by the reflected Gray code (section 2.7)",
     "(ts + tw*m + th)*(rows + cols - 2), rows = 2^floor(d/2), cols = 2^ceil(d/2)",
     kGrayMeshCommutativeNeeds, nullptr, "Gray-code mesh"},
    needs_gray_mesh,
    [](const CostQuery& q) { return on_gray_mesh_folding(q, all_reduce_mesh_cost); },
    [](const Comm& c, const Args& a) {
      all_reduce_mesh(c, a.in, a.out, *a.op, Grid::for_fold(c.p(), a.op->commutative));
    },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/false,
    /*needs_gray_ring_group=*/false,
    /*work=*/nullptr,
    /*id_order_when_routed=*/true};

}  // namespace hypercomm::detail
