// Barrier on a ring, neighbours only: p - 1 rounds of zero-byte messages to the right, the ring
// all-to-all broadcast (Grama et al., Algorithm 4.4) with empty messages.
//
//   T = ts * (p - 1)
//
// Restrictions: neighbours only (send to my_id+1, receive from my_id-1, mod p); any p.
//
// After round i a VP has heard from my_id - i .. my_id: its left neighbour sent its round-i
// message only after its own round i-1, when it had heard from my_id - i .. my_id - 1. After
// p - 1 rounds every VP has heard from all p, each of which sent only after entering.
//
// Why not the token-and-release scheme: a token 0 -> 1 -> ... -> p-1 tells VP p-1 at
// (p-1)*ts that all entered, and releasing the others both ways adds floor(p/2)*ts more;
// gathering to VP 0 along both arms and releasing both ways costs about p*ts, since VP 0 pays
// ts for each of its two release messages. Information moves one hop per ts in a direction
// every VP keeps sending in, so with neighbours only p - 1 rounds is the least of these.

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void ring_barrier(const Comm& c, const Ring& g) {
  const int my_rank = g.rank_of(c.id());
  const int right = g.right(my_rank);
  const int left = g.left(my_rank);
  for (int round = 1; round < g.size; ++round) {
    c.sendrecv(right, ConstBytes{}, left, Bytes{});
  }
}

void barrier_ring(const Comm& c) { ring_barrier(c, Ring::all(c.p())); }

namespace {
double barrier_ring_cost(const CostQuery& q) { return (q.p() - 1) * (q.ts() + q.ring_th()); }
}  // namespace

extern const AlgorithmCard barrier_ring_card{
    {Collective::barrier, Algo::ring, "ring barrier, p-1 rounds", "(ts + th)*(p-1)", kRingNeeds,
     nullptr},
    needs_ring,
    barrier_ring_cost,
    [](const Comm& c, const Args&) { barrier_ring(c); },
    ring_counts_hops};

}  // namespace hypercomm::detail
