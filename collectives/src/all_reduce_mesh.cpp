// All-reduce on a rows x cols mesh: an all-reduce along each row, then along each column (the
// mesh form of Grama et al. 4.6 with a combine in place of the union). The row phase folds ids
// r*cols .. r*cols + cols - 1 in order and the column phase folds the row results in row order,
// so a non-commutative operator gets x0 op x1 op ... op x(p-1).
//
// Each phase is an all-reduce over a ring of n members (n = cols, then rows), by one of two ring
// algorithms, chosen from m (bytes) and n only, so that every VP agrees:
//
//   gather-and-fold (m*(n - 2) <= n*10000, so always for n = 2): the members' whole vectors go
//     round the ring (Algorithm 4.4) and each member folds them in id order:
//       T = (ts + tw*m) * (n - 1)
//   split (m*(n - 2) > n*10000): ring reduce-scatter + ring all-gather of n blocks (Algorithms
//     4.5 + 4.4, as all_reduce_ring):
//       commutative:     T = 2*(ts*(n - 1) + tw*m*(n - 1)/n)      (m divisible by n)
//       non-commutative: T = 2*ts*(n - 1) + tw*m*(3n - 4)/n
//
//   T = T_phase(cols) + T_phase(rows); small m: T = (ts + tw*m) * (rows + cols - 2)
//
// The split form sends less (about 2m instead of n*m per member) but twice the messages; it wins
// once tw*m*(n - 2)/n > ts, and 10000 bytes is ts/tw of select.cpp's reference machine (1 us
// per message, 10 GB/s). A phase of one member costs nothing.
//
// Restrictions: a mesh topology (any rows x cols, 1 x n included); neighbours only.
//
// Gather-and-fold, member 1 of n = 4 (x0..x3): the vectors arrive from the left in the order
// x0, x3, x2. result := x1 -> x0 x1 (prepend, below me); high := x3 -> x2 x3 (prepend, above
// me); result := (x0 x1) op (x2 x3).
//
// in may be out.

#include <utility>
#include <vector>

#include "card.hpp"
#include "symmetric.hpp"
#include "symmetric_util.hpp"

namespace hypercomm::detail {
namespace {

// ts/tw of select.cpp's reference machine (1 us per message, 10 GB/s), in bytes: the split form
// wins once tw*m*(n - 2)/n > ts.
constexpr std::size_t kLatencyBytes = 10'000;

// The whole vectors travel right round the ring; each member prepends those of lower rank
// (they arrive in order my_rank-1, ..., 0) to its result and those of higher rank (they arrive
// n-1, ..., my_rank+1) to `high`.
void gather_and_fold(const Comm& c, Bytes result, const Ring& g, const Reducer& op) {
  const int n = g.size;
  const int my_rank = g.rank_of(c.id());
  const int left = g.left(my_rank);
  const int right = g.right(my_rank);
  const std::size_t m = result.size();
  Buffer first_buffer(m);
  Buffer second_buffer(m);
  Buffer high;  // x(my_rank+1) op ... op x(n-1), once the first has arrived
  bool has_high = false;
  Bytes incoming = first_buffer;
  Bytes spare = second_buffer;
  ConstBytes msg = result;  // what goes right this step: my vector, then the last one received
  // result is sent at step 1 before anything is folded into it (send copies the message).
  for (int i = 1; i < n; ++i) {
    const int source = (my_rank - i + n) % n;
    c.sendrecv(right, msg, left, incoming);
    if (source < my_rank) {
      op(result.data(), incoming.data(), result.data(), m);
    } else if (!has_high) {
      high.assign(incoming.begin(), incoming.end());
      has_high = true;
    } else {
      op(high.data(), incoming.data(), high.data(), m);
    }
    msg = incoming;
    std::swap(incoming, spare);
  }
  if (has_high) op(result.data(), result.data(), high.data(), m);
}

// Ring reduce-scatter then ring all-gather of n blocks of result, in place.
void reduce_scatter_all_gather(const Comm& c, Bytes result, const Ring& g, const Reducer& op) {
  const Blocks blocks(result.size(), op.elem_size, g.size);
  const int my_rank = g.rank_of(c.id());
  reduce_scatter_ring_group(c, result, blocks.block(result, my_rank), blocks, g, op);
  all_gather_ring(c, result, blocks, g);
}

void all_reduce_group(const Comm& c, Bytes result, const Ring& g, const Reducer& op) {
  if (g.size == 1) return;
  const auto n = static_cast<std::size_t>(g.size);
  if (result.size() * (n - 2) > n * kLatencyBytes) {  // never for n = 2
    reduce_scatter_all_gather(c, result, g, op);
  } else {
    gather_and_fold(c, result, g, op);
  }
}

}  // namespace

void all_reduce_mesh(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const Topology& t = c.topology();
  copy_bytes(out, in);  // a no-op when in is out
  all_reduce_group(c, out, row_group(t, c.id()), op);
  all_reduce_group(c, out, column_group(t, c.id()), op);
}

namespace {
// Each phase over n members: gather-and-fold (n-1 whole vectors) when m*(n-2) <= n*10000, else
// Algorithm 4.5 then 4.4 along the line (all_reduce_ring's formula for n members). Every
// column's members finish their row phase together, so the phases add.
double all_reduce_mesh_cost(const CostQuery& q) {
  double total = 0;
  for (const int n : {q.t.cols(), q.t.rows()}) {
    if (n == 1) continue;
    if (q.deciding_bytes() * static_cast<std::size_t>(n - 2) <=
        static_cast<std::size_t>(n) * kLatencyBytes) {
      total += (n - 1) * (q.w(q.m()) + q.mesh_th() + q.tc * q.m());
      continue;
    }
    const double block = q.block(q.m(), n), fold = q.tc * block * (n - 1);
    if (q.shape.commutative)
      total += 2 * (n - 1) * (q.w(block) + q.mesh_th()) + fold;
    else if (q.even(q.bytes, n) && q.mesh_th() == 0)
      total += 2 * q.ts() * (n - 1) + q.tw() * block * (3 * n - 4) + fold;
    else
      return kNoClosedForm;
  }
  return total;
}
}  // namespace

extern const AlgorithmCard all_reduce_mesh_card{
    {Collective::all_reduce, Algo::mesh,
     "Grama et al., section 4.3 on a mesh: all-reduce along the row, then the column",
     "sum over the phases n = cols, n = rows (n >= 2): (ts + tw*m + th)*(n-1) when "
     "m*(n-2) <= 10000*n, else 2*(n-1)*(ts + tw*b_n + th) (non-commutative: 2*ts*(n-1) + "
     "tw*b_n*(3n-4), th = 0, even blocks; otherwise no closed form)",
     kMeshNeeds, nullptr},
    needs_mesh,
    all_reduce_mesh_cost,
    [](const Comm& c, const Args& a) { all_reduce_mesh(c, a.in, a.out, *a.op); },
    mesh_counts_hops};

}  // namespace hypercomm::detail
