// All-to-one reduction on a hypercube: Grama et al., Algorithm 4.3, on root-relative virtual ids
// (my_virtual_id = my_id XOR root, as Algorithm 4.2 does for the broadcast).
//
//   T = (ts + tw*m) * log p        (m = in.size() bytes; the combine is not charged)
//
// Restrictions: p = 2^d; partners are hypercube neighbours. Any associative operator: at step i
// the receiver holds the fold of one aligned 2^i-subcube of REAL ids and the partner the fold of
// the other half of their aligned 2^(i+1)-subcube (XOR with root maps aligned subcubes onto
// aligned subcubes). The half whose real ids have bit i clear is all lower ids, so it goes on the
// left; the receiver's real bit i equals root's bit i. For p = 8, root 0:
//
//   i = 0:  1 -> 0, 3 -> 2, 5 -> 4, 7 -> 6   (sum of {0,1}, {2,3}, {4,5}, {6,7})
//   i = 1:  2 -> 0, 6 -> 4                   (sum of {0..3}, {4..7})
//   i = 2:  4 -> 0                           (sum of {0..7} at the root)
//
// When VPs outnumber cores a small reduction may instead be a meeting in shared memory
// (Port::meet_rooted): every VP leaves its input there and goes on, the root folds them as these
// rounds do (the tree of aligned blocks of real ids, lower on the left: fold_butterfly_tree), and
// the model clocks, counts and links are these rounds' (tree_up_to, tree_up_from).
#include <vector>

#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op, int root) {
  const int d = log2_of(c.p());
  const int my_id = c.id();
  const int my_virtual_id = my_id ^ root;
  const std::size_t m = in.size();
  if (c.is_call(Collective::reduce) && m <= Port::kPipelinedBytes &&
      c.meet_rooted({d, m, tree_up_to, tree_up_from, nullptr, root}, Port::Flow::to_root, in, out,
                    Port::Results::shared, fold_butterfly_tree, &op))
    return;

  // sum: the fold so far. It starts as this VP's own input; the first combine moves it to the
  // root's out or to a temporary (VPs with an odd virtual id send before receiving anything).
  Buffer sum_storage;
  Buffer msg;
  Bytes sum = out;
  if (my_virtual_id != 0 && (my_virtual_id & 1) == 0) {
    sum_storage.resize(m);
    sum = sum_storage;
  }
  if ((my_virtual_id & 1) == 0) msg.resize(m);
  ConstBytes partial = in;

  int mask = 0;
  for (int i = 0; i < d; ++i) {
    const int bit = 1 << i;
    if ((my_virtual_id & mask) == 0) {  // lower i bits are zero: still taking part
      const int partner = (my_virtual_id ^ bit) ^ root;
      if ((my_virtual_id & bit) != 0) {
        c.send(partner, partial);
        return;  // this VP's subcube is folded into the partner's
      }
      // sum = partial op msg when the own half holds the lower ids, else msg op partial; folded
      // as the message lands (Comm::recv_fold).
      c.recv_fold(partner, msg, op, sum, partial, (my_id & bit) != 0);
      partial = sum;
    }
    mask ^= bit;  // set bit i
  }
  // Only the root (virtual id 0) gets here; p >= 2, so partial already is out.
}

namespace {
double reduce_hypercube_cost(const CostQuery& q) {
  return q.d() * (q.w(q.m()) + q.landing_tc() * q.m()) + q.dimension_hops();
}
}  // namespace

extern const AlgorithmCard reduce_hypercube_card{
    {Collective::reduce, Algo::hypercube, "Grama et al., Algorithm 4.3 (any root via id XOR root)",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    reduce_hypercube_cost,
    [](const Comm& c, const Args& a) { reduce_hypercube(c, a.in, a.out, *a.op, a.root); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/reduce_tree_work};

}  // namespace hypercomm::detail
