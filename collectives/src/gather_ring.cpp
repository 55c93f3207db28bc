// All-to-one personalized communication (gather) on a ring, neighbours only: the two-way ring
// scatter reversed. Each arm's far end sends its block toward the root; every VP on an arm
// adds its own block to what it received and passes the lot on; the root places both arms'
// blocks and its own into out in id order.
//
//   T = a*ts + tw*m*a(a+1)/2        (a = floor(p/2), the longer arm; m = one block)
//
// The arms run at the same time and the root's two receives overlap, so the longer arm sets
// the time: its far end's message of 1 block, then 2, ..., a blocks into the root. Blocks are
// numbered relative to the root, (id - root) mod p; a range that wraps past VP p-1 is received
// into a temporary at the root and unpacked, any other straight into out.
// Restrictions: VP i and i+1 mod p are neighbours (or routed links). For p = 8, root 0:
//
//   step 1: 4 -> 3 [4],       5 -> 6 [5]
//   step 2: 3 -> 2 [3,4],     6 -> 7 [5,6]
//   step 3: 2 -> 1 [2,3,4],   7 -> 0 [5,6,7]
//   step 4: 1 -> 0 [1,2,3,4]
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

void gather_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                 bool line) {
  const int p = c.p();
  ring_gather_parts(c, Ring::all(p), root, blocks, in, out,
                    line ? RingArms::line(p, root) : RingArms::balanced(p));
}

namespace {
double gather_ring_cost(const CostQuery& q) { return q.ring_gather(q.p(), q.m(), q.ring_th()); }
// Selection: the capped arms. textbook_time_v: the longer arm, each the sum over its members,
// from the far end in, of their message (the blocks from them to the far end) and its hops
// (equal counts included). Relative rank v is member (root + v) mod p; the up arm is v = 1..a,
// a = floor(p/2), the down arm v = p-1 .. p-b, b = floor((p-1)/2).
double gatherv_ring_cost(const CostQuery& q) {
  if (q.selection) return q.capped_ring_gather(q.p(), q.m());
  const int p = q.p(), r = q.root(), a = p / 2, b = (p - 1) / 2;
  const auto hop = [&](int from, int to) {
    return q.th() == 0 ? 0.0 : q.th() * q.t.distance((r + from) % p, (r + to) % p);
  };
  double up = 0, down = 0;
  for (int v = 1; v <= a; ++v) up += q.w(q.rank_bytes(r + v, a - v + 1)) + hop(v, v - 1);
  for (int v = p - b; v < p; ++v)
    down += q.w(q.rank_bytes(r + p - b, v - (p - b) + 1)) + hop(v, v + 1);
  return std::max(up, down);
}
void run(const Comm& c, const Args& a) { gather_ring(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard gather_ring_card{
    {Collective::gather, Algo::ring, "Grama et al., section 4.4 on a ring: both directions",
     "G(p, m) = a*(ts + th) + tw*m*a(a+1)/2, a = floor(p/2)", kRingNeeds,
     "ts log p + tw m (p - 1)"},
    needs_ring,
    gather_ring_cost,
    run,
    ring_counts_hops};

extern const AlgorithmCard gatherv_ring_card{
    {Collective::gatherv, Algo::ring,
     "Grama et al., section 4.4 on a ring with uneven blocks: both directions",
     "uneven: the longer of the two arms, each the sum over its members v from the root's "
     "neighbour to the far end e of (ts + tw*B(v..e) + th*hops); equal blocks of m: G(p, m)",
     kRingNeeds, "ts log p + tw m (p - 1)"},
    needs_ring,
    gatherv_ring_cost,
    run};

}  // namespace hypercomm::detail
