// One-to-all personalized communication (scatter) on a ring, neighbours only: Grama et al.,
// section 4.4 on a ring, in the lecture's two-way form. The root sends each half of the ring
// all its blocks in one message, the longer (up) arm first; every VP on an arm keeps its own
// block and passes the rest on to the next VP outward.
//
//   a = floor(p/2) VPs on the up arm, b = floor((p-1)/2) on the down arm, m = one block:
//   p even: T = a*ts + tw*m*a(a+1)/2                 (both arms' far ends receive then)
//   p odd:  T = (a+1)*ts + tw*m*(a + a(a+1)/2)       (the down arm, which starts one send late)
//
// The up arm's far end waits for sends of a, a-1, ..., 1 blocks; the down arm's for the root's
// first send (a blocks) and then b, b-1, ..., 1 blocks. The book's ts*log p + tw*m*(p-1) needs
// routed links; this form trades tw for neighbour-only messages. Blocks are numbered relative to
// the root, (id - root) mod p; a range that wraps past VP p-1 is packed at the root.
// Restrictions: VP i and i+1 mod p are neighbours (or routed links). For p = 8, root 0:
//
//   step 1: 0 -> 1 [1,2,3,4]
//   step 2: 1 -> 2 [2,3,4],  0 -> 7 [5,6,7]
//   step 3: 2 -> 3 [3,4],    7 -> 6 [5,6]
//   step 4: 3 -> 4 [4],      6 -> 5 [5]
//
// When VPs outnumber cores, a scatter of equal blocks may instead be a meeting in shared memory
// (Port::meet_rooted, as the hypercube's): the root leaves blocks up to 256 B there, and every VP
// takes its own as soon as they are; larger ones (32 KiB in all or more) each VP copies straight
// from the root's in. The arms' steps play on the model clocks and the links (ring_out_to,
// ring_out_from, ring_out_parts). A scatterv meets so too, whatever its blocks' sizes
// (blocks_meeting.hpp), each message the blocks from its receiver to the arm's far end
// (ring_out_sent_bytes).
#include "blocks_meeting.hpp"
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"

namespace hypercomm::detail {

namespace {
// Rounds::sent_bytes of the arms from the root: the root sends the relative blocks 1 .. a up in
// round 0 and p - b .. p - 1 down in round 1, up member v the blocks v + 1 .. a, down member v
// the blocks p - b .. v - 1 (a = floor(p/2), b = floor((p-1)/2)).
std::size_t ring_out_sent_bytes(const void* member, int id, int round, int p) noexcept {
  const auto& [in, out, blocks, root] = *static_cast<const BlocksMember*>(member);
  const int v = relative_rank(id, root, p), a = p / 2, b = (p - 1) / 2;
  if (v == 0)
    return round == 0 ? blocks->relative_bytes(root, 1, a + 1)
                      : blocks->relative_bytes(root, p - b, p);
  return v <= a ? blocks->relative_bytes(root, v + 1, a + 1)
                : blocks->relative_bytes(root, p - b, v);
}
}  // namespace

void scatter_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                  bool line) {
  const int p = c.p();
  const Ring ring = Ring::all(p);
  if (!line && whole_group_ring(c, ring) && c.is_call(Collective::scatterv)) {
    Port::Rounds rounds = ring_out_rounds(p, 0, root);
    rounds.sent_bytes = ring_out_sent_bytes;
    if (meet_rooted_blocks(c, rounds, Port::Flow::from_root, in, out, blocks)) return;
  }
  if (!line && whole_group_ring(c, ring) && c.is_call(Collective::scatter) && blocks.all_equal()) {
    if (c.meet_rooted(ring_out_rounds(p, blocks.size(0), root, ring_out_parts),
                      Port::Flow::from_root, in, out, Port::Results::per_vp))
      return;
  }
  ring_scatter_parts(c, ring, root, blocks, in, out,
                     line ? RingArms::line(p, root) : RingArms::balanced(p));
}

namespace {
double scatter_ring_cost(const CostQuery& q) {
  return q.ring_scatter(q.p(), q.m(), q.ring_th(), q.ring_arms());
}
// Selection: the capped arms. textbook_time_v: the up arm's far end receives after the sum
// over its members u = 1..a of their message (the blocks from u to the far end) and its hops;
// the down arm's message leaves after the up arm's, then the same sum over its own members
// (equal counts included). Relative rank v is member (root + v) mod p.
double scatterv_ring_cost(const CostQuery& q) {
  if (q.selection) return q.capped_ring_scatter(q.p(), q.m());
  const int p = q.p(), r = q.root(), a = p / 2, b = (p - 1) / 2;
  const auto hop = [&](int from, int to) {
    return q.th() == 0 ? 0.0 : q.th() * q.t.distance((r + from) % p, (r + to) % p);
  };
  double up = 0, down = a > 0 ? q.w(q.rank_bytes(r + 1, a)) : 0.0;
  for (int u = 1; u <= a; ++u) up += q.w(q.rank_bytes(r + u, a - u + 1)) + hop(u - 1, u);
  for (int v = p - 1; v >= p - b; --v)
    down += q.w(q.rank_bytes(r + p - b, v - (p - b) + 1)) + hop((v + 1) % p, v);
  return b == 0 ? up : std::max(up, down);
}
void run(const Comm& c, const Args& a) { scatter_ring(c, a.in, a.out, *a.blocks, a.root); }
}  // namespace

extern const AlgorithmCard scatter_ring_card{
    {Collective::scatter, Algo::ring,
     "Grama et al., section 4.4 on a ring: one message per direction, each VP keeps its block",
     "S(p, m): p even a*(ts + th) + tw*m*a(a+1)/2, p odd (a+1)*ts + a*th + tw*m*(a + "
     "a(a+1)/2), a = floor(p/2)",
     kRingNeeds, "ts log p + tw m (p - 1)"},
    needs_ring,
    scatter_ring_cost,
    run,
    ring_counts_hops};

extern const AlgorithmCard scatterv_ring_card{
    {Collective::scatterv, Algo::ring,
     "Grama et al., section 4.4 on a ring with uneven blocks: one message per direction, each "
     "VP keeps its block",
     "uneven: the longer arm: the up arm's members v = 1..a (a = floor(p/2)) receive after "
     "the sum over u <= v of (ts + tw*B(u..a) + th*hops); the down arm's after ts + "
     "tw*B(1..a) and the same sum over its own members; equal blocks of m: S(p, m)",
     kRingNeeds, "ts log p + tw m (p - 1)"},
    needs_ring,
    scatterv_ring_cost,
    run};

}  // namespace hypercomm::detail
