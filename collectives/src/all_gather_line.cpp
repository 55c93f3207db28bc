// All-gather on a linear array, neighbours only: the line gather of every VP's block into the
// middle VP c = floor((p-1)/2), then the line broadcast of all p blocks from it (Grama et al.,
// section 4.2 on a linear array needs the ring's wraparound for its p-1 steps of m; without it
// the blocks meet in the middle).
//
//   T = G_line(c, m) + B_line(c, p*m)        (m = one block; see gather and broadcast, linear
//                                             array)
//
// Restrictions: VP i and i+1 neighbours for i < p-1 (or routed links).
#include "card.hpp"
#include "rooted.hpp"
#include "rooted_util.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

void all_gather_line(const Comm& c, Bytes buf, const Blocks& blocks) {
  const int p = c.p(), middle = (p - 1) / 2;
  // Every VP's own block is in place in buf; the middle gathers the others around its own.
  ring_gather_parts(c, Ring::all(p), middle, blocks, blocks.block(ConstBytes(buf), c.id()), buf,
                    RingArms::line(p, middle));
  broadcast_arms(c, buf, middle, Ring::all(p), RingArms::line(p, middle));
}

double all_gather_line_cost(const CostQuery& q) {
  const int middle = (q.p() - 1) / 2;
  return q.line_gather(middle, q.m()) + q.line_broadcast(middle, q.m() * q.p());
}

// Uneven blocks: the gather of the blocks into the middle, then the broadcast of all of them.
double all_gatherv_line_cost(const CostQuery& q) {
  const int middle = (q.p() - 1) / 2;
  return q.line_gatherv(middle) + q.line_broadcast(middle, q.all_bytes());
}

}  // namespace

extern const AlgorithmCard all_gather_line_card{
    {Collective::all_gather, Algo::ring,
     "Grama et al., section 4.2 on a linear array: gather into the middle VP, then broadcast",
     "c = floor((p-1)/2): the line gather of blocks of m into c plus the line broadcast of p*m "
     "from c (see gather and broadcast / ring (linear array))",
     kLineNeeds, "(ts + tw m)(p - 1) (ring)", "linear array"},
    needs_line,
    all_gather_line_cost,
    [](const Comm& c, const Args& a) { all_gather_line(c, a.out, *a.blocks); },
    line_counts_hops};

extern const AlgorithmCard all_gatherv_line_card{
    {Collective::all_gatherv, Algo::ring,
     "Grama et al., section 4.2 on a linear array with uneven blocks: gather into the middle VP, "
     "then broadcast",
     "c = floor((p-1)/2): gatherv / ring (linear array) into c plus the line broadcast of all the "
     "blocks from c",
     kLineNeeds, "(ts + tw m)(p - 1) (ring)", "linear array"},
    needs_line,
    all_gatherv_line_cost,
    [](const Comm& c, const Args& a) { all_gather_line(c, a.out, *a.blocks); }};

}  // namespace hypercomm::detail
