// All-reduce on a ring: a ring reduce-scatter (Grama et al., Algorithm 4.5) followed by a ring
// all-gather (Algorithm 4.4) over the p blocks of the vector (section 4.7's split-message form):
//
//   commutative:     T = 2*(ts*(p - 1) + tw*m*(p - 1)/p)         (m = bytes, m divisible by p)
//   non-commutative: T = 2*ts*(p - 1) + tw*m*(3p - 4)/p           (reduce-scatter in order)
//
// Restrictions: neighbours only (the reduce-scatter sends left, the all-gather right); any p.
//
// The vector is split by Blocks(m, elem_size, p): block k has n/p elements, one more for
// k < n mod p, so the blocks may be uneven and some may be empty (then the steps that carry
// them cost ts only). p = 4, n = 6 elements: blocks of 2 2 1 1 elements.
//
//   reduce-scatter: VP k gets block k folded over VPs 0..p-1, straight into out's block k
//   all-gather:     every VP gets every block, straight into place
//
// in may be out: the reduce-scatter reads in's block k only in its last combine, which writes
// out's block k.

#include "card.hpp"
#include "symmetric.hpp"
#include "symmetric_util.hpp"

namespace hypercomm::detail {

void all_reduce_ring(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, const Ring& g) {
  const Blocks blocks(out.size(), op.elem_size, c.p());
  // Member rank_of(id) reduces the block of its VP (its slot is its id).
  reduce_scatter_ring_group(c, in, blocks.block(out, c.id()), blocks, g, op);
  all_gather_ring(c, out, blocks, g);
}

// Algorithm 4.5 then 4.4: the largest block goes all the way round twice. Routed over a mesh or
// hypercube with th > 0 (routes of different lengths), or non-commutative with uneven blocks or
// th > 0: no closed form.
double all_reduce_ring_cost(const CostQuery& q) {
  const int p = q.p();
  const double block = q.block(q.m(), p), fold = q.tc * block * (p - 1);
  if (q.ring_th() != q.th()) return kNoClosedForm;
  if (q.shape.commutative) return 2 * (p - 1) * (q.w(block) + q.th()) + fold;
  if (q.even(q.bytes, p) && q.th() == 0)
    return 2 * q.ts() * (p - 1) + q.tw() * block * (3 * p - 4) + fold;
  return kNoClosedForm;
}

extern const AlgorithmCard all_reduce_ring_card{
    {Collective::all_reduce, Algo::ring,
     "Grama et al., section 4.7.3 on a ring: Algorithm 4.5, then Algorithm 4.4",
     "2*(p-1)*(ts + tw*b_p + th); non-commutative: 2*ts*(p-1) + tw*b_p*(3p-4) (th = 0, "
     "even blocks; otherwise no closed form)",
     kRingNeeds, nullptr},
    needs_ring,
    all_reduce_ring_cost,
    [](const Comm& c, const Args& a) { all_reduce_ring(c, a.in, a.out, *a.op, Ring::all(c.p())); }};

// The same on the ring of a hypercube in reflected Gray-code order (Grama et al. section 2.7):
// every message one link; the partials fold in ring order, so a commutative operator only.
extern const AlgorithmCard all_reduce_ring_gray_card{
    {Collective::all_reduce, Algo::ring,
     "Grama et al., section 4.7.3 on the ring embedded in the hypercube by the reflected Gray "
     "code (section 2.7): Algorithm 4.5, then Algorithm 4.4",
     "2*(p-1)*(ts + tw*b_p + th)", kGrayRingCommutativeNeeds, nullptr, "Gray-code ring"},
    needs_gray_ring,
    [](const CostQuery& q) { return all_reduce_ring_cost(on_gray_ring(q)); },
    [](const Comm& c, const Args& a) {
      all_reduce_ring(c, a.in, a.out, *a.op, Ring::gray_code(c.p()));
    },
    nullptr,
    false};

}  // namespace hypercomm::detail
