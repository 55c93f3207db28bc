// All-reduce on a linear array, neighbours only: the line reduction into the middle VP
// c = floor((p-1)/2), then the line broadcast from it (Grama et al., section 4.3: reduction
// followed by broadcast, on the linear array of section 4.1.1). The middle halves both arms.
//
//   T = max(c, p-1-c)*(ts + tw*m + th) + max(L*(ts + tw*m + th), (S+1)*(ts + tw*m) + S*th)
//       (L = p-1-c, S = c; the second term L*(ts + tw*m + th) when S = 0)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

// The reduction into the middle, then its broadcast (barrier_line.cpp runs it on no data).
void all_reduce_line(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const int p = c.p(), middle = (p - 1) / 2;
  // in may be out (the in-place all-reduce): reduce_arms reads a VP's in before the root writes
  // its out, and writes no other VP's out; the broadcast writes them after.
  reduce_arms(c, in, out, op, middle, Ring::all(p), RingArms::line(p, middle));
  broadcast_arms(c, out, middle, Ring::all(p), RingArms::line(p, middle));
}

double all_reduce_line_cost(const CostQuery& q) {
  const int middle = (q.p() - 1) / 2;
  return q.line_reduce(middle, q.m()) + q.line_broadcast(middle, q.m());
}

extern const AlgorithmCard all_reduce_line_card{
    {Collective::all_reduce, Algo::ring,
     "Grama et al., section 4.3 on a linear array: reduction into the middle VP, then broadcast",
     "c = floor((p-1)/2): max(c, p-1-c)*(ts + tw*m + th) + the line broadcast from c (see "
     "broadcast / ring (linear array))",
     kLineNeeds, "2 (ts + tw m) log p (routed)", "linear array"},
    needs_line,
    all_reduce_line_cost,
    [](const Comm& c, const Args& a) { all_reduce_line(c, a.in, a.out, *a.op); },
    line_counts_hops};

}  // namespace hypercomm::detail
