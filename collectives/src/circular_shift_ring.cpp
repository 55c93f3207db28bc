// Circular q-shift on a ring (Grama et al. 4.6): the message steps one neighbour at a time the
// shorter way round, every VP passing on what it received in the step before.
//
//   T = (ts + tw*m) * min(q, p - q)
//
// Restrictions: neighbours only; any p. Ties (q = p/2) go up, the +1 direction, as routes do.
//
// p = 8, q = 3: three steps up; after step s, VP i holds the message of VP i - s.
// q = 6: two steps down (6 = 8 - 2); after step s, VP i holds the message of VP i + s.
//
// The same routine shifts along a mesh row or column (a Ring).

#include <vector>

#include "card.hpp"
#include "exchange.hpp"
#include "exchange_util.hpp"

namespace hypercomm::detail {

void ring_shift(const Comm& c, const Ring& g, ConstBytes in, Bytes out, int shift) {
  const int n = g.size;
  const int steps = shift <= n - shift ? shift : n - shift;
  if (steps == 0) {  // shift 0: the message stays
    copy_bytes(out, in);
    return;
  }
  const int my_rank = g.rank_of(c.id());
  const bool up = steps == shift;
  const int next = up ? g.right(my_rank) : g.left(my_rank);
  const int prev = up ? g.left(my_rank) : g.right(my_rank);

  // Messages in transit alternate between two buffers; the last step lands in out.
  Buffer buffers[2];
  if (steps > 1) {
    buffers[0].resize(in.size());
    buffers[1].resize(in.size());
  }
  ConstBytes msg = in;
  for (int step = 1; step <= steps; ++step) {
    const Bytes incoming = step == steps ? out : Bytes(buffers[step % 2]);
    c.sendrecv(next, msg, prev, incoming);
    msg = incoming;
  }
}

void circular_shift_ring(const Comm& c, ConstBytes in, Bytes out, int shift) {
  ring_shift(c, Ring::all(c.p()), in, out, shift);
}

namespace {
double circular_shift_ring_cost(const CostQuery& q) {
  const int s = q.shift();
  return std::min(s, q.p() - s) * (q.w(q.m()) + q.ring_th());
}
}  // namespace

extern const AlgorithmCard circular_shift_ring_card{
    {Collective::circular_shift, Algo::ring,
     "Grama et al., section 4.6: min(q, p-q) neighbour steps", "(ts + tw*m + th)*min(q, p-q)",
     kRingNeeds, "(ts + tw m) min(q, p - q)"},
    needs_ring,
    circular_shift_ring_cost,
    [](const Comm& c, const Args& a) { circular_shift_ring(c, a.in, a.out, a.root); },
    ring_counts_hops};

}  // namespace hypercomm::detail
