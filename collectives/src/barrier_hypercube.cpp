// Barrier by butterfly on a hypercube: the all-to-all broadcast pattern (Grama et al.,
// Algorithm 4.7) with zero-byte messages.
//
//   T = ts * log p
//
// Restrictions: p = 2^d; neighbours only (partner = my_id XOR 2^i).
//
// After round i a VP has heard, directly or through its partners, from every VP of its
// (i+1)-dimensional subcube, each of which sent only after entering the barrier; after d rounds
// that is the whole machine. p = 8, VP 0: round 0 with 1 ({0,1} entered), round 1 with 2
// ({0..3}), round 2 with 4 ({0..7}).
//
// When VPs outnumber cores the runtime may hold the barrier as one meeting in shared memory
// instead (Port::meet): the same rounds on the model clocks and the links, one switch per VP.

#include "card.hpp"
#include "exchange.hpp"

namespace hypercomm::detail {

void barrier_hypercube(const Comm& c) {
  const int d = log2_of(c.p());
  if (c.meet({d, 0, butterfly_partner, butterfly_partner})) return;
  const int my_id = c.id();
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    c.sendrecv(partner, ConstBytes{}, Bytes{});
  }
}

namespace {
double barrier_hypercube_cost(const CostQuery& q) { return q.d() * q.ts() + q.dimension_hops(); }
}  // namespace

extern const AlgorithmCard barrier_hypercube_card{
    {Collective::barrier, Algo::hypercube, "butterfly: log p zero-byte exchanges (Algorithm 4.7)",
     "ts*log p + th*H", kHypercubeNeeds, nullptr},
    needs_hypercube,
    barrier_hypercube_cost,
    [](const Comm& c, const Args&) { barrier_hypercube(c); }};

}  // namespace hypercomm::detail
