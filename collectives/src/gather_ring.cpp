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
//
// When VPs outnumber cores, a gather of equal blocks may instead be a meeting in shared memory
// (Port::meet_rooted, as the hypercube's): blocks up to 256 B, or whose p blocks fit in the
// slot's wide inputs (32 KiB, a group's 16 KiB), are left there and laid in place by the root,
// larger ones (32 KiB in all or more) each VP copies straight into the root's out. The arms' steps
// play on the model clocks and the links (ring_in_to, ring_in_from, ring_in_parts). A gatherv meets
// so too, whatever its blocks' sizes (blocks_meeting.hpp), each arm member's message the blocks
// from it to the arm's far end (ring_in_sent_bytes).
#include "blocks_meeting.hpp"
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {
// Rounds::sent_bytes of the arms toward the root: up member v sends the relative blocks v .. a,
// down member v the relative blocks p - b .. v (a = floor(p/2), b = floor((p-1)/2)).
std::size_t ring_in_sent_bytes(const void* member, int id, int /*round*/, int p) noexcept {
  const auto& [in, out, blocks, root] = *static_cast<const BlocksMember*>(member);
  const int v = relative_rank(id, root, p), a = p / 2, b = (p - 1) / 2;
  if (v == 0) return 0;
  return v <= a ? blocks->relative_bytes(root, v, a + 1)
                : blocks->relative_bytes(root, p - b, v + 1);
}
}  // namespace

void gather_ring(const Comm& c, ConstBytes in, Bytes out, const Blocks& blocks, int root,
                 bool line) {
  const int p = c.p();
  const Ring ring = Ring::all(p);
  if (!line && whole_group_ring(c, ring) && c.is_call(Collective::gatherv)) {
    Port::Rounds rounds = ring_in_rounds(p, 0, root);
    rounds.sent_bytes = ring_in_sent_bytes;
    if (meet_rooted_blocks(c, rounds, Port::Flow::to_root, in, out, blocks)) return;
  }
  if (!line && whole_group_ring(c, ring) && c.is_call(Collective::gather) && blocks.all_equal()) {
    const Port::Rounds rounds = ring_in_rounds(p, blocks.size(0), root, ring_in_parts);
    if (blocks.size(0) <= Port::kPipelinedBytes
            ? c.meet_rooted(rounds, Port::Flow::to_root, in, out, Port::Results::shared,
                            concatenate)
            : c.meet_rooted(rounds, Port::Flow::to_root, in, out, Port::Results::per_vp))
      return;
  }
  ring_gather_parts(c, ring, root, blocks, in, out,
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
