// All-reduce as the book first builds it: an all-to-one reduction (Algorithm 4.3) into VP 0,
// then a one-to-all broadcast (Algorithm 4.1) of the result (Grama et al., section 4.3: "a
// simple method ... is to perform an all-to-one reduction followed by a one-to-all broadcast").
//
//   T = 2 * (ts + tw*m) * log p        (2 log p steps; the butterfly needs log p)
//
// Restrictions: as its two halves: p = 2^d, partners i XOR 2^k neighbours (a hypercube, 1 or 2 VPs,
// a 2 x 2 mesh) or Links::routed.
// Never cheaper than the butterfly (all_reduce_hypercube.cpp), so automatic does not pick it; it
// is here as the book's baseline, to be asked for by name. On a ring of any p, where automatic
// does pick it for small vectors, the ring's own trees: all_reduce_reduce_broadcast_ring.cpp.
#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

void all_reduce_reduce_broadcast(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  Buffer own;  // in may be out (the in-place all-reduce): the reduction reads in after writing out
  if (in.data() == out.data()) own.assign(in.begin(), in.end()), in = own;
  reduce_hypercube(c, in, out, op, 0);
  broadcast_hypercube(c, out, 0);
}

double all_reduce_reduce_broadcast_cost(const CostQuery& q) {
  return 2 * (q.d() * q.w(q.m()) + q.dimension_hops()) + q.d() * q.landing_tc() * q.m();
}

}  // namespace

extern const AlgorithmCard all_reduce_reduce_broadcast_card{
    {Collective::all_reduce, Algo::reduce_broadcast,
     "Grama et al., section 4.3: all-to-one reduction (Algorithm 4.3), then one-to-all "
     "broadcast (Algorithm 4.1)",
     "2*((ts + tw*m)*log p + th*H)", kHypercubeNeeds, "2 (ts + tw m) log p"},
    needs_hypercube,
    all_reduce_reduce_broadcast_cost,
    [](const Comm& c, const Args& a) { all_reduce_reduce_broadcast(c, a.in, a.out, *a.op); }};

}  // namespace hypercomm::detail
