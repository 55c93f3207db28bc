// Reduction by splitting the message: Grama et al., section 4.7.2 (reduce = reduce-scatter +
// gather). in is cut into p blocks (Blocks(m, elem_size, p)); the reduce-scatter leaves block i
// of the result at VP i, and the gather collects the blocks, in id order, into the root's out.
//
//   T = T(reduce-scatter) + T(gather), each on blocks of b = m/p bytes (m = in.size() bytes;
//   the combines are not charged):
//   hypercube: T = T(reduce_scatter_hypercube) + ts*log p + tw*b*(p-1)
//              commutative op: T = 2 * (ts*log p + tw*b*(p-1))         ~ 2 (ts log p + tw m)
//   ring:      T = T(reduce_scatter_ring) + G(p, b)
//   mesh:      T = T(reduce_scatter_mesh) + G(rows, b) + G(cols, rows*b)
//   G(n, b) = a*ts + tw*b*a(a+1)/2, a = floor(n/2) (gather_ring's card); the reduce-scatter's
//   cost depends on whether op is commutative (see its card). The sums were checked against the
//   model for std::plus on rings 5-9, meshes 2x3, 3x3, 4x4 and cubes d = 3, 4.
//
// Any associative operator: the reduce-scatter keeps the id order of the fold (symmetric.hpp),
// the gather only moves blocks. The family (select.cpp) decides the pair: hypercube ->
// reduce_scatter_hypercube + gather_hypercube (p = 2^d), ring -> reduce_scatter_ring +
// gather_ring, mesh -> reduce_scatter_mesh + gather_mesh. Their restrictions hold.
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void reduce_two_phase(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root,
                      Family f) {
  const Blocks blocks(in.size(), op.elem_size, c.p());
  // This VP's block of the result. A temporary everywhere: out may be empty off the root, and
  // at the root in may overlap out, which the reduce-scatter still reads.
  Buffer own(blocks.size(c.id()));
  switch (f) {
    case Family::hypercube:
      reduce_scatter_hypercube(c, in, own, blocks, op);
      gather_hypercube(c, own, out, blocks, root);
      break;
    case Family::ring:
      reduce_scatter_ring(c, in, own, blocks, op);
      gather_ring(c, own, out, blocks, root);
      break;
    case Family::mesh:
      reduce_scatter_mesh(c, in, own, blocks, op, Grid::of(c.topology()));
      gather_mesh(c, own, out, blocks, root);
      break;
  }
}

namespace {
// b = m/p; each VP folds its own block once for each other VP. A non-commutative operator on
// the ring or mesh pair, or uneven blocks: no closed form.
double reduce_two_phase_cost(const CostQuery& q) {
  const int p = q.p();
  const double block = q.block(q.m(), p);
  const Family f = q.family();
  if (!q.even(q.bytes, p) || (!q.shape.commutative && f != Family::hypercube)) return kNoClosedForm;
  const double fold = q.reduce_scatter_folds(block);
  switch (f) {
    case Family::hypercube:
      return 2 * (q.d() * q.ts() + q.tw() * block * (p - 1) + q.dimension_hops()) + fold;
    case Family::ring:
      return (p - 1) * (q.w(block) + q.ring_th()) + q.ring_gather(p, block, q.ring_th()) + fold;
    case Family::mesh: {
      const int rows = q.t.rows(), cols = q.t.cols();
      return (q.ts() + q.mesh_th()) * (rows + cols - 2) + q.tw() * block * (p - 1) +
             q.ring_gather(rows, block, q.mesh_th()) +
             q.ring_gather(cols, rows * block, q.mesh_th()) + fold;
    }
  }
  return kNoClosedForm;
}
// The reduce-scatter: every VP receives and folds p-1 blocks' worth, in as many messages as the
// all-gather's; the gather: as the broadcast's scatter (broadcast_two_phase.cpp).
double reduce_two_phase_work(const CostQuery& q) {
  return q.message_work() * (q.all_gather_messages() + q.p() - 1) + q.tw() * q.m() * (q.p() - 1) +
         q.p() * q.reduce_scatter_folds(q.m() / q.p()) + q.tw() * q.scatter_bytes();
}
}  // namespace

extern const AlgorithmCard reduce_two_phase_card{
    {Collective::reduce, Algo::two_phase,
     "Grama et al., section 4.7.2: reduce-scatter, then gather",
     "b = m/p: hypercube 2*(ts*log p + tw*b*(p-1) + th*H); ring (p-1)*(ts + tw*b + th) + "
     "G(p, b); mesh (ts + th)*(rows+cols-2) + tw*b*(p-1) + G(rows, b) + G(cols, rows*b); "
     "non-commutative (ring, mesh) or uneven blocks: no closed form",
     kFamilyNeeds, "about 2 (ts log p + tw m)"},
    needs_family,
    reduce_two_phase_cost,
    [](const Comm& c, const Args& a) { reduce_two_phase(c, a.in, a.out, *a.op, a.root, a.family); },
    family_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_two_phase_work};

}  // namespace hypercomm::detail
