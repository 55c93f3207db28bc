// All-reduce on a hypercube by the butterfly: Grama et al., Algorithm 4.7 with a combine in
// place of the union (Algorithm 4.9 without the prefix), section 4.3.
//
//   T = (ts + tw*m) * log p            (m = bytes of the vector)
//
// Restrictions: p = 2^d; partners are hypercube neighbours (my_id XOR 2^i).
//
// Step i (0..d-1): exchange the whole vector with partner := my_id XOR 2^i and combine, the
// lower id's value on the left. After step i a VP holds the fold over the 2^(i+1) VPs of its
// (i+1)-dimensional subcube, a contiguous id range folded in order, so a non-commutative
// operator gets x0 op x1 op ... op x(p-1); both partners compute the same combine, so every VP
// ends with the same bits. p = 8, VP 5 (101):
//
//   step 0: partner 4   result := x4 op x5
//   step 1: partner 7   result := (x4 x5) op (x6 x7)
//   step 2: partner 1   result := (x0 .. x3) op (x4 .. x7)
//
// in may be out.
//
// When VPs outnumber cores a small vector may instead be reduced in one meeting in shared
// memory (Port::meet): the same rounds on the model clocks and the links, and the same result
// bit for bit, since the last VP to arrive folds the inputs in the butterfly's tree.

#include <array>
#include <cstring>

#include "card.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

// The butterfly's tree, folded by one VP: after step i every VP holds the fold of its aligned
// block of 2^(i+1) ids, (left half) op (right half). Walked as a binary counter over the ids:
// pending[l] is the finished left block of 2^l ids waiting for its right neighbour.
void fold_butterfly_tree(const void* context, std::span<const void* const> inputs, Bytes result,
                         Bytes scratch) {
  const Reducer& op = *static_cast<const Reducer*>(context);
  const std::size_t m = result.size();
  const auto p = inputs.size();
  if (m == 0) return;
  std::byte* carry = result.data();  // the block being built; the last one is the result
  std::array<const std::byte*, 32> pending{};
  for (std::size_t j = 1; j < p; j += 2) {
    // Leaves j-1 and j, then every finished left block that this pair completes.
    op(carry, static_cast<const std::byte*>(inputs[j - 1]),
       static_cast<const std::byte*>(inputs[j]), m);
    std::size_t level = 1;
    for (std::size_t count = (j + 1) / 2; (count & 1) == 0; count /= 2, ++level)
      op(carry, pending[level], carry, m);
    if (j + 1 == p) return;
    std::byte* keep = scratch.data() + (level - 1) * m;
    std::memcpy(keep, carry, m);
    pending[level] = keep;
  }
}

void all_reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  if (in.size() <= kMeetingBytes && c.meet({d, in.size(), butterfly_partner, butterfly_partner},
                                           in.data(), fold_butterfly_tree, &op, out))
    return;
  // result := my_msg, but step 0 reads in itself rather than a copy of it in out: one pass
  // less over a large vector. in is out, or apart from it (the front end sees to that).
  ConstBytes result = in;
  Buffer msg(out.size());
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    c.sendrecv_to_combine(partner, result, msg);
    if (partner < my_id) {
      op(out.data(), msg.data(), result.data(), out.size());
    } else {
      op(out.data(), result.data(), msg.data(), out.size());
    }
    result = out;
  }
}

namespace {
// Selection also weighs the congestion of the XOR exchanges mapped onto a ring or mesh.
double all_reduce_hypercube_cost(const CostQuery& q) {
  double cost = q.dimension_hops();
  for (int k = 0; k < q.d(); ++k) cost += q.w(q.m() * q.congestion(1 << k)) + q.tc * q.m();
  return cost;
}
}  // namespace

extern const AlgorithmCard all_reduce_hypercube_card{
    {Collective::all_reduce, Algo::hypercube,
     "Grama et al., section 4.3: butterfly (Algorithm 4.7 with a combine)",
     "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    needs_hypercube,
    all_reduce_hypercube_cost,
    [](const Comm& c, const Args& a) { all_reduce_hypercube(c, a.in, a.out, *a.op); }};

}  // namespace hypercomm::detail
