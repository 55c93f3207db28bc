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

#include "symmetric.hpp"

namespace hypercomm::detail {

void all_reduce_hypercube(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const int my_id = c.id();
  const int d = log2_of(c.p());
  // result := my_msg, but step 0 reads in itself rather than a copy of it in out: one pass
  // less over a large vector. in is out, or apart from it (the front end sees to that).
  ConstBytes result = in;
  Buffer msg(out.size());
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    c.sendrecv(partner, result, msg);
    if (partner < my_id) {
      op(out.data(), msg.data(), result.data(), out.size());
    } else {
      op(out.data(), result.data(), msg.data(), out.size());
    }
    result = out;
  }
}

}  // namespace hypercomm::detail
