// All-reduce by split messages: Grama et al. section 4.7 (all-reduce = reduce-scatter +
// all-gather). The vector is cut into p blocks by Blocks(m, elem_size, p) (uneven when the
// element count is not a multiple of p; some blocks may be empty); VP k reduces block k over
// all VPs, straight into out, and the all-gather then spreads the blocks, in place in out.
// The family is chosen by select.cpp, so every VP runs the same pair:
//
//   hypercube (p = 2^d): reduce_scatter_hypercube + all_gather_hypercube
//       T = 2*(ts*log p + tw*m*(p - 1)/p)                             (m divisible by p)
//   ring:  reduce_scatter_ring + all_gather_ring over Ring::all(p)
//       T = 2*(ts*(p - 1) + tw*m*(p - 1)/p)
//       non-commutative: T = 2*ts*(p - 1) + tw*m*(3p - 4)/p
//   mesh:  reduce_scatter_mesh + all_gather_mesh
//       T = 2*(ts*(rows + cols - 2) + tw*m*(p - 1)/p)
//       non-commutative: the reduce-scatter costs as on reduce_scatter_mesh's card
//
// Restrictions: those of the family's algorithms.
//
// in may be out: every reduce-scatter here reads in's own block k only in the combine that
// writes out's block k, and writes nothing else of out, so no copy of in is needed.

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void all_reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, Family f) {
  const int p = c.p();
  const Blocks blocks(out.size(), op.elem_size, p);
  const Bytes mine = blocks.block(out, c.id());
  switch (f) {
    case Family::hypercube:
      reduce_scatter_hypercube(c, in, mine, blocks, op);
      all_gather_hypercube(c, out, blocks);
      break;
    case Family::ring:
      reduce_scatter_ring(c, in, mine, blocks, op);
      all_gather_ring(c, out, blocks, Ring::all(p));
      break;
    case Family::mesh:
      reduce_scatter_mesh(c, in, mine, blocks, op, Grid::of(c.topology()));
      all_gather_mesh(c, out, blocks, Grid::of(c.topology()));
      break;
  }
}

double all_reduce_ring_cost(const CostQuery& q);  // all_reduce_ring.cpp: the ring pair

namespace {
// b = m/p; the hypercube pair's step i moves the aligned 2^i blocks holding block 0 (uneven,
// commutative: B(2^i), the bytes of blocks 0 .. 2^i - 1).
double all_reduce_two_phase_cost(const CostQuery& q) {
  const int p = q.p();
  const Family f = q.family();
  if (f == Family::ring) return all_reduce_ring_cost(q);
  const double block = q.block(q.m(), p), fold = q.reduce_scatter_folds(block);
  const bool even = q.even(q.bytes, p);
  if (f == Family::hypercube && q.shape.commutative) {
    const Blocks b = q.blocks(q.bytes, p);
    double s = 0;
    for (int i = 0; i < q.d(); ++i) {
      const double bytes = q.selection ? block * (1 << i) : static_cast<double>(b.offset(1 << i));
      s += q.ts() + q.tw() * bytes + q.th() * q.t.distance(0, 1 << i);
    }
    return 2 * s + fold;
  }
  if (f == Family::hypercube && even)
    return 2 * (q.d() * q.ts() + q.tw() * block * (p - 1) + q.dimension_hops()) + fold;
  if (f == Family::mesh && even && q.shape.commutative)
    return 2 * ((q.ts() + q.mesh_th()) * (q.t.rows() + q.t.cols() - 2) + q.tw() * block * (p - 1)) +
           fold;
  return kNoClosedForm;
}
}  // namespace

extern const AlgorithmCard all_reduce_two_phase_card{
    {Collective::all_reduce, Algo::two_phase,
     "Grama et al., section 4.7.3: reduce-scatter, then all-gather",
     "hypercube 2*(ts*log p + tw*b*(p-1) + th*H), b = m/p (uneven, commutative: 2*sum_i "
     "(ts + tw*B(2^i) + th*hops(2^i)), B(j) = bytes of blocks 0..j-1); ring as all_reduce "
     "ring; mesh 2*((ts + th)*(rows+cols-2) + tw*b*(p-1)); otherwise no closed form",
     kFamilyNeeds, "about 2 (ts log p + tw m)"},
    needs_family,
    all_reduce_two_phase_cost,
    [](const Comm& c, const Args& a) { all_reduce_two_phase(c, a.in, a.out, *a.op, a.family); },
    family_counts_hops};

}  // namespace hypercomm::detail
