// All-to-all personalized by pairwise exchange (Grama et al., Algorithm 4.10).
//
//   T = (ts + tw*m) * (p - 1)      (+ th*hops of each step's route; m = bytes per block)
//
// Restrictions: p = 2^d; routed links (partners are up to d hops apart: every message is
// E-cube routed). On a hypercube E-cube routing of the pairing my_id XOR i is contention-free,
// so each of the p - 1 steps costs one message time. With p = 2 the one partner is a neighbour.
//
// Step i pairs my_id with my_id XOR i; each sends the other its block and receives its own.
// p = 8, the partner of each VP per step:
//
//   step i  | VP 0 1 2 3 4 5 6 7
//   --------+-------------------
//   1       |    1 0 3 2 5 4 7 6
//   2       |    2 3 0 1 6 7 4 5
//   3       |    3 2 1 0 7 6 5 4
//   ...     |
//   7       |    7 6 5 4 3 2 1 0

#include "exchange.hpp"

namespace hypercomm::detail {

void all_to_all_pairwise(const Comm& c, ConstBytes in, Bytes out, std::size_t block) {
  const int p = c.p();
  const int my_id = c.id();
  const auto block_of = [block](auto buf, int k) {
    return buf.subspan(static_cast<std::size_t>(k) * block, block);
  };

  // M[my_id, my_id] stays here.
  copy_bytes(block_of(out, my_id), block_of(in, my_id));

  for (int i = 1; i < p; ++i) {
    const int partner = my_id ^ i;
    // Send M[my_id, partner]; receive M[partner, my_id] straight into its place in out.
    c.sendrecv(partner, block_of(in, partner), block_of(out, partner));
  }
}

}  // namespace hypercomm::detail
